// pipelines/detect: canonical change records in, alerts, episodes, postures and outgoing events
// out. It reads what the graph and aggregates pipelines build, so it consumes each record only
// once both of them have committed it (Bus `after`). A failed batch is reported by the bus and
// retried from the same offset: alerts are keyed by detector, subject and window and evidence is
// appended only when it changed, so a redelivered batch adds nothing. A periodic sweep marks
// silent feeds degraded and evaluates again the subjects whose windows have closed since
// (schedule.ts).
import { every } from '../../platform/periodic.ts';
import type { AggregateStore } from '../../platform/aggregates/port.ts';
import { withSnapshotCache } from '../../platform/aggregates/snapshot-cache.ts';
import type { Bus, Consumer } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import type { GraphStore } from '../../platform/graph/port.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { recordingStages } from '../change-stages.ts';
import { AGGREGATES, DETECT, GRAPH } from '../groups.ts';
import { DEFAULT_SILENCE, familiesSeen, sweepCoverage, type Arrival, type SilenceThresholds } from './coverage.ts';
import type { EpisodePolicy } from './episodes.ts';
import type { AnyDetector } from '../../services/detection/framework/detector.ts';
import { DETECTOR_LIBRARY } from '../../services/detection/library.ts';
import { enqueueEvents } from '../../services/webhooks/outgoing-events.ts';
import { sweepConformance } from '../../services/conformance/drift.ts';
import { limitHeapGrowth } from './node-options.ts';
import { DetectionRunner } from './run.ts';
import { dueForSchedule } from './schedule.ts';
import { subjectsOf, type SubjectWork } from '../../services/detection/subjects.ts';

const SWEEP_INTERVAL_MS = 30_000;
// Scheduled evaluations (schedule.ts) per tenant per sweep: the oldest first, the rest next time.
const SCHEDULED_PER_SWEEP = 2_000;
// The detect entry of an imported event: consumed, and deliberately not judged (decision 0058).
const HISTORICAL_DETAIL = { evaluated: false, reason: 'historical_import' };

export interface DetectPipelineOptions {
  bus: Bus;
  pool: Pool;
  graph: GraphStore;
  aggregates: AggregateStore;
  clock: Clock;
  library?: readonly AnyDetector[];
  episodes?: EpisodePolicy;
  silence?: SilenceThresholds;
  // Activity rows kept between batches (withSnapshotCache; 0: none).
  cachedRows?: number;
  onError?: (error: unknown) => void;
}

export interface DetectPipeline {
  consumer: Consumer;
  // Marks silent feeds degraded and runs the evaluations due on schedule, now (the pipeline also
  // does both every 30 s).
  sweep: () => Promise<void>;
  stop: () => Promise<void>;
}

export async function startDetectPipeline(options: DetectPipelineOptions): Promise<DetectPipeline> {
  limitHeapGrowth();
  const runner = new DetectionRunner({
    pool: options.pool,
    graph: options.graph,
    // Subjects' recent activity is kept between batches (an active subject is evaluated in batch
    // after batch), and only what was recorded since is read.
    aggregates: withSnapshotCache(options.aggregates, options.cachedRows),
    clock: options.clock,
    library: options.library ?? DETECTOR_LIBRARY,
    ...(options.episodes ? { episodes: options.episodes } : {}),
    ...(options.silence ? { silence: options.silence } : {}),
  });
  const handle = async (all: CanonicalChange[]) => {
    // A historical import's facts are context (the stores above have taken them in), not
    // triggers: a backfill raises no alerts, webhooks or postures of its own and says nothing of a
    // live feed's health. The first live facts are judged with them in their windows; a backtest
    // judges the history itself (decision 0058).
    const changes = all.filter((c) => c.historical !== true);
    const arrivals: Arrival[] = changes.map((c) => ({ tenantId: c.tenant_id, family: c.object, receivedAt: new Date(c.received_at), occurredAt: new Date(c.occurred_at) }));
    const tenants = [...new Set(changes.map((c) => c.tenant_id))];
    const seen = await familiesSeen(options.pool, tenants);
    // The batch's own arrivals count as seen: the first movements of a tenant are judged.
    for (const a of arrivals) seen.get(a.tenantId)?.add(a.family);
    await runner.run(subjectsOf(changes), arrivals, seen);
  };
  const consumer = await options.bus.consume({
    ...DETECT,
    after: [GRAPH.group, AGGREGATES.group],
    handle: recordingStages({ pool: options.pool, stage: DETECT.group, clock: options.clock, detailOf: (c) => (c.historical === true ? HISTORICAL_DETAIL : null) }, handle),
  });
  const sweep = async () => {
    const now = options.clock.now();
    await withTransaction(options.pool, async (db) => {
      const events = [...(await sweepCoverage(db, now, options.silence ?? DEFAULT_SILENCE)), ...(await sweepConformance(db, now))];
      await enqueueEvents(db, events, now);
    });
    const due = await dueForSchedule(options.pool, SCHEDULED_PER_SWEEP, runner.recorded);
    const tenants = [...new Set(due.map((w) => w.tenantId))];
    const seen = await familiesSeen(options.pool, tenants);
    for (const tenantId of tenants) await runScheduled(tenantId, due.filter((w) => w.tenantId === tenantId), seen);
  };
  // A tenant at a time, so that one whose evaluation fails (a ruleset that no longer compiles, a
  // detector throwing on one subject) keeps no other tenant from its schedule; within the tenant,
  // its subjects are then judged one by one, so only those that fail wait for the next sweep.
  const runScheduled = async (tenantId: string, work: SubjectWork[], seen: Map<string, Set<string>>) => {
    try {
      await runner.run(work, [], seen);
      return;
    } catch (error) {
      if (work.length === 1) return options.onError?.(error);
    }
    let failed = 0;
    let first: unknown;
    for (const item of work) {
      try {
        await runner.run([item], [], seen);
      } catch (error) {
        failed += 1;
        first ??= error;
      }
    }
    if (failed > 0) options.onError?.(new Error(`${failed} of ${work.length} subjects of tenant ${tenantId} due for scheduled evaluation could not be evaluated`, { cause: first }));
  };
  const sweeping = every(SWEEP_INTERVAL_MS, sweep, options.onError);
  return {
    consumer,
    sweep,
    stop: async () => {
      await sweeping.stop();
      await consumer.stop();
    },
  };
}

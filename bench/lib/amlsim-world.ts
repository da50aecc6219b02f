// An AMLSim data set taken in by a fresh service (API, canonical, graph and aggregates pipelines on
// its own embedded PostgreSQL; no detection pipeline: the learned model is judged by replay), with
// its labels and, per account, the instants a detector would judge it at. Used by the model
// evaluation (eval-model.ts) and the default model's training script (train-default-model.ts).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { PostgresAggregateStore } from '../../platform/aggregates/postgres.ts';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { PostgresGraphStore } from '../../platform/graph/postgres/store.ts';
import type { DetectionStores } from '../../services/detection/framework/context.ts';
import { AGGREGATES, CANONICAL, GRAPH } from '../../pipelines/groups.ts';
import { accountItem, accountKey, loadDataset, movementItem, partyItem } from './amlsim.ts';
import { batchesOf, ingestBatches, startPipeline } from './batches.ts';
import { startService, type BenchService } from './bench-service.ts';
import { embeddedConnection, stopLeftoverPostgres } from './embedded-pg.ts';
import type { Log, Teardown } from './teardown.ts';

const DAY_MS = 86_400_000;
const DRAIN_TIMEOUT_MS = 3_600_000;
const BATCH = 250;

export interface AmlsimWorld {
  name: string;
  dir: string;
  service: BenchService;
  pool: pg.Pool;
  stores: DetectionStores;
  // Account external id → labelled fraud.
  labels: Map<string, boolean>;
  // Account external id → the instant of its last movement on each day it had one, in time order:
  // where the pipeline, which judges an account at the latest movement of each batch touching it,
  // would judge it at least once a day.
  instants: Map<string, Date[]>;
  movements: number;
}

async function drained(bus: PostgresLogBus, log: Log): Promise<void> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  let lastLog = performance.now();
  for (;;) {
    let behind = 0;
    for (const spec of [CANONICAL, GRAPH, AGGREGATES]) behind += (await bus.lag(spec.group, spec.topics, { upTo: 1 })).reduce((sum, p) => sum + p.records, 0);
    if (behind === 0) return;
    if (performance.now() > deadline) throw new Error('pipelines still behind');
    if (performance.now() - lastLog > 30_000) {
      log('waiting for the pipelines');
      lastLog = performance.now();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function labelsOf(dir: string): Promise<Map<string, boolean>> {
  const labels = new Map<string, boolean>();
  for (const line of (await readFile(join(dir, 'nodes.csv'), 'utf8')).split(/\r?\n/).slice(1)) {
    const [node, fraud] = line.split(',');
    if (node) labels.set(accountKey(Number(node)), fraud === '1');
  }
  return labels;
}

export async function startAmlsimWorld(teardown: Teardown, log: Log, dir: string, movementLimit: number): Promise<AmlsimWorld> {
  const name = dir.split('/').filter(Boolean).pop()!;
  const dataset = await loadDataset(dir, movementLimit);
  const service = await startService(teardown, log, { name: `api-${name}` });
  // The teardown removes only the latest data directory; an earlier world's is removed here.
  const dataDir = service.dataDir;
  teardown.closers.push(async () => {
    await stopLeftoverPostgres(join(dataDir, 'pg'), log);
    await rm(dataDir, { recursive: true, force: true });
  });
  const pool = new pg.Pool({ ...(await embeddedConnection(service.dataDir)), max: 10 });
  // The service stops its database at teardown, under this pool's idle connections.
  pool.on('error', () => {});
  teardown.closers.push(() => pool.end());
  for (const pipeline of ['canonical', 'graph', 'aggregates'] as const) await startPipeline(teardown, service, pipeline, `${pipeline}-${name}`);
  const bus = new PostgresLogBus(pool);
  const t0 = performance.now();
  // Small batches on two connections: on a shared machine a large batch can outlast the load
  // library's per-request timeout. Throughput is not what these runs measure.
  await ingestBatches(service, 2, batchesOf(dataset.nodes.flatMap((n) => [partyItem(n), accountItem(n)]), BATCH));
  await drained(bus, log);
  await ingestBatches(service, 2, batchesOf(dataset.transactions.map(movementItem), BATCH));
  await drained(bus, log);
  log(`${name}: ${dataset.nodes.length} accounts and ${dataset.transactions.length} movements taken in in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

  const lastOfDay = new Map<string, Map<number, number>>();
  const note = (node: number, at: number) => {
    const account = accountKey(node);
    let days = lastOfDay.get(account);
    if (!days) lastOfDay.set(account, (days = new Map()));
    const day = Math.floor(at / DAY_MS);
    days.set(day, Math.max(days.get(day) ?? 0, at));
  };
  for (const t of dataset.transactions) {
    note(t.source, t.occurredAtMs);
    note(t.target, t.occurredAtMs);
  }
  const instants = new Map([...lastOfDay].map(([account, days]) => [account, [...days.values()].sort((a, b) => a - b).map((ms) => new Date(ms))]));
  const stores: DetectionStores = { pool, graph: new PostgresGraphStore(pool), aggregates: new PostgresAggregateStore(pool) };
  return { name, dir, service, pool, stores, labels: await labelsOf(dir), instants, movements: dataset.transactions.length };
}

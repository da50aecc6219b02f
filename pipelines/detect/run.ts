// One round of detection: evaluate the subjects a batch touched under the tenant's live ruleset
// (and its shadow ruleset, if any), then commit everything that follows in ONE transaction per
// tenant (shared with the batches that finished evaluating while the previous commit ran): the
// subjects' latest outcomes, alerts and their evidence, episodes, postures, coverage, and the
// outgoing events they cause. Evaluation reads committed data outside the transaction, so the
// tenant's detection lock is held only while writing.
import type { Baseline } from '../../platform/aggregates/port.ts';
import type { Clock } from '../../platform/clock.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { GroupLane } from '../../platform/batching/group-lane.ts';
import { AnalyzeOnGrowth } from '../../platform/postgres/analyze-on-growth.ts';
import { baseAssetOf } from '../../platform/tenants/tenants.ts';
import { recordHits, type HitToRecord, type Mode } from './alerts.ts';
import { noteArrivals, type Arrival, type SilenceThresholds } from './coverage.ts';
import { lockTenantDetection } from '../../services/detection/detection-lock.ts';
import { assignEpisodes, DEFAULT_EPISODE_POLICY, raiseEpisodes, spanEpisodes, type EpisodePolicy } from './episodes.ts';
import { explain } from '../../services/detection/explain.ts';
import { SubjectContext, type DetectionStores } from '../../services/detection/framework/context.ts';
import type { AnyDetector, SubjectKind } from '../../services/detection/framework/detector.ts';
import { evaluateSubject, type Evaluation } from '../../services/detection/framework/evaluate.ts';
import { placeAllLateFacts } from './late-facts.ts';
import type { CompiledRuleset } from '../../services/detection/framework/ruleset.ts';
import { enqueueEvents, type OutgoingEvent } from '../../services/webhooks/outgoing-events.ts';
import { recomputePostures } from '../../services/detection/posture.ts';
import { RulesetCache } from '../../services/detection/rulesets/active.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';

// Subjects evaluated at the same time. The batch's loaders (entities, flagged parties, network
// searches: framework/*-loader.ts) answer the asks of the evaluations in flight with one statement,
// so more in flight means fewer statements (at 8, each served a handful); more than 64 saved
// fewer statements than it added memory (decision 0044). Reads no loader gathers wait for the
// pool's connections.
const EVALUATION_CONCURRENCY = 64;

export interface DetectionDeps extends DetectionStores {
  clock: Clock;
  library: readonly AnyDetector[];
  episodes?: EpisodePolicy;
  // Feed silence thresholds (coverage.ts): an arrival older than its family's is no recovery.
  silence?: SilenceThresholds;
}

// The tables of detection's findings, analysed as they grow from an early, smaller size than the
// stores' (analyze-on-growth.ts): a tenant's first few hundred alerts are enough for a probe the
// planner takes through the wrong index (the tenant's alerts, not the party's) to cost a read of
// each of them for every party mule_network asks about, and autovacuum analyses only once a
// minute (decision 0054).
const FINDINGS_TABLES = ['alerts', 'alert_evidence', 'episodes', 'episode_members'];
const FINDINGS_ANALYZED_FROM_ROWS = 200;

// Outcomes committed in one transaction at most (several batches' worth).
const MAX_OUTCOMES_PER_COMMIT = 5_000;

// A batch's consequences waiting for its tenant's commit, its hits in event-time order.
interface PendingCommit {
  outcomes: SubjectOutcome[];
  arrivals: Arrival[];
  hits: HitToRecord[];
}

export interface SubjectOutcome {
  work: SubjectWork;
  mode: Mode;
  ruleset: CompiledRuleset;
  evaluations: Evaluation[];
  // What recording its hits needs from the subject's context; null without a hit. The context
  // itself (every read it memoised, the snapshot it answered from) is not kept: held until the
  // commit, each batch's reads outlived the young generation, and garbage collection took a
  // third of the detect process's busy time (a fifth without them).
  forHits: HitContext | null;
}

interface HitContext {
  partyId: string | null;
  baseline: Baseline;
  baseAsset: string;
}

export class DetectionRunner {
  private readonly rulesets: RulesetCache;
  private readonly baseAssets = new Map<string, string>();
  private readonly commitLanes = new Map<string, GroupLane<PendingCommit>>();
  // The subject kinds whose latest outcomes are kept (recordedKinds).
  readonly recorded: ReadonlySet<SubjectKind>;
  private readonly policy: EpisodePolicy;
  private readonly findings: AnalyzeOnGrowth;

  constructor(private readonly deps: DetectionDeps) {
    this.findings = new AnalyzeOnGrowth(deps.pool, FINDINGS_TABLES, { minRows: FINDINGS_ANALYZED_FROM_ROWS });
    this.rulesets = new RulesetCache(deps.pool, deps.library);
    this.recorded = recordedKinds(deps.library);
    this.policy = deps.episodes ?? DEFAULT_EPISODE_POLICY;
  }

  // Evaluates the work and commits its consequences; arrivals feed coverage.
  async run(work: SubjectWork[], arrivals: Arrival[], familiesSeen: Map<string, Set<string>>): Promise<void> {
    const outcomes = await this.evaluateAll(work, familiesSeen);
    const tenants = [...new Set([...work.map((w) => w.tenantId), ...arrivals.map((a) => a.tenantId)])].sort();
    for (const tenantId of tenants) {
      await this.commit(
        tenantId,
        outcomes.filter((o) => o.work.tenantId === tenantId),
        arrivals.filter((a) => a.tenantId === tenantId),
      );
    }
  }

  async evaluateAll(work: SubjectWork[], familiesSeen: Map<string, Set<string>>): Promise<SubjectOutcome[]> {
    const outcomes: SubjectOutcome[] = [];
    const items = (await placeAllLateFacts(this.deps, work)).map((placed) => ({ item: placed.work, data: placed.data }));
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const { item, data } = items[next++]!;
        const { live, shadow } = await this.rulesets.forTenant(item.tenantId);
        const seen = familiesSeen.get(item.tenantId) ?? new Set<string>();
        const ctx = new SubjectContext(this.deps, item.tenantId, await this.baseAsset(item.tenantId), item.subject, item.at, item.change, data);
        const rulesets: Array<[Mode, CompiledRuleset]> = shadow ? [['live', live], ['shadow', shadow]] : [['live', live]];
        for (const [mode, ruleset] of rulesets) {
          const evaluations = await evaluateSubject(ctx, ruleset, item.trigger, seen);
          outcomes.push({ work: item, mode, ruleset, evaluations, forHits: await hitContext(ctx, evaluations) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(EVALUATION_CONCURRENCY, items.length) }, worker));
    return outcomes;
  }

  // One commit per tenant at a time in this process, queued before any connection is taken: a
  // commit holding the tenant's lock reads the network for episodes through the same pool, so
  // commits waiting on the lock must not sit on the pool's connections (they would starve it).
  // The advisory lock still orders commits of several detect processes. Batches that finish
  // evaluating while a commit runs are committed together by the next one: under load the lane
  // was busy all the time and each batch waited for it longer than it took to evaluate, paying
  // a transaction's fixed statements (lock, coverage, postures, events, the commit's flush) alone.
  private async commit(tenantId: string, outcomes: SubjectOutcome[], arrivals: Arrival[]): Promise<void> {
    let lane = this.commitLanes.get(tenantId);
    if (!lane) {
      lane = new GroupLane<PendingCommit>((group) => this.commitNow(tenantId, group), { weight: (p) => p.outcomes.length, maxWeight: MAX_OUTCOMES_PER_COMMIT });
      this.commitLanes.set(tenantId, lane);
    }
    // The hits are built from what each evaluation kept (hitContext): nothing is read here, and
    // the lane holds nothing while a batch evaluates.
    return lane.submit({ outcomes, arrivals, hits: this.hitsOf(outcomes) });
  }

  private async commitNow(tenantId: string, group: PendingCommit[]): Promise<void> {
    const outcomes = group.flatMap((p) => p.outcomes);
    const arrivals = group.flatMap((p) => p.arrivals);
    // Each batch's hits are in event-time order; the group's are merged so (stable for ties).
    const hits = group.flatMap((p) => p.hits).sort((a, b) => a.eventAt.getTime() - b.eventAt.getTime());
    const now = this.deps.clock.now();
    const written = await withTransaction(this.deps.pool, async (db) => {
      await lockTenantDetection(db, tenantId);
      const events: OutgoingEvent[] = await noteArrivals(db, arrivals, now, this.deps.silence);
      const judged = await writeEvaluations(db, outcomes.filter((o) => this.recorded.has(o.work.subject.kind)), now);
      const recorded = await recordHits(db, hits, now);
      events.push(...recorded.events);
      const episodes = await assignEpisodes(db, this.deps.graph, recorded.opened, now, this.policy);
      const raised = await raiseEpisodes(db, recorded.raised, now, this.policy);
      await spanEpisodes(db, recorded.extended, now);
      events.push(...episodes.events, ...raised.events);
      const parties = new Set([...episodes.parties, ...raised.parties, ...judged]);
      events.push(...(await recomputePostures(db, tenantId, parties, now)));
      await enqueueEvents(db, events, now);
      // Evidence rows: one per alert opened or updated.
      return recorded.opened.length + recorded.updated;
    });
    this.findings.note(written);
  }

  // In event-time order: a subject evaluated at several instants of a batch has its alerts opened,
  // then updated, in the order the facts happened.
  private hitsOf(outcomes: SubjectOutcome[]): HitToRecord[] {
    const hits: HitToRecord[] = [];
    for (const outcome of [...outcomes].sort((a, b) => a.work.at.getTime() - b.work.at.getTime())) {
      const context = outcome.forHits;
      if (!context) continue;
      for (const { detector, outcome: result } of outcome.evaluations) {
        if (result.outcome !== 'hit') continue;
        hits.push({
          tenantId: outcome.work.tenantId,
          mode: outcome.mode,
          rulesetVersion: outcome.ruleset.version,
          detector,
          subject: outcome.work.subject,
          partyId: context.partyId,
          hit: result,
          explanation: explain(detector, result, context.baseline, context.baseAsset),
          eventAt: outcome.work.at,
        });
      }
    }
    return hits;
  }

  private async baseAsset(tenantId: string): Promise<string> {
    let asset = this.baseAssets.get(tenantId);
    if (!asset) {
      asset = await baseAssetOf(this.deps.pool, tenantId);
      this.baseAssets.set(tenantId, asset);
    }
    return asset;
  }
}

// Read while the context is at hand (both are memoised there: no new read in the usual case).
async function hitContext(ctx: SubjectContext, evaluations: Evaluation[]): Promise<HitContext | null> {
  if (!evaluations.some((e) => e.outcome.outcome === 'hit')) return null;
  return { partyId: await ctx.partyId(), baseline: await ctx.baseline(), baseAsset: ctx.baseAsset };
}

// The subject kinds whose latest outcomes subject_evaluations keeps: parties, whose postures are
// read from them, and any kind a detector of the library judges on schedule (the schedule finds
// its subjects there). An account's outcomes are otherwise read by nothing: writing them cost
// half of the table's writes, each a new row version and index entries.
function recordedKinds(library: readonly AnyDetector[]): Set<SubjectKind> {
  return new Set<SubjectKind>(['party', ...library.filter((d) => d.triggers.includes('schedule')).flatMap((d) => d.subjects)]);
}

// The latest outcome of every detector for each subject evaluated, per mode (non-results too:
// posture reads them to tell low from incomplete). Returns the parties whose band may have
// changed with them: evaluated live for the first time, or now judged where they were not (or
// the reverse). Every other party's band stands; its evaluated_at says when it was last looked at.
export async function writeEvaluations(db: Pick<Pool, 'query'>, outcomes: SubjectOutcome[], now: Date): Promise<string[]> {
  if (outcomes.length === 0) return [];
  const latest = new Map<string, SubjectOutcome>();
  for (const o of outcomes) {
    const key = `${o.work.subject.kind}\u0000${o.work.subject.id}\u0000${o.mode}`;
    const seen = latest.get(key);
    if (!seen || seen.work.at <= o.work.at) latest.set(key, o);
  }
  // In key order (each key built once: a comparator building them built two per comparison).
  const rows = [...latest.keys()]
    .sort()
    .map((key) => latest.get(key)!)
    .map((o) => ({
      t: o.work.tenantId,
      k: o.work.subject.kind,
      s: o.work.subject.id,
      m: o.mode,
      v: o.ruleset.version,
      a: o.work.at.toISOString(),
      f: (o.work.factAt ?? o.work.at).toISOString(),
      o: outcomesOf(o.evaluations),
    }));
  // `before` reads the rows as they were: every part of one statement sees the same snapshot.
  const { rows: changed } = await db.query<{ party_id: string }>({
    name: 'detect-evaluations',
    text: `WITH r AS MATERIALIZED (
             SELECT * FROM json_to_recordset($1::json) AS r(t text, k text, s text, m text, v int, a timestamptz, f timestamptz, o jsonb)
           ),
           before AS MATERIALIZED (
             SELECT e.subject_id, e.incomplete AS unjudged FROM r
               JOIN subject_evaluations e ON e.tenant_id = r.t AND e.subject_kind = 'party' AND e.subject_id = r.s AND e.mode = 'live'
              WHERE r.k = 'party' AND r.m = 'live'
           ),
           written AS (
             INSERT INTO subject_evaluations AS e (tenant_id, subject_kind, subject_id, mode, ruleset_version, event_at, fact_at, evaluated_at, outcomes)
             SELECT t, k, s, m, v, a, f, $2, o FROM r
             ON CONFLICT (tenant_id, subject_kind, subject_id, mode) DO UPDATE
               SET ruleset_version = EXCLUDED.ruleset_version, event_at = EXCLUDED.event_at, evaluated_at = EXCLUDED.evaluated_at,
                   fact_at = greatest(e.fact_at, EXCLUDED.fact_at),
                   -- Outcomes of other triggers stay (a scheduled run judges fewer detectors), but
                   -- only under one ruleset: a detector another ruleset dropped is judged no more.
                   outcomes = CASE WHEN e.ruleset_version = EXCLUDED.ruleset_version THEN e.outcomes || EXCLUDED.outcomes ELSE EXCLUDED.outcomes END
             WHERE e.event_at <= EXCLUDED.event_at
             RETURNING e.subject_kind, e.subject_id, e.mode, e.incomplete
           )
           -- Grouped, not joined: both sides are CTEs without statistics, and a join planned on
           -- guessed sizes can turn into a scan of one per row of the other.
           SELECT subject_id AS party_id FROM (
             SELECT subject_id, unjudged, false AS written FROM before
             UNION ALL
             SELECT subject_id, incomplete, true FROM written WHERE subject_kind = 'party' AND mode = 'live'
           ) verdicts
           GROUP BY subject_id
           HAVING bool_or(written) AND (count(*) = 1 OR bool_or(unjudged) <> bool_and(unjudged))`,
    values: [JSON.stringify(rows), now],
  });
  return changed.map((row) => row.party_id);
}

// Each detector's outcome by its id, assigned one by one: Object.fromEntries over a list of pairs
// made objects slower to build and to serialise (this runs for every subject of every batch).
function outcomesOf(evaluations: readonly Evaluation[]): Record<string, string> {
  const outcomes: Record<string, string> = {};
  for (const e of evaluations) outcomes[e.detector.id] = e.outcome.outcome;
  return outcomes;
}

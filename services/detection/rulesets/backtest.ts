// Backtesting a ruleset: replay the tenant's canonical history in an event-time window through a
// candidate (or shadow) ruleset and through the ruleset running live (its active one, else the
// built-in default), and count, per detector, the alerts each would have opened. Subjects are
// evaluated exactly as the pipeline does (same subjects per change record, same framework, same
// stores), at each change's own event time: the stores answer in event time, so a subject
// evaluated at a past instant sees only the facts that had occurred by then. Nothing is written
// but the report, on the ruleset's row, and its event.
//
// Known differences from live detection, by design: every change is evaluated on its own (the
// pipeline evaluates a subject once per batch, at the batch's latest change), which can only add
// hits, and the overlap rule below folds those into the same alerts; hits are counted as alerts
// in event-time order with no alert ever closed by a case. What the stores do not keep in event
// time (an entity's current version, the live alerts behind ctx.flaggedParties) is read as it is
// now.
import type { Clock } from '../../../platform/clock.ts';
import { withTransaction } from '../../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import { baseAmountOf, controlEventChange, movementChange, movementLeg, subjectPartyOf, type ChangeHead } from '../../../schemas/bus/build-change.ts';
import type { ControlEventChange, MovementChange } from '../../../schemas/bus/canonical-change.ts';
import { lockTenantDetection } from '../detection-lock.ts';
import { SubjectContext, type DetectionStores } from '../framework/context.ts';
import type { AnyDetector, NonResultOutcome } from '../framework/detector.ts';
import type { MoneyDefaults } from '../framework/money-params.ts';
import { evaluateSubject, type Evaluation } from '../framework/evaluate.ts';
import { prefetch } from '../framework/prefetch.ts';
import { compileRuleset, defaultRulesetDocument, type CompiledRuleset, type RulesetIssue } from '../framework/ruleset.ts';
import { enqueueEvents } from '../../webhooks/outgoing-events.ts';
import { subjectsOf, type SubjectWork } from '../subjects.ts';
import { DEFAULT_VERSION, loadRuleset, wrongState, type Refusal, type RulesetState } from './lifecycle.ts';
import { moneyDefaultsFor } from './money-defaults.ts';

// At most this many movements and control events are replayed by default: a backtest holds pooled
// connections for as long as it runs (each change evaluates up to four subjects under two
// rulesets). A wider window is refused with the count, so the operator narrows it or raises the
// cap deliberately (`--max-changes`), up to MAX_CHANGES_LIMIT.
export const DEFAULT_MAX_CHANGES = 20_000;
export const MAX_CHANGES_LIMIT = 1_000_000;
// Subjects evaluated at the same time; each holds a pooled connection while its detectors read.
const DEFAULT_CONCURRENCY = 4;

const BACKTESTABLE: readonly RulesetState[] = ['candidate', 'shadow'];
// Subjects read together before they are evaluated.
const PREFETCH_CHUNK = 500;

export interface BacktestDeps extends DetectionStores {
  clock: Clock;
}

export interface BacktestOptions {
  // The event-time window replayed: (from, to].
  from: Date;
  to: Date;
  maxChanges?: number;
  concurrency?: number;
}

type NonResultCounts = Record<NonResultOutcome, number>;

// Per detector; null on the side of a ruleset that does not run the detector.
interface BacktestDetectorReport {
  // Alerts each ruleset would have opened (one per detector, subject and overlapping window).
  candidate_alerts: number | null;
  active_alerts: number | null;
  // Hits before they were folded into alerts.
  candidate_hits: number | null;
  active_hits: number | null;
  non_results: { candidate: NonResultCounts | null; active: NonResultCounts | null };
}

export interface BacktestReport {
  window: { from: string; to: string };
  // The ruleset compared against: the tenant's active one when the backtest ran, 0 for the default.
  active_version: number;
  detectors: Record<string, BacktestDetectorReport>;
  totals: {
    candidate_alerts: number;
    active_alerts: number;
    movements: number;
    control_events: number;
    subjects_evaluated: number;
    evaluations: number;
  };
  max_changes: number;
  ran_at: string;
}

export type BacktestOutcome = { kind: 'done'; report: BacktestReport } | Refusal | { kind: 'too_large'; message: string; cap: number };

// ---- the alert rule of pipelines/detect/alerts.ts, without a database ----

export interface WindowedHit {
  detectorId: string;
  // The subject as `kind:id`.
  subject: string;
  // Event-time window of the hit's evidence, in epoch ms: [from, to].
  from: number;
  to: number;
}

// How many alerts each detector opens from these hits, taken in the order given (event time): a
// hit whose window overlaps an alert of the same detector on the same subject extends that alert
// (the overlapping one with the latest end, as recordHits picks it) instead of opening another.
export function alertsOpened(hits: Iterable<WindowedHit>): Map<string, number> {
  const alerts = new Map<string, Array<{ from: number; to: number }>>();
  const opened = new Map<string, number>();
  for (const hit of hits) {
    const key = `${hit.detectorId}\u0000${hit.subject}`;
    const windows = alerts.get(key) ?? [];
    let match: { from: number; to: number } | undefined;
    for (const w of windows) if (w.from <= hit.to && w.to >= hit.from && (!match || w.to > match.to)) match = w;
    if (match) {
      match.from = Math.min(match.from, hit.from);
      match.to = Math.max(match.to, hit.to);
      continue;
    }
    windows.push({ from: hit.from, to: hit.to });
    alerts.set(key, windows);
    opened.set(hit.detectorId, (opened.get(hit.detectorId) ?? 0) + 1);
  }
  return opened;
}

// ---- the replay ----

type Change = MovementChange | ControlEventChange;

export async function backtest(deps: BacktestDeps, tenantId: string, version: number, options: BacktestOptions, library: readonly AnyDetector[]): Promise<BacktestOutcome> {
  const maxChanges = options.maxChanges ?? DEFAULT_MAX_CHANGES;
  const windowIssues = checkWindow(options, maxChanges);
  if (windowIssues.length > 0) return { kind: 'invalid', message: 'the backtest options are not usable', issues: windowIssues };

  const row = await loadRuleset(deps.pool, tenantId, version);
  if (!row) return { kind: 'not_found', message: `tenant ${tenantId} has no ruleset version ${version}` };
  if (!BACKTESTABLE.includes(row.state)) return wrongState(version, row.state, BACKTESTABLE, 'backtested');
  // A stored document compiles as it did when it was accepted (decision 0063): a parameter rule
  // added since does not stop it being backtested, as it does not stop it being shadowed.
  // Money defaults as the live pipeline has them now (decision 0081).
  const money = await moneyDefaultsFor(deps.pool, tenantId, deps.clock.now());
  const candidate = compileRuleset(version, row.document, library, { rules: false, moneyDefaults: money });
  if (!candidate.ok) return { kind: 'invalid', message: `ruleset ${version} no longer compiles against the detector library`, issues: candidate.issues };
  const active = await activeRuleset(deps, tenantId, library, money);

  const baseAsset = await baseAssetOf(deps.pool, tenantId);
  const changes = await changesIn(deps, tenantId, baseAsset, options.from, options.to, maxChanges + 1);
  if (changes.length > maxChanges) {
    return {
      kind: 'too_large',
      cap: maxChanges,
      message: `the window holds more than ${maxChanges} movements and control events; narrow it or raise the cap (at most ${MAX_CHANGES_LIMIT})`,
    };
  }

  const tally = await replay(deps, tenantId, baseAsset, changes, candidate.ruleset, active, options.concurrency ?? DEFAULT_CONCURRENCY);
  const report = reportOf(options, candidate.ruleset, active, changes, tally, maxChanges, deps.clock.now());

  return withTransaction(deps.pool, async (db): Promise<BacktestOutcome> => {
    await lockTenantDetection(db, tenantId);
    // It may have been activated or retired while history was replayed.
    const current = await loadRuleset(db, tenantId, version, true);
    if (!current) return { kind: 'not_found', message: `tenant ${tenantId} has no ruleset version ${version}` };
    if (!BACKTESTABLE.includes(current.state)) return wrongState(version, current.state, BACKTESTABLE, 'backtested');
    const now = deps.clock.now();
    await db.query('UPDATE rulesets SET backtest = $3::jsonb WHERE tenant_id = $1 AND version = $2', [tenantId, version, JSON.stringify(report)]);
    await enqueueEvents(
      db,
      [{ tenantId, type: 'ruleset.candidate_ready', data: { version, stage: 'backtested', candidate_alerts: report.totals.candidate_alerts, active_alerts: report.totals.active_alerts } }],
      now,
    );
    return { kind: 'done', report };
  });
}

function checkWindow(options: BacktestOptions, maxChanges: number): RulesetIssue[] {
  const issues: RulesetIssue[] = [];
  if (Number.isNaN(options.from.getTime())) issues.push({ path: 'from', message: 'not a valid instant' });
  if (Number.isNaN(options.to.getTime())) issues.push({ path: 'to', message: 'not a valid instant' });
  if (issues.length === 0 && options.from >= options.to) issues.push({ path: 'to', message: 'the window must end after it starts' });
  if (!Number.isInteger(maxChanges) || maxChanges < 1 || maxChanges > MAX_CHANGES_LIMIT) issues.push({ path: 'max_changes', message: `must be an integer from 1 to ${MAX_CHANGES_LIMIT}` });
  if (options.concurrency !== undefined && (!Number.isInteger(options.concurrency) || options.concurrency < 1 || options.concurrency > 32)) {
    issues.push({ path: 'concurrency', message: 'must be an integer from 1 to 32' });
  }
  return issues;
}

async function activeRuleset(deps: BacktestDeps, tenantId: string, library: readonly AnyDetector[], moneyDefaults: MoneyDefaults): Promise<CompiledRuleset> {
  const { rows } = await deps.pool.query<{ version: number; document: unknown }>(
    `SELECT version, document FROM rulesets WHERE tenant_id = $1 AND state = 'active'`,
    [tenantId],
  );
  const active = rows[0];
  // The stored one compiles as the live pipeline compiles it (rules: false, decision 0063); the
  // built-in default, made of the library's own defaults, is still checked against them.
  const compiled = active
    ? compileRuleset(active.version, active.document, library, { rules: false, moneyDefaults })
    : compileRuleset(DEFAULT_VERSION, defaultRulesetDocument(library, moneyDefaults), library, { moneyDefaults });
  // The live pipeline could not run it either: a deployment error, not an operator's.
  if (!compiled.ok) throw new Error(`the active ruleset ${active?.version ?? DEFAULT_VERSION} no longer compiles: ${compiled.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  return compiled.ruleset;
}

// The tenant's movements and control events in (from, to], oldest first, as the change records the
// canonical pipeline published for them (so subjectsOf picks the same subjects), built by the same
// builder. A leg's party is the one the pipeline resolved; a leg's country and a control event's
// subject party come from the accounts as they are now.
export async function changesIn(deps: BacktestDeps, tenantId: string, baseAsset: string, from: Date, to: Date, limit: number): Promise<Change[]> {
  const movements = await deps.pool.query<MovementRow>({
    text: `SELECT m.external_id, m.event_id, m.occurred_at, m.received_at, i.historical, m.type, m.status, m.amount_value, m.amount_asset, m.amount_scale,
                  m.debit_account_id, m.debit_party_id, m.credit_account_id, m.credit_party_id, m.normalized, m.data,
                  m.data #>> '{debit,counterparty,country}' AS debit_counterparty_country, da.data->>'jurisdiction' AS debit_jurisdiction,
                  m.data #>> '{credit,counterparty,country}' AS credit_counterparty_country, ca.data->>'jurisdiction' AS credit_jurisdiction
             FROM canonical_movements m
             JOIN inbox_events i ON i.tenant_id = m.tenant_id AND i.event_id = m.event_id
             LEFT JOIN canonical_entities da ON da.tenant_id = m.tenant_id AND da.object = 'account' AND da.external_id = m.debit_account_id
             LEFT JOIN canonical_entities ca ON ca.tenant_id = m.tenant_id AND ca.object = 'account' AND ca.external_id = m.credit_account_id
            WHERE m.tenant_id = $1 AND m.occurred_at > $2 AND m.occurred_at <= $3
            ORDER BY m.occurred_at, m.received_at, m.external_id
            LIMIT $4`,
    values: [tenantId, from, to, limit],
  });
  const controls = await deps.pool.query<ControlRow>({
    text: `SELECT c.external_id, c.event_id, c.occurred_at, c.received_at, i.historical, c.type, c.subject_kind, c.subject_external_id, c.data,
                  a.data->>'holder_party_id' AS subject_holder_party_id
             FROM canonical_control_events c
             JOIN inbox_events i ON i.tenant_id = c.tenant_id AND i.event_id = c.event_id
             LEFT JOIN canonical_entities a ON c.subject_kind = 'account' AND a.tenant_id = c.tenant_id AND a.object = 'account' AND a.external_id = c.subject_external_id
            WHERE c.tenant_id = $1 AND c.occurred_at > $2 AND c.occurred_at <= $3
            ORDER BY c.occurred_at, c.received_at, c.external_id
            LIMIT $4`,
    values: [tenantId, from, to, limit],
  });
  const changes: Change[] = [...movements.rows.map((r) => movementOf(tenantId, baseAsset, r)), ...controls.rows.map((r) => controlEventOf(tenantId, r))];
  // Stable: within one instant, movements before control events, each in received order.
  return changes.sort((a, b) => Date.parse(a.occurred_at) - Date.parse(b.occurred_at));
}

interface MovementRow {
  external_id: string;
  event_id: string;
  occurred_at: Date;
  received_at: Date;
  historical: boolean;
  type: string;
  status: string;
  amount_value: string;
  amount_asset: string;
  amount_scale: number;
  debit_account_id: string | null;
  debit_party_id: string | null;
  credit_account_id: string | null;
  credit_party_id: string | null;
  normalized: { status: string; amount?: { value: string; asset: string; scale: number } } | null;
  data: Record<string, unknown>;
  debit_counterparty_country: string | null;
  debit_jurisdiction: string | null;
  credit_counterparty_country: string | null;
  credit_jurisdiction: string | null;
}

interface ControlRow {
  external_id: string;
  event_id: string;
  occurred_at: Date;
  received_at: Date;
  historical: boolean;
  type: string;
  subject_kind: string;
  subject_external_id: string;
  data: Record<string, unknown>;
  // The holder of the subject account (null for any other subject).
  subject_holder_party_id: string | null;
}

function headOf(tenantId: string, r: MovementRow | ControlRow): ChangeHead {
  return { tenant_id: tenantId, event_id: r.event_id, external_id: r.external_id, occurred_at: r.occurred_at.toISOString(), received_at: r.received_at.toISOString(), historical: r.historical };
}

function movementOf(tenantId: string, baseAsset: string, r: MovementRow): MovementChange {
  const amount = { value: r.amount_value, asset: r.amount_asset, scale: r.amount_scale };
  return movementChange(headOf(tenantId, r), {
    type: r.type,
    status: r.status,
    amount,
    base_amount: baseAmountOf(amount, baseAsset, r.normalized),
    debit: movementLeg({ account_id: r.debit_account_id, party_id: r.debit_party_id, counterparty: { country: r.debit_counterparty_country } }, { holder_party_id: null, jurisdiction: r.debit_jurisdiction }),
    credit: movementLeg({ account_id: r.credit_account_id, party_id: r.credit_party_id, counterparty: { country: r.credit_counterparty_country } }, { holder_party_id: null, jurisdiction: r.credit_jurisdiction }),
    data: r.data,
  });
}

function controlEventOf(tenantId: string, r: ControlRow): ControlEventChange {
  const subject = { kind: r.subject_kind, external_id: r.subject_external_id };
  return controlEventChange(headOf(tenantId, r), { type: r.type, subject, subject_party_id: subjectPartyOf(subject, () => r.subject_holder_party_id), data: r.data });
}

interface Tally {
  // Hits per side, each tagged with its place in event-time order.
  hits: { candidate: Array<WindowedHit & { order: number }>; active: Array<WindowedHit & { order: number }> };
  nonResults: { candidate: Map<string, NonResultCounts>; active: Map<string, NonResultCounts> };
  subjects: Set<string>;
  evaluations: number;
}

async function replay(
  deps: BacktestDeps,
  tenantId: string,
  baseAsset: string,
  changes: Change[],
  candidate: CompiledRuleset,
  active: CompiledRuleset,
  concurrency: number,
): Promise<Tally> {
  const firstSeen = await familiesFirstSeen(deps, tenantId);
  // Each change evaluates its own subjects at its own event time, in the order of the history.
  const work: SubjectWork[] = changes.flatMap((change) => subjectsOf([change]));
  const tally: Tally = {
    hits: { candidate: [], active: [] },
    nonResults: { candidate: new Map(), active: new Map() },
    subjects: new Set(),
    evaluations: 0,
  };
  const record = (side: 'candidate' | 'active', item: SubjectWork, order: number, evaluations: Evaluation[]) => {
    for (const { detector, outcome } of evaluations) {
      tally.evaluations += 1;
      if (outcome.outcome === 'hit') {
        const { from, to } = outcome.evidence.window;
        tally.hits[side].push({ order, detectorId: detector.id, subject: `${item.subject.kind}:${item.subject.id}`, from: Date.parse(from), to: Date.parse(to) });
      } else if (outcome.outcome !== 'no_hit') {
        const counts = tally.nonResults[side].get(detector.id) ?? emptyNonResults();
        counts[outcome.outcome] += 1;
        tally.nonResults[side].set(detector.id, counts);
      }
    }
  };
  // In chunks, each read set-based first (prefetch.ts), as the live pipeline reads a batch.
  for (let start = 0; start < work.length; start += PREFETCH_CHUNK) {
    const chunk = work.slice(start, start + PREFETCH_CHUNK);
    const prefetched = await prefetch(deps, chunk);
    let next = 0;
    const worker = async () => {
      while (next < chunk.length) {
        const index = next++;
        const order = start + index;
        const item = chunk[index]!;
        // A fact family counts as received from its first occurrence in event time.
        const seen = new Set([...firstSeen].filter(([, first]) => first <= item.at.getTime()).map(([family]) => family));
        const ctx = new SubjectContext(deps, tenantId, baseAsset, item.subject, item.at, item.change, prefetched[index]);
        tally.subjects.add(`${item.subject.kind}:${item.subject.id}`);
        record('candidate', item, order, await evaluateSubject(ctx, candidate, item.trigger, seen));
        record('active', item, order, await evaluateSubject(ctx, active, item.trigger, seen));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, chunk.length) }, worker));
  }
  return tally;
}

async function familiesFirstSeen(deps: BacktestDeps, tenantId: string): Promise<Map<string, number>> {
  const { rows } = await deps.pool.query<{ movement: Date | null; control_event: Date | null }>(
    `SELECT (SELECT min(occurred_at) FROM canonical_movements WHERE tenant_id = $1) AS movement,
            (SELECT min(occurred_at) FROM canonical_control_events WHERE tenant_id = $1) AS control_event`,
    [tenantId],
  );
  const first = new Map<string, number>();
  for (const [family, at] of Object.entries(rows[0] ?? {})) if (at) first.set(family, (at as Date).getTime());
  return first;
}

const emptyNonResults = (): NonResultCounts => ({ insufficient_data: 0, stale: 0, not_applicable: 0 });

function reportOf(
  options: BacktestOptions,
  candidate: CompiledRuleset,
  active: CompiledRuleset,
  changes: Change[],
  tally: Tally,
  maxChanges: number,
  ranAt: Date,
): BacktestReport {
  const inOrder = (hits: Array<WindowedHit & { order: number }>) => [...hits].sort((a, b) => a.order - b.order);
  const candidateAlerts = alertsOpened(inOrder(tally.hits.candidate));
  const activeAlerts = alertsOpened(inOrder(tally.hits.active));
  const hitsOf = (hits: WindowedHit[], id: string) => hits.filter((h) => h.detectorId === id).length;
  const runs = (ruleset: CompiledRuleset, id: string) => ruleset.detectors.some((d) => d.detector.id === id);
  const ids = [...new Set([...candidate.detectors, ...active.detectors].map((d) => d.detector.id))].sort();
  const detectors = Object.fromEntries(
    ids.map((id): [string, BacktestDetectorReport] => {
      const [inCandidate, inActive] = [runs(candidate, id), runs(active, id)];
      return [
        id,
        {
          candidate_alerts: inCandidate ? (candidateAlerts.get(id) ?? 0) : null,
          active_alerts: inActive ? (activeAlerts.get(id) ?? 0) : null,
          candidate_hits: inCandidate ? hitsOf(tally.hits.candidate, id) : null,
          active_hits: inActive ? hitsOf(tally.hits.active, id) : null,
          non_results: {
            candidate: inCandidate ? (tally.nonResults.candidate.get(id) ?? emptyNonResults()) : null,
            active: inActive ? (tally.nonResults.active.get(id) ?? emptyNonResults()) : null,
          },
        },
      ];
    }),
  );
  const sum = (counts: Map<string, number>) => [...counts.values()].reduce((n, c) => n + c, 0);
  return {
    window: { from: options.from.toISOString(), to: options.to.toISOString() },
    active_version: active.version,
    detectors,
    totals: {
      candidate_alerts: sum(candidateAlerts),
      active_alerts: sum(activeAlerts),
      movements: changes.filter((c) => c.object === 'movement').length,
      control_events: changes.filter((c) => c.object === 'control_event').length,
      subjects_evaluated: tally.subjects.size,
      evaluations: tally.evaluations,
    },
    max_changes: maxChanges,
    ran_at: ranAt.toISOString(),
  };
}

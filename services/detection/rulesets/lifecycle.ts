// The ruleset lifecycle an operator drives: a document becomes a candidate (checked against the
// detector library), may run in shadow beside the live ruleset, is activated (the previous active
// one retires) and can be rolled back (the previously active one returns, or the built-in default,
// version 0). Each step is one transaction under the tenant's detection lock, so it never races
// alert writes or another step, and enqueues its event in that same transaction. Expected refusals
// (unknown version, wrong state, a document that does not compile) are returned, never thrown.
import { withTransaction, type Pool, type PoolClient } from '../../../platform/postgres/pool.ts';
import { tenantExists } from '../../../platform/tenants/tenants.ts';
import { lockTenantDetection } from '../detection-lock.ts';
import type { AnyDetector } from '../framework/detector.ts';
import { compileRuleset, defaultRulesetDocument, type RulesetIssue } from '../framework/ruleset.ts';
import { LEARNED_DETECTOR_ID } from '../models/detector.ts';
import { unusableModels } from '../models/references.ts';
import { activeRulesetDocument } from '../models/store.ts';
import { enqueueEvents, type OutgoingEvent } from '../../webhooks/outgoing-events.ts';
import type { BacktestReport } from './backtest.ts';

const RULESET_STATES = ['candidate', 'shadow', 'active', 'retired', 'rolled_back'] as const;
export type RulesetState = (typeof RULESET_STATES)[number];

// The built-in default ruleset's version: what runs live when no stored ruleset is active.
export const DEFAULT_VERSION = 0;

export interface RulesetSummary {
  version: number;
  name: string;
  state: RulesetState;
  createdAt: Date;
  activatedAt: Date | null;
  // Totals of the latest backtest, when there was one.
  backtested: { from: string; to: string; candidateAlerts: number; activeAlerts: number; ranAt: string } | null;
}

export interface RulesetDetail extends Omit<RulesetSummary, 'backtested'> {
  document: unknown;
  backtest: BacktestReport | null;
}

export type Refusal =
  | { kind: 'not_found'; message: string }
  | { kind: 'invalid'; message: string; issues: RulesetIssue[] }
  | { kind: 'wrong_state'; message: string; state: RulesetState; allowed: readonly RulesetState[] };

export type Outcome<T> = ({ kind: 'done' } & T) | Refusal;

interface RulesetRow {
  version: number;
  name: string;
  state: RulesetState;
  document: unknown;
  created_at: Date;
  activated_at: Date | null;
  backtest: BacktestReport | null;
}

const notFound = (tenantId: string, version: number): Refusal => ({ kind: 'not_found', message: `tenant ${tenantId} has no ruleset version ${version}` });

export function wrongState(version: number, state: RulesetState, allowed: readonly RulesetState[], action: string): Refusal {
  return { kind: 'wrong_state', state, allowed, message: `ruleset ${version} is ${state}; only a ruleset that is ${allowed.join(' or ')} can be ${action}` };
}

// A stored document that no longer compiles (the library lost a detector it names) must never run:
// the pipeline would refuse to evaluate the tenant at all.
function stillCompiles(row: RulesetRow, library: readonly AnyDetector[]): Refusal | undefined {
  const compiled = compileRuleset(row.version, row.document, library, { rules: false });
  if (compiled.ok) return undefined;
  return { kind: 'invalid', message: `ruleset ${row.version} no longer compiles against the detector library`, issues: compiled.issues };
}

// One lifecycle step: the tenant's detection lock, the change, its events, one commit.
async function step<T>(pool: Pool, tenantId: string, now: Date, work: (db: PoolClient) => Promise<{ result: Outcome<T>; events?: OutgoingEvent[] }>): Promise<Outcome<T>> {
  return withTransaction(pool, async (db) => {
    await lockTenantDetection(db, tenantId);
    const { result, events = [] } = await work(db);
    if (result.kind === 'done') await enqueueEvents(db, events, now);
    return result;
  });
}

export async function loadRuleset(db: Pick<Pool, 'query'>, tenantId: string, version: number, forUpdate = false): Promise<RulesetRow | undefined> {
  const { rows } = await db.query<RulesetRow>({
    text: `SELECT version, name, state, document, created_at, activated_at, backtest FROM rulesets
            WHERE tenant_id = $1 AND version = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    values: [tenantId, version],
  });
  return rows[0];
}


// Stores the document as the tenant's next version, in state candidate, if it compiles.
// A document runs only the detectors it names (and does not disable): `leftOut` lists those the
// live ruleset (else the built-in default) runs and the candidate does not, so that a candidate
// written to change one threshold does not silently switch off every other detector.
export async function createCandidate(
  pool: Pool,
  tenantId: string,
  document: unknown,
  library: readonly AnyDetector[],
  now: Date,
): Promise<Outcome<{ version: number; name: string; leftOut: string[] }>> {
  const compiled = compileRuleset(0, document, library);
  if (!compiled.ok) return { kind: 'invalid', message: 'the ruleset document does not compile', issues: compiled.issues };
  const name = compiled.ruleset.name;
  const runs = new Set(compiled.ruleset.detectors.map((d) => d.detector.id));
  return step<{ version: number; name: string; leftOut: string[] }>(pool, tenantId, now, async (db) => {
    if (!(await tenantExists(db, tenantId))) return { result: { kind: 'not_found', message: `no tenant ${tenantId}` } };
    const unusable = await unusableModels(db, tenantId, document);
    if (unusable.length > 0) return { result: { kind: 'invalid', message: 'the ruleset document names a model the tenant cannot run', issues: unusable } };
    const { rows } = await db.query<{ version: number }>({
      text: `INSERT INTO rulesets (tenant_id, version, name, document, state, created_at)
             SELECT $1, coalesce(max(version), 0) + 1, $2, $3::jsonb, 'candidate', $4 FROM rulesets WHERE tenant_id = $1
             RETURNING version`,
      values: [tenantId, name, JSON.stringify(document), now],
    });
    const version = rows[0]!.version;
    const current = compileRuleset(0, (await activeRulesetDocument(db, tenantId)) ?? defaultRulesetDocument(library), library, { rules: false });
    const leftOut = current.ok ? current.ruleset.detectors.map((d) => d.detector.id).filter((id) => !runs.has(id)).sort() : [];
    return {
      result: { kind: 'done', version, name, leftOut },
      events: [{ tenantId, type: 'ruleset.candidate_ready', data: { version, name, stage: 'created' } }],
    };
  });
}

// Puts a candidate in shadow: evaluated beside the live ruleset, its alerts recorded (mode
// shadow) and never published. The ruleset previously in shadow goes back to candidate.
export async function startShadow(pool: Pool, tenantId: string, version: number, library: readonly AnyDetector[], now: Date): Promise<Outcome<{ version: number; previousShadow: number | null }>> {
  return step<{ version: number; previousShadow: number | null }>(pool, tenantId, now, async (db) => {
    const row = await loadRuleset(db, tenantId, version, true);
    if (!row) return { result: notFound(tenantId, version) };
    if (row.state !== 'candidate') return { result: wrongState(version, row.state, ['candidate'], 'put in shadow') };
    const broken = stillCompiles(row, library);
    if (broken) return { result: broken };
    const { rows: previous } = await db.query<{ version: number }>({
      text: `UPDATE rulesets SET state = 'candidate' WHERE tenant_id = $1 AND state = 'shadow' RETURNING version`,
      values: [tenantId],
    });
    await db.query(`UPDATE rulesets SET state = 'shadow' WHERE tenant_id = $1 AND version = $2`, [tenantId, version]);
    return {
      result: { kind: 'done', version, previousShadow: previous[0]?.version ?? null },
      events: [{ tenantId, type: 'ruleset.candidate_ready', data: { version, stage: 'shadow' } }],
    };
  });
}

// Makes a candidate or the shadow ruleset the live one; the previous active one retires (it is
// what a rollback returns to).
export async function activate(pool: Pool, tenantId: string, version: number, library: readonly AnyDetector[], now: Date): Promise<Outcome<{ version: number; previousVersion: number }>> {
  return step<{ version: number; previousVersion: number }>(pool, tenantId, now, async (db) => {
    const row = await loadRuleset(db, tenantId, version, true);
    if (!row) return { result: notFound(tenantId, version) };
    if (row.state !== 'candidate' && row.state !== 'shadow') return { result: wrongState(version, row.state, ['candidate', 'shadow'], 'activated') };
    const broken = stillCompiles(row, library);
    if (broken) return { result: broken };
    const { rows: previous } = await db.query<{ version: number }>({
      text: `UPDATE rulesets SET state = 'retired' WHERE tenant_id = $1 AND state = 'active' RETURNING version`,
      values: [tenantId],
    });
    await db.query(`UPDATE rulesets SET state = 'active', activated_at = $3 WHERE tenant_id = $1 AND version = $2`, [tenantId, version, now]);
    const previousVersion = previous[0]?.version ?? DEFAULT_VERSION;
    return {
      result: { kind: 'done', version, previousVersion },
      events: [{ tenantId, type: 'ruleset.activated', data: { version, previous_version: previousVersion } }],
    };
  });
}

// Takes the active ruleset off live traffic (rolled_back) and restores the most recently activated
// retired one, or none: the built-in default then runs. The restored ruleset's activated_at moves
// to now, so a second rollback goes one step further back rather than back and forth.
export async function rollback(pool: Pool, tenantId: string, library: readonly AnyDetector[], now: Date): Promise<Outcome<{ fromVersion: number; toVersion: number }>> {
  return step<{ fromVersion: number; toVersion: number }>(pool, tenantId, now, async (db) => {
    const { rows: actives } = await db.query<{ version: number }>({
      text: `SELECT version FROM rulesets WHERE tenant_id = $1 AND state = 'active' FOR UPDATE`,
      values: [tenantId],
    });
    const active = actives[0];
    if (!active) {
      return { result: { kind: 'not_found', message: `tenant ${tenantId} has no active ruleset to roll back: the built-in default (version 0) is running` } };
    }
    const { rows: retired } = await db.query<RulesetRow>({
      text: `SELECT version, name, state, document, created_at, activated_at, backtest FROM rulesets
              WHERE tenant_id = $1 AND state = 'retired' ORDER BY activated_at DESC NULLS LAST, version DESC LIMIT 1 FOR UPDATE`,
      values: [tenantId],
    });
    const restore = retired[0];
    if (restore) {
      const broken = stillCompiles(restore, library);
      if (broken) return { result: { ...broken, message: `cannot roll back to ruleset ${restore.version}: it no longer compiles against the detector library` } };
    }
    await db.query(`UPDATE rulesets SET state = 'rolled_back' WHERE tenant_id = $1 AND version = $2`, [tenantId, active.version]);
    if (restore) await db.query(`UPDATE rulesets SET state = 'active', activated_at = $3 WHERE tenant_id = $1 AND version = $2`, [tenantId, restore.version, now]);
    const toVersion = restore?.version ?? DEFAULT_VERSION;
    return {
      result: { kind: 'done', fromVersion: active.version, toVersion },
      events: [{ tenantId, type: 'ruleset.rolled_back', data: { from_version: active.version, to_version: toVersion } }],
    };
  });
}

export async function listRulesets(pool: Pick<Pool, 'query'>, tenantId: string): Promise<Outcome<{ rulesets: RulesetSummary[] }>> {
  if (!(await tenantExists(pool, tenantId))) return { kind: 'not_found', message: `no tenant ${tenantId}` };
  const { rows } = await pool.query<RulesetRow>({
    text: `SELECT version, name, state, NULL AS document, created_at, activated_at, backtest FROM rulesets WHERE tenant_id = $1 ORDER BY version`,
    values: [tenantId],
  });
  const rulesets = rows.map((row) => ({
    version: row.version,
    name: row.name,
    state: row.state,
    createdAt: row.created_at,
    activatedAt: row.activated_at,
    backtested: row.backtest
      ? {
          from: row.backtest.window.from,
          to: row.backtest.window.to,
          candidateAlerts: row.backtest.totals.candidate_alerts,
          activeAlerts: row.backtest.totals.active_alerts,
          ranAt: row.backtest.ran_at,
        }
      : null,
  }));
  return { kind: 'done', rulesets };
}

export async function showRuleset(pool: Pick<Pool, 'query'>, tenantId: string, version: number): Promise<Outcome<{ ruleset: RulesetDetail }>> {
  const row = await loadRuleset(pool, tenantId, version);
  if (!row) return notFound(tenantId, version);
  return {
    kind: 'done',
    ruleset: { version: row.version, name: row.name, state: row.state, createdAt: row.created_at, activatedAt: row.activated_at, document: row.document, backtest: row.backtest },
  };
}

// A report document, like the backtest's: snake_case, as printed with --json.
interface ShadowReportRow {
  detector: string;
  // The learned detector's rows are one per model (its alerts' evidence names it): the shadow
  // ruleset's model and the live one's are compared, not added together.
  model?: string;
  shadow_alerts: number;
  live_alerts: number;
  // Distinct subjects alerted.
  shadow_subjects: number;
  live_subjects: number;
}

export interface ShadowReport {
  version: number;
  state: RulesetState;
  // The processing-time period compared: from the first shadow alert of this version (else the
  // ruleset's creation, when it has none yet) to its last one once it left shadow, else now.
  period: { from: string; to: string; basis: 'first_shadow_alert' | 'ruleset_created' };
  detectors: ShadowReportRow[];
  totals: { shadow_alerts: number; live_alerts: number };
}

// What the ruleset opened in shadow against what live detection opened over the same period, per
// detector. Both ran on the same traffic at the same (processing) time, so the period is measured
// on the alerts' created_at, and derived from the alerts themselves.
export async function shadowReport(pool: Pick<Pool, 'query'>, tenantId: string, version: number, now: Date): Promise<Outcome<{ report: ShadowReport }>> {
  const row = await loadRuleset(pool, tenantId, version);
  if (!row) return notFound(tenantId, version);
  const { rows: span } = await pool.query<{ first: Date | null; last: Date | null }>({
    text: `SELECT min(created_at) AS first, max(created_at) AS last FROM alerts WHERE tenant_id = $1 AND mode = 'shadow' AND ruleset_version = $2`,
    values: [tenantId, version],
  });
  const first = span[0]?.first ?? null;
  if (!first && row.state !== 'shadow') {
    return { kind: 'wrong_state', state: row.state, allowed: ['shadow'], message: `ruleset ${version} is ${row.state} and has no shadow alerts: there is nothing to compare` };
  }
  const from = first ?? row.created_at;
  const to = row.state === 'shadow' ? now : (span[0]?.last ?? now);
  const { rows } = await pool.query<{ detector_id: string; model: string | null; mode: 'live' | 'shadow'; alerts: number; subjects: number }>({
    text: `SELECT a.detector_id, m.model, a.mode, count(*)::int AS alerts, count(DISTINCT (a.subject_kind, a.subject_id))::int AS subjects
             FROM alerts a
             LEFT JOIN LATERAL (
               SELECT ev.evidence->'facts'->'model'->>'id' AS model FROM alert_evidence ev
                WHERE a.detector_id = $5 AND ev.tenant_id = a.tenant_id AND ev.alert_id = a.alert_id ORDER BY ev.seq LIMIT 1
             ) m ON true
            WHERE a.tenant_id = $1 AND a.created_at >= $3 AND a.created_at <= $4
              AND ((a.mode = 'shadow' AND a.ruleset_version = $2) OR a.mode = 'live')
            GROUP BY a.detector_id, m.model, a.mode`,
    values: [tenantId, version, from, to, LEARNED_DETECTOR_ID],
  });
  const byDetector = new Map<string, ShadowReportRow>();
  for (const r of rows) {
    const key = `${r.detector_id}:${r.model ?? ''}`;
    const entry = byDetector.get(key) ?? { detector: r.detector_id, ...(r.model === null ? {} : { model: r.model }), shadow_alerts: 0, live_alerts: 0, shadow_subjects: 0, live_subjects: 0 };
    if (r.mode === 'shadow') Object.assign(entry, { shadow_alerts: r.alerts, shadow_subjects: r.subjects });
    else Object.assign(entry, { live_alerts: r.alerts, live_subjects: r.subjects });
    byDetector.set(key, entry);
  }
  const detectors = [...byDetector.values()].sort((a, b) => a.detector.localeCompare(b.detector) || (a.model ?? '').localeCompare(b.model ?? ''));
  return {
    kind: 'done',
    report: {
      version,
      state: row.state,
      period: { from: from.toISOString(), to: to.toISOString(), basis: first ? 'first_shadow_alert' : 'ruleset_created' },
      detectors,
      totals: { shadow_alerts: detectors.reduce((n, d) => n + d.shadow_alerts, 0), live_alerts: detectors.reduce((n, d) => n + d.live_alerts, 0) },
    },
  };
}

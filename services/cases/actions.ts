// Case actions: an analyst (API key or CLI operator) moves an episode's case. A disposition closes
// the case and resolves the episode (its alerts close with it); escalating escalates the episode;
// open or investigating on a resolved episode reopens it. Every action that changes something is
// appended to case_actions and announced on the compliance channel, and the postures of the
// episode's subject parties are recomputed, all in one transaction under the tenant's detection
// lock. Setting what is already set changes and enqueues nothing, so a retried action is harmless;
// a note given with it is still kept in the case history, once (noteUnchangedCase).
import { ID_PREFIXES, parseId } from '../../platform/ids.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { caseActionRequestSchema, type CASE_STATUSES, type DISPOSITIONS, type EPISODE_STATUSES } from '../../schemas/responses.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { refreshCaseInbox } from './inbox.ts';
import { lockTenantDetection } from '../detection/detection-lock.ts';
import type { Severity } from '../detection/framework/detector.ts';
import { enqueueEvents, type OutgoingEvent } from '../webhooks/outgoing-events.ts';
import { recomputePostures } from '../detection/posture.ts';

type CaseStatus = (typeof CASE_STATUSES)[number];
type Disposition = (typeof DISPOSITIONS)[number];
type EpisodeStatus = (typeof EPISODE_STATUSES)[number];

export interface CaseActionInput {
  tenantId: string;
  // epsd_<uuid> or the bare uuid.
  episodeId: string;
  // Unchecked: the rules below are the one place they are checked, for the API and the CLI alike.
  status?: string;
  disposition?: string;
  note?: string;
  // Who acted: the API key id, or cli:<os user>.
  actor: string;
}

export interface ValidCaseAction {
  status?: CaseStatus;
  disposition?: Disposition;
  note?: string;
}

interface CaseEpisode {
  // The bare uuid.
  episodeId: string;
  status: EpisodeStatus;
  severity: Severity;
  caseStatus: CaseStatus;
  disposition: Disposition | null;
  alertCount: number;
}

export type CaseActionOutcome =
  // changed false: the case already stood so; nothing was written but its note, if any.
  // envelopes: the events enqueued (whe_…).
  | { kind: 'applied'; episode: CaseEpisode; changed: boolean; envelopes: string[] }
  | { kind: 'not_found' }
  | { kind: 'invalid'; errors: FieldError[] }
  // The caller's own rule refused the change (CaseActionRule); nothing was written.
  | { kind: 'refused'; detail: string };

const schemaError = (path: string, message: string): FieldError => ({ path, code: 'svc:validation/schema', message });

// The body of a case action: its shape (strict members, known values, note length), then the rules
// between status and disposition. Messages never quote the submitted values.
export function validateCaseAction(body: unknown): { ok: true; action: ValidCaseAction } | { ok: false; errors: FieldError[] } {
  const parsed = caseActionRequestSchema.safeParse(body);
  if (!parsed.success) {
    return { ok: false, errors: requestSchemaErrors(parsed.error) };
  }
  const action = parsed.data;
  const errors: FieldError[] = [];
  if (action.status === undefined && action.disposition === undefined) errors.push(schemaError('status', 'give a status, a disposition or both'));
  if (action.disposition !== undefined && action.status !== undefined && action.status !== 'closed') {
    errors.push(schemaError('status', 'a disposition closes the case: omit status or set it to closed'));
  }
  if (action.status === 'closed' && action.disposition === undefined) errors.push(schemaError('disposition', 'closing a case needs a disposition'));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, action };
}

interface EpisodeRow {
  status: EpisodeStatus;
  severity: Severity;
  alert_count: number;
  case_status: CaseStatus;
  disposition: Disposition | null;
}

interface Plan {
  status: EpisodeStatus;
  caseStatus: CaseStatus;
  disposition: Disposition | null;
  events: CaseActionEventType[];
}

type CaseActionEventType = 'case.status_changed' | 'case.disposed' | 'episode.resolved' | 'episode.reopened' | 'episode.escalated';

// What every event of a case action carries (schemas/webhooks/payloads.ts, decision 0049).
interface CaseActionData {
  episode_id: string;
  status: EpisodeStatus;
  previous_status: EpisodeStatus;
  case_status: CaseStatus;
  previous_case_status: CaseStatus;
  disposition: Disposition | null;
  previous_disposition: Disposition | null;
  severity: Severity;
  alert_count: number;
  case_action_seq: number;
}

// The types with another cause besides a case action say which caused them (reason); a case is
// disposed of, and an episode resolved, by a case action only.
function caseActionEvent(tenantId: string, type: CaseActionEventType, data: CaseActionData): OutgoingEvent {
  switch (type) {
    case 'case.status_changed':
      return { tenantId, type, data: { ...data, reason: 'case_action' } };
    case 'episode.escalated':
      return { tenantId, type, data: { ...data, reason: 'case_action' } };
    case 'episode.reopened':
      return { tenantId, type, data: { ...data, reason: 'case_action' } };
    case 'episode.resolved':
      if (data.status !== 'resolved') break;
      return { tenantId, type, data: { ...data, status: data.status } };
    case 'case.disposed':
      if (data.case_status !== 'closed' || data.disposition === null) break;
      return { tenantId, type, data: { ...data, case_status: data.case_status, disposition: data.disposition } };
  }
  throw new Error(`a case action planned ${type} for a case that does not stand so`);
}

// What the action makes of the case; undefined when it is already so. An escalated episode stays
// escalated when the case goes back to open or investigating (the pipeline never de-escalates
// either); a new disposition on a closed case replaces the old one (case.disposed again).
function plan(current: EpisodeRow, action: ValidCaseAction): Plan | undefined {
  const caseStatus: CaseStatus = action.disposition !== undefined ? 'closed' : action.status!;
  const disposition = action.disposition ?? null;
  const status: EpisodeStatus =
    caseStatus === 'closed' ? 'resolved' : caseStatus === 'escalated' ? 'escalated' : current.status === 'resolved' ? 'reopened' : current.status;
  if (caseStatus === current.case_status && disposition === current.disposition && status === current.status) return undefined;
  const events: Plan['events'] = [];
  if (caseStatus !== current.case_status) events.push('case.status_changed');
  if (caseStatus === 'closed') events.push('case.disposed');
  if (status === 'resolved' && current.status !== 'resolved') events.push('episode.resolved');
  if (current.status === 'resolved' && status !== 'resolved') events.push('episode.reopened');
  if (status === 'escalated' && current.status !== 'escalated') events.push('episode.escalated');
  return { status, caseStatus, disposition, events };
}

// `record` runs inside the action's transaction once it is applied (changed or not), so what the
// caller keeps of it (the console's audit row) commits or rolls back with the action itself.
export type CaseActionRecorder = (db: PoolClient, applied: { changed: boolean; envelopes: string[] }) => Promise<void>;

// A caller's rule over what a change may do, judged under the episode's lock (so no concurrent
// action slips between it and the change): the reason it refuses, or undefined. Actions that
// change nothing are not judged.
export type CaseActionRule = (
  db: PoolClient,
  change: { from: { caseStatus: CaseStatus; disposition: Disposition | null }; to: { caseStatus: CaseStatus; disposition: Disposition | null } },
) => Promise<string | undefined>;

export async function applyCaseAction(pool: Pool, input: CaseActionInput, now: Date, record?: CaseActionRecorder, rule?: CaseActionRule): Promise<CaseActionOutcome> {
  const { tenantId, actor } = input;
  const checked = validateCaseAction({
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.disposition !== undefined ? { disposition: input.disposition } : {}),
    ...(input.note !== undefined ? { note: input.note } : {}),
  });
  if (!checked.ok) return { kind: 'invalid', errors: checked.errors };
  const episodeId = parseId('episode', input.episodeId);
  if (!episodeId) return { kind: 'not_found' };
  const action = checked.action;

  return withTransaction(pool, async (db) => {
    await lockTenantDetection(db, tenantId);
    const { rows } = await db.query<EpisodeRow>(
      `SELECT status, severity, alert_count, case_status, disposition FROM episodes
        WHERE tenant_id = $1 AND episode_id = $2 FOR UPDATE`,
      [tenantId, episodeId],
    );
    const current = rows[0];
    if (!current) return { kind: 'not_found' };
    const next = plan(current, action);
    const episode = (row: Pick<EpisodeRow, 'status' | 'case_status' | 'disposition'>): CaseEpisode => ({
      episodeId,
      status: row.status,
      severity: current.severity,
      caseStatus: row.case_status,
      disposition: row.disposition,
      alertCount: current.alert_count,
    });
    if (next && rule) {
      const refused = await rule(db, { from: { caseStatus: current.case_status, disposition: current.disposition }, to: { caseStatus: next.caseStatus, disposition: next.disposition } });
      if (refused !== undefined) return { kind: 'refused', detail: refused };
    }
    if (!next) {
      if (action.note !== undefined) await noteUnchangedCase(db, tenantId, episodeId, { ...current, actor, note: action.note }, now);
      await record?.(db, { changed: false, envelopes: [] });
      return { kind: 'applied', episode: episode(current), changed: false, envelopes: [] };
    }

    await db.query(
      'UPDATE episodes SET status = $3, case_status = $4, disposition = $5, updated_at = $6 WHERE tenant_id = $1 AND episode_id = $2',
      [tenantId, episodeId, next.status, next.caseStatus, next.disposition, now],
    );
    // Reopening leaves the alerts closed, as when the pipeline reopens an episode: they were
    // reviewed; new evidence opens new alerts.
    if (next.status === 'resolved') {
      await db.query(
        `UPDATE alerts SET status = 'closed', updated_at = $3 WHERE tenant_id = $1 AND episode_id = $2 AND mode = 'live' AND status = 'open'`,
        [tenantId, episodeId, now],
      );
    }
    const seq = await appendCaseAction(db, tenantId, episodeId, { ...next, actor, note: action.note ?? null }, now);

    const data: CaseActionData = {
      episode_id: `${ID_PREFIXES.episode}${episodeId}`,
      status: next.status,
      previous_status: current.status,
      case_status: next.caseStatus,
      previous_case_status: current.case_status,
      disposition: next.disposition,
      previous_disposition: current.disposition,
      severity: current.severity,
      alert_count: current.alert_count,
      case_action_seq: seq,
    };
    const events = next.events.map((type) => caseActionEvent(tenantId, type, data));
    const parties = await db.query<{ subject_id: string }>(
      `SELECT subject_id FROM episode_members WHERE tenant_id = $1 AND episode_id = $2 AND subject_kind = 'party' AND role = 'subject'`,
      [tenantId, episodeId],
    );
    events.push(...(await recomputePostures(db, tenantId, parties.rows.map((p) => p.subject_id), now)));
    const envelopes = await enqueueEvents(db, events, now);
    await refreshCaseInbox(db, tenantId, [episodeId]);
    await record?.(db, { changed: true, envelopes });
    return { kind: 'applied', episode: episode({ status: next.status, case_status: next.caseStatus, disposition: next.disposition }), changed: true, envelopes };
  });
}

async function appendCaseAction(
  db: PoolClient,
  tenantId: string,
  episodeId: string,
  action: { caseStatus: CaseStatus; disposition: Disposition | null; actor: string; note: string | null },
  now: Date,
): Promise<number> {
  const { rows } = await db.query<{ seq: number }>(
    `INSERT INTO case_actions (tenant_id, episode_id, seq, at, actor, case_status, disposition, note)
     SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, $4, $5, $6, $7 FROM case_actions WHERE tenant_id = $1 AND episode_id = $2
     RETURNING seq`,
    [tenantId, episodeId, now, action.actor, action.caseStatus, action.disposition, action.note],
  );
  return rows[0]!.seq;
}

// An analyst's note on an action that changes nothing is what they found, and a compliance record
// keeps it: a history row with the case as it stands, no event. A repeat of the latest row (the
// same actor, case and note: a retried request) is not written again.
async function noteUnchangedCase(
  db: PoolClient,
  tenantId: string,
  episodeId: string,
  action: { case_status: CaseStatus; disposition: Disposition | null; actor: string; note: string },
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO case_actions (tenant_id, episode_id, seq, at, actor, case_status, disposition, note)
     SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, $4, $5, $6, $7 FROM case_actions WHERE tenant_id = $1 AND episode_id = $2
     HAVING NOT EXISTS (
       SELECT 1 FROM (SELECT actor, case_status, disposition, note FROM case_actions WHERE tenant_id = $1 AND episode_id = $2 ORDER BY seq DESC LIMIT 1) latest
        WHERE latest.actor = $4 AND latest.case_status = $5 AND latest.disposition IS NOT DISTINCT FROM $6 AND latest.note = $7
     )`,
    [tenantId, episodeId, now, action.actor, action.case_status, action.disposition, action.note],
  );
}

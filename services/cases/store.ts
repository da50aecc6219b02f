// The reads of alerts, episodes and case actions behind the compliance views (API, console, CLI,
// case exports). Every read filters on the tenant; only live alerts are ever read (shadow alerts
// are recorded to compare rulesets, never published). Shaping rows into views is render.ts's.
import type { z } from 'zod';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { alertSchema, episodeSchema } from '../../schemas/responses.ts';

type Queryable = Pick<Pool, 'query'>;
type AlertView = z.infer<typeof alertSchema>;
type EpisodeView = z.infer<typeof episodeSchema>;
type Subject = AlertView['subject'];

// What a list of alerts shows (the console's alert queue): no narrative, no evidence.
// Statuses and kinds as stored, under CHECK constraints that hold them to the published lists.
export interface AlertSummaryRow {
  alert_id: string;
  status: AlertView['status'];
  detector_id: string;
  typology: string;
  subject_kind: Subject['kind'];
  subject_id: string;
  severity: AlertView['severity'];
  score: number;
  window_from: Date;
  window_to: Date;
  episode_id: string | null;
  created_at: Date;
  updated_at: Date;
  // created_at at full precision, for page cursors.
  cursor_at: string;
}

export interface AlertRow extends AlertSummaryRow {
  detector_version: number;
  ruleset_version: number;
  party_id: string | null;
  summary: string;
  explanation: string;
  hits: number;
  evidence: Record<string, unknown> | null;
}

// The columns of AlertSummaryRow from `alerts a`.
export const ALERT_SUMMARY_COLUMNS = `a.alert_id, a.status, a.detector_id, a.typology, a.subject_kind, a.subject_id, a.severity, a.score,
  a.window_from, a.window_to, a.episode_id, a.created_at, a.updated_at, a.created_at::text AS cursor_at`;

// The evidence rows `e` of alert `a` in an order whose first row is the headline hit's, whose
// summary and explanation the alert carries: the row the alert names (headline_seq, migration
// 0057). An alert written before names none; its headline is the latest row with its score and
// severity, the rule it was written under. Detection reads the headline by the same order
// (pipelines/detect/alerts.ts), so what it compares a new hit with is what readers show.
export const HEADLINE_EVIDENCE_ORDER = (e: string, a: string): string =>
  `(${e}.seq = ${a}.headline_seq) DESC NULLS LAST, (${e}.score = ${a}.score AND ${e}.severity = ${a}.severity) DESC, ${e}.seq DESC`;

// The columns of AlertRow from `alerts a`, with the evidence of its headline hit, so headline and
// evidence agree.
export const ALERT_COLUMNS = `${ALERT_SUMMARY_COLUMNS}, a.detector_version, a.ruleset_version, a.party_id, a.summary, a.explanation, a.hits,
  (SELECT e.evidence FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id
    ORDER BY ${HEADLINE_EVIDENCE_ORDER('e', 'a')} LIMIT 1) AS evidence`;

export interface EvidenceRow {
  seq: number;
  recorded_at: Date;
  event_at: Date;
  score: number;
  severity: AlertView['severity'];
  evidence: Record<string, unknown>;
}

export interface EpisodeRow {
  episode_id: string;
  status: EpisodeView['status'];
  severity: EpisodeView['severity'];
  case_status: EpisodeView['case_status'];
  disposition: EpisodeView['disposition'];
  first_alert_at: Date;
  last_alert_at: Date;
  alert_count: number;
  created_at: Date;
  updated_at: Date;
  members: Subject[];
  related: Subject[];
  // created_at at full precision, for page cursors.
  cursor_at: string;
}

// The columns of EpisodeRow from `episodes e`. Members are the subjects of the episode's alerts
// (and the parties holding alerted accounts): what the episode is about. Related are the other
// accounts and parties its alerts' evidence names as counterparties: context for the analyst,
// not under suspicion by this episode.
const episodeEntities = (role: 'subject' | 'counterparty', name: string) => `
  coalesce((SELECT json_agg(json_build_object('kind', m.subject_kind, 'external_id', m.subject_id) ORDER BY m.subject_kind, m.subject_id)
              FROM episode_members m WHERE m.tenant_id = e.tenant_id AND m.episode_id = e.episode_id AND m.role = '${role}'), '[]'::json) AS ${name}`;
const EPISODE_COLUMNS = `e.episode_id, e.status, e.severity, e.case_status, e.disposition, e.first_alert_at, e.last_alert_at, e.alert_count,
  e.created_at, e.updated_at, e.created_at::text AS cursor_at, ${episodeEntities('subject', 'members')}, ${episodeEntities('counterparty', 'related')}`;

// A page position: the cursor row's time at full precision and its id.
interface After {
  at: string;
  id: string;
}

export interface AlertFilters {
  status: string | null;
  subjectId: string | null;
  subjectKind: string | null;
  detector: string | null;
  since: Date | null;
}

// Live alerts, newest first, after the cursor; `limit` rows at most.
export async function alertPage(db: Queryable, tenantId: string, filters: AlertFilters, after: After | null | undefined, limit: number): Promise<AlertRow[]> {
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts a
        WHERE a.tenant_id = $1 AND a.mode = 'live'
          AND ($2::text IS NULL OR a.status = $2) AND ($3::text IS NULL OR a.subject_id = $3) AND ($4::text IS NULL OR a.subject_kind = $4)
          AND ($5::text IS NULL OR a.detector_id = $5) AND ($6::timestamptz IS NULL OR a.created_at >= $6)
          AND ($7::timestamptz IS NULL OR (a.created_at, a.alert_id) < ($7::timestamptz, $8::uuid))
        ORDER BY a.created_at DESC, a.alert_id DESC
        LIMIT $9`,
    [tenantId, filters.status, filters.subjectId, filters.subjectKind, filters.detector, filters.since, after?.at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export interface EpisodeFilters {
  status: string | null;
  subjectId: string | null;
  subjectKind: string | null;
  since: Date | null;
}

// Episodes, newest first by creation, after the cursor; `limit` rows at most. Creation never
// changes, so a walk sees every episode that existed when it began exactly once (ordered by
// updated_at, an episode changed during the walk moved behind the cursor and was skipped); a
// change is found by `since` (updated_at), which a syncing client sets to its last walk's start.
export async function episodePage(db: Queryable, tenantId: string, filters: EpisodeFilters, after: After | null | undefined, limit: number): Promise<EpisodeRow[]> {
  const { rows } = await db.query<EpisodeRow>(
    `SELECT ${EPISODE_COLUMNS} FROM episodes e
        WHERE e.tenant_id = $1 AND ($2::text IS NULL OR e.status = $2)
          AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM episode_members m
                                            WHERE m.tenant_id = e.tenant_id AND m.episode_id = e.episode_id
                                              AND m.subject_id = $3 AND ($4::text IS NULL OR m.subject_kind = $4)))
          AND ($5::timestamptz IS NULL OR e.updated_at >= $5)
          AND ($6::timestamptz IS NULL OR (e.created_at, e.episode_id) < ($6::timestamptz, $7::uuid))
        ORDER BY e.created_at DESC, e.episode_id DESC
        LIMIT $8`,
    [tenantId, filters.status, filters.subjectId, filters.subjectKind, filters.since, after?.at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export async function findLiveAlert(db: Queryable, tenantId: string, alertId: string): Promise<AlertRow | undefined> {
  const { rows } = await db.query<AlertRow>(`SELECT ${ALERT_COLUMNS} FROM alerts a WHERE a.tenant_id = $1 AND a.alert_id = $2 AND a.mode = 'live'`, [
    tenantId,
    alertId,
  ]);
  return rows[0];
}

// Every evidence entry of an alert, oldest first.
export async function alertEvidence(db: Queryable, tenantId: string, alertId: string): Promise<EvidenceRow[]> {
  const { rows } = await db.query<EvidenceRow>(
    'SELECT seq, recorded_at, event_at, score, severity, evidence FROM alert_evidence WHERE tenant_id = $1 AND alert_id = $2 ORDER BY seq',
    [tenantId, alertId],
  );
  return rows;
}

export async function findEpisode(db: Queryable, tenantId: string, episodeId: string): Promise<EpisodeRow | undefined> {
  const { rows } = await db.query<EpisodeRow>(`SELECT ${EPISODE_COLUMNS} FROM episodes e WHERE e.tenant_id = $1 AND e.episode_id = $2`, [tenantId, episodeId]);
  return rows[0];
}

// Whether the tenant has an episode with this id (the id is a case's too).
export async function episodeExists(db: Queryable, tenantId: string, episodeId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM episodes WHERE tenant_id = $1 AND episode_id = $2', [tenantId, episodeId]);
  return rows.length > 0;
}

// The episode's live alerts, newest first.
export async function liveAlertsOfEpisode(db: Queryable, tenantId: string, episodeId: string): Promise<AlertRow[]> {
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts a WHERE a.tenant_id = $1 AND a.episode_id = $2 AND a.mode = 'live' ORDER BY a.created_at DESC, a.alert_id DESC`,
    [tenantId, episodeId],
  );
  return rows;
}

export interface CaseActionRow {
  seq: number;
  at: Date;
  actor: string;
  case_status: EpisodeView['case_status'];
  disposition: EpisodeView['disposition'];
  note: string | null;
}

// Who a case action names. case_actions records `console:<user id>` for a console user; the API
// and the console's timeline show that as recorded, an export (read by people outside the
// console) shows the user's email instead.
const ACTORS = {
  recorded: { column: 'c.actor', join: '' },
  email: {
    column: 'coalesce(u.email, c.actor)',
    join: `LEFT JOIN console_users u ON u.tenant_id = c.tenant_id AND c.actor = 'console:' || u.user_id::text`,
  },
} as const;

// The episode's case actions, oldest first.
export async function caseActions(db: Queryable, tenantId: string, episodeId: string, actor: keyof typeof ACTORS = 'recorded'): Promise<CaseActionRow[]> {
  const { column, join } = ACTORS[actor];
  const { rows } = await db.query<CaseActionRow>(
    `SELECT c.seq, c.at, ${column} AS actor, c.case_status, c.disposition, c.note
       FROM case_actions c ${join}
      WHERE c.tenant_id = $1 AND c.episode_id = $2 ORDER BY c.seq`,
    [tenantId, episodeId],
  );
  return rows;
}

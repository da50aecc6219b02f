// Compliance views of alerts, episodes and case history (restricted AML content, scope compliance),
// and the reads behind the single-record views, shared by the API and `svc cases show`.
// Every read filters on the tenant; only live alerts are ever shown (shadow alerts are recorded
// to compare rulesets, never published).
import type { z } from 'zod';
import { ID_PREFIXES } from '../../platform/ids.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { alertDetailSchema, alertSchema, episodeDetailSchema, episodeSchema } from '../../schemas/responses.ts';

type Queryable = Pick<Pool, 'query'>;
export type AlertView = z.infer<typeof alertSchema>;
export type AlertDetail = z.infer<typeof alertDetailSchema>;
export type EpisodeView = z.infer<typeof episodeSchema>;
export type EpisodeDetail = z.infer<typeof episodeDetailSchema>;
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

// The columns of AlertRow from `alerts a`, with the evidence of its headline hit: the latest row
// with the alert's score and severity (pipelines/detect/alerts.ts), so headline and evidence agree.
export const ALERT_COLUMNS = `${ALERT_SUMMARY_COLUMNS}, a.detector_version, a.ruleset_version, a.party_id, a.summary, a.explanation, a.hits,
  (SELECT e.evidence FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id
    ORDER BY (e.score = a.score AND e.severity = a.severity) DESC, e.seq DESC LIMIT 1) AS evidence`;

export function alertSummaryView(row: AlertSummaryRow) {
  return {
    alert_id: ID_PREFIXES.alert + row.alert_id,
    status: row.status,
    detector: row.detector_id,
    typology: row.typology,
    subject: { kind: row.subject_kind, external_id: row.subject_id },
    severity: row.severity,
    score: row.score,
    window: { from: row.window_from.toISOString(), to: row.window_to.toISOString() },
    episode_id: row.episode_id === null ? null : ID_PREFIXES.episode + row.episode_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function alertView(row: AlertRow): AlertView {
  return {
    ...alertSummaryView(row),
    detector_version: row.detector_version,
    ruleset_version: row.ruleset_version,
    party_id: row.party_id,
    summary: row.summary,
    explanation: row.explanation,
    hits: row.hits,
    evidence: row.evidence ?? {},
  };
}

interface EvidenceRow {
  seq: number;
  recorded_at: Date;
  event_at: Date;
  score: number;
  severity: AlertView['severity'];
  evidence: Record<string, unknown>;
}

// One live alert with every evidence entry, oldest first; undefined when the tenant has none with this id.
export async function loadAlertDetail(db: Queryable, tenantId: string, alertId: string): Promise<AlertDetail | undefined> {
  const { rows } = await db.query<AlertRow>(`SELECT ${ALERT_COLUMNS} FROM alerts a WHERE a.tenant_id = $1 AND a.alert_id = $2 AND a.mode = 'live'`, [
    tenantId,
    alertId,
  ]);
  if (!rows[0]) return undefined;
  const history = await db.query<EvidenceRow>(
    'SELECT seq, recorded_at, event_at, score, severity, evidence FROM alert_evidence WHERE tenant_id = $1 AND alert_id = $2 ORDER BY seq',
    [tenantId, alertId],
  );
  return {
    ...alertView(rows[0]),
    evidence_history: history.rows.map((e) => ({
      seq: e.seq,
      recorded_at: e.recorded_at.toISOString(),
      event_at: e.event_at.toISOString(),
      score: e.score,
      severity: e.severity,
      evidence: e.evidence,
    })),
  };
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
  // updated_at at full precision, for page cursors.
  cursor_at: string;
}

// The columns of EpisodeRow from `episodes e`. Members are the subjects of the episode's alerts
// (and the parties holding alerted accounts): what the episode is about. Related are the other
// accounts and parties its alerts' evidence names as counterparties: context for the analyst,
// not under suspicion by this episode.
const episodeEntities = (role: 'subject' | 'counterparty', name: string) => `
  coalesce((SELECT json_agg(json_build_object('kind', m.subject_kind, 'external_id', m.subject_id) ORDER BY m.subject_kind, m.subject_id)
              FROM episode_members m WHERE m.tenant_id = e.tenant_id AND m.episode_id = e.episode_id AND m.role = '${role}'), '[]'::json) AS ${name}`;
export const EPISODE_COLUMNS = `e.episode_id, e.status, e.severity, e.case_status, e.disposition, e.first_alert_at, e.last_alert_at, e.alert_count,
  e.created_at, e.updated_at, e.updated_at::text AS cursor_at, ${episodeEntities('subject', 'members')}, ${episodeEntities('counterparty', 'related')}`;

export function episodeView(row: EpisodeRow): EpisodeView {
  return {
    episode_id: ID_PREFIXES.episode + row.episode_id,
    status: row.status,
    severity: row.severity,
    case_status: row.case_status,
    disposition: row.disposition,
    first_alert_at: row.first_alert_at.toISOString(),
    last_alert_at: row.last_alert_at.toISOString(),
    alert_count: row.alert_count,
    members: row.members,
    related: row.related,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

interface CaseActionRow {
  seq: number;
  at: Date;
  actor: string;
  case_status: EpisodeView['case_status'];
  disposition: EpisodeView['disposition'];
  note: string | null;
}

// One episode with its live alerts (newest first) and its case history (oldest first); undefined
// when the tenant has no episode with this id.
export async function loadEpisodeDetail(db: Queryable, tenantId: string, episodeId: string): Promise<EpisodeDetail | undefined> {
  const { rows } = await db.query<EpisodeRow>(`SELECT ${EPISODE_COLUMNS} FROM episodes e WHERE e.tenant_id = $1 AND e.episode_id = $2`, [tenantId, episodeId]);
  if (!rows[0]) return undefined;
  const alerts = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts a WHERE a.tenant_id = $1 AND a.episode_id = $2 AND a.mode = 'live' ORDER BY a.created_at DESC, a.alert_id DESC`,
    [tenantId, episodeId],
  );
  const history = await db.query<CaseActionRow>(
    'SELECT seq, at, actor, case_status, disposition, note FROM case_actions WHERE tenant_id = $1 AND episode_id = $2 ORDER BY seq',
    [tenantId, episodeId],
  );
  return {
    ...episodeView(rows[0]),
    alerts: alerts.rows.map(alertView),
    case_history: history.rows.map((c) => ({
      seq: c.seq,
      at: c.at.toISOString(),
      actor: c.actor,
      case_status: c.case_status,
      disposition: c.disposition,
      note: c.note,
    })),
  };
}

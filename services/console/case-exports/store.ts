import type { Pool } from '../../../platform/postgres/pool.ts';

// The reads behind a case's exports (goAML report, case file): the case, its live alerts with
// every evidence entry, the movements their evidence cites, the parties and accounts on them.
// Every query filters on the tenant.

type Db = Pick<Pool, 'query'>;

// A case names at most this many movements in an export; more is said, not silently dropped.
export const MAX_EXPORT_MOVEMENTS = 1000;
// An alert's latest evidence entries in an export (each hit appends one; seq numbers show gaps).
const MAX_EXPORT_EVIDENCE = 200;

export interface CaseRow {
  episode_id: string;
  status: string;
  severity: string;
  case_status: string;
  disposition: string | null;
  first_alert_at: Date;
  last_alert_at: Date;
  alert_count: number;
  created_at: Date;
  updated_at: Date;
  subjects: Array<{ kind: string; external_id: string }>;
  related: Array<{ kind: string; external_id: string }>;
  base_asset: string;
}

export interface CaseAlertRow {
  alert_id: string;
  status: string;
  detector_id: string;
  typology: string;
  subject_kind: string;
  subject_id: string;
  severity: string;
  score: number;
  window_from: Date;
  window_to: Date;
  summary: string;
  explanation: string;
  created_at: Date;
  evidence: Array<{ seq: number; event_at: Date; severity: string; evidence: Record<string, unknown> }>;
}

export interface CaseMovementRow {
  external_id: string;
  event_id: string;
  occurred_at: Date;
  type: string;
  status: string;
  amount_value: string;
  amount_asset: string;
  amount_scale: number;
  debit_account_id: string | null;
  debit_party_id: string | null;
  credit_account_id: string | null;
  credit_party_id: string | null;
  normalized: Record<string, any> | null;
  data: Record<string, any>;
}

export interface CaseActionRow {
  seq: number;
  at: Date;
  actor: string;
  case_status: string;
  disposition: string | null;
  note: string | null;
}

const members = (role: 'subject' | 'counterparty') => `
  coalesce((SELECT json_agg(json_build_object('kind', m.subject_kind, 'external_id', m.subject_id) ORDER BY m.subject_kind, m.subject_id)
              FROM episode_members m WHERE m.tenant_id = e.tenant_id AND m.episode_id = e.episode_id AND m.role = '${role}'), '[]'::json)`;

export async function findCase(db: Db, tenantId: string, episodeId: string): Promise<CaseRow | undefined> {
  const { rows } = await db.query<CaseRow>(
    `SELECT e.episode_id, e.status, e.severity, e.case_status, e.disposition, e.first_alert_at, e.last_alert_at, e.alert_count,
            e.created_at, e.updated_at, ${members('subject')} AS subjects, ${members('counterparty')} AS related, t.base_asset
       FROM episodes e JOIN tenants t ON t.tenant_id = e.tenant_id
      WHERE e.tenant_id = $1 AND e.episode_id = $2`,
    [tenantId, episodeId],
  );
  return rows[0];
}

// Live alerts only (shadow alerts are never published), oldest first, each with its evidence
// entries, oldest first.
export async function caseAlerts(db: Db, tenantId: string, episodeId: string): Promise<CaseAlertRow[]> {
  const { rows } = await db.query<CaseAlertRow>(
    `SELECT a.alert_id, a.status, a.detector_id, a.typology, a.subject_kind, a.subject_id, a.severity, a.score, a.window_from, a.window_to,
            a.summary, a.explanation, a.created_at,
            coalesce((SELECT json_agg(x ORDER BY x.seq) FROM (
                        SELECT v.seq, v.event_at, v.severity, v.evidence FROM alert_evidence v
                         WHERE v.tenant_id = a.tenant_id AND v.alert_id = a.alert_id ORDER BY v.seq DESC LIMIT $3) x), '[]'::json) AS evidence
       FROM alerts a
      WHERE a.tenant_id = $1 AND a.episode_id = $2 AND a.mode = 'live'
      ORDER BY a.created_at, a.alert_id`,
    [tenantId, episodeId, MAX_EXPORT_EVIDENCE],
  );
  return rows.map((r) => ({ ...r, evidence: r.evidence.map((v) => ({ ...v, event_at: new Date(v.event_at) })) }));
}

// The movements with these external ids, oldest first (by event time).
export async function movementsByIds(db: Db, tenantId: string, ids: readonly string[]): Promise<CaseMovementRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<CaseMovementRow>(
    `SELECT external_id, event_id, occurred_at, type, status, amount_value::text AS amount_value, amount_asset, amount_scale,
            debit_account_id, debit_party_id, credit_account_id, credit_party_id, normalized, data
       FROM canonical_movements WHERE tenant_id = $1 AND external_id = ANY($2::text[])
      ORDER BY occurred_at, external_id`,
    [tenantId, ids],
  );
  return rows;
}

// Current data of the parties or accounts with these external ids, by id.
export async function entitiesByIds(db: Db, tenantId: string, object: 'party' | 'account', ids: readonly string[]): Promise<Map<string, Record<string, any>>> {
  const found = new Map<string, Record<string, any>>();
  if (ids.length === 0) return found;
  const { rows } = await db.query<{ external_id: string; data: Record<string, any> }>(
    'SELECT external_id, data FROM canonical_entities WHERE tenant_id = $1 AND object = $2 AND external_id = ANY($3::text[])',
    [tenantId, object, [...new Set(ids)]],
  );
  for (const r of rows) found.set(r.external_id, r.data);
  return found;
}

// Oldest first; a console user's action names the user's email (case_actions records console:<user id>).
export async function caseActions(db: Db, tenantId: string, episodeId: string): Promise<CaseActionRow[]> {
  const { rows } = await db.query<CaseActionRow>(
    `SELECT c.seq, c.at, coalesce(u.email, c.actor) AS actor, c.case_status, c.disposition, c.note
       FROM case_actions c
       LEFT JOIN console_users u ON u.tenant_id = c.tenant_id AND c.actor = 'console:' || u.user_id::text
      WHERE c.tenant_id = $1 AND c.episode_id = $2 ORDER BY c.seq`,
    [tenantId, episodeId],
  );
  return rows;
}

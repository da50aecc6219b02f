import type { Pool } from '../../../platform/postgres/pool.ts';
import type { StoredAccountData, StoredPartyData } from '../../../schemas/families/stored.ts';

// The reads behind a case's exports (goAML report, case file): the case, its live alerts with
// every evidence entry, the parties and accounts on the movements their evidence cites. The
// movements are read with the case page's query (queries/case-timeline.ts), the case actions with
// the case's store (services/cases/store.ts). Every query filters on the tenant.

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
  evidence: Array<{ seq: number; event_at: Date; severity: string; evidence: StoredEvidence }>;
}

// A hit's evidence as detectors store it (services/detection/framework/detector.ts Evidence): JSON
// written by many detectors over time, so every part may be absent.
interface StoredEvidence {
  movements?: string[];
  counterparties?: string[];
  amounts?: { total?: string; count?: number; asset?: string; in?: string; out?: string };
  window?: { from?: string; to?: string };
  thresholds?: Array<{ name: string; threshold: string | number; observed: string | number }>;
  baseline?: { days?: number; mean?: string; stddev?: string; observed?: string; metric?: string };
  facts?: Record<string, unknown>;
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

interface StoredEntityData {
  party: StoredPartyData;
  account: StoredAccountData;
}

// Current data of the parties or accounts with these external ids, by id.
export async function entitiesByIds<O extends keyof StoredEntityData>(db: Db, tenantId: string, object: O, ids: readonly string[]): Promise<Map<string, StoredEntityData[O]>> {
  const found = new Map<string, StoredEntityData[O]>();
  if (ids.length === 0) return found;
  const { rows } = await db.query<{ external_id: string; data: StoredEntityData[O] }>(
    'SELECT external_id, data FROM canonical_entities WHERE tenant_id = $1 AND object = $2 AND external_id = ANY($3::text[])',
    [tenantId, object, [...new Set(ids)]],
  );
  for (const r of rows) found.set(r.external_id, r.data);
  return found;
}

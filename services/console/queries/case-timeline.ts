import type { Pool } from '../../../platform/postgres/pool.ts';
import type { StoredMovementData, StoredNormalization } from '../../../schemas/families/stored.ts';

// What a case shows besides the episode: the movements its alerts cite and the parties behind
// its subjects. The case page and the case exports read movements here; case actions are read
// in services/cases/store.ts.

type Db = Pick<Pool, 'query'>;

export interface CitedMovement {
  alert_id: string;
  movement_id: string;
}

// Every movement external id any evidence entry of the episode's live alerts cites (evidence is
// append-only: an alert cites what each of its hits cited), by alert.
export async function citedMovements(db: Db, tenantId: string, episodeId: string): Promise<CitedMovement[]> {
  const { rows } = await db.query<CitedMovement>(
    `SELECT DISTINCT a.alert_id::text AS alert_id, m.movement_id
       FROM alerts a
       JOIN alert_evidence x ON x.tenant_id = a.tenant_id AND x.alert_id = a.alert_id
       CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(x.evidence -> 'movements') = 'array' THEN x.evidence -> 'movements' ELSE '[]'::jsonb END) m(movement_id)
      WHERE a.tenant_id = $1 AND a.episode_id = $2 AND a.mode = 'live'
      ORDER BY m.movement_id, alert_id`,
    [tenantId, episodeId],
  );
  return rows;
}

// A movement as a case shows it: the timeline uses its headline, an export (goAML report, case
// file) all of it.
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
  normalized: StoredNormalization | null;
  // Each member read as possibly absent: the exports write what they find.
  data: Partial<StoredMovementData>;
  // The movement that corrects this one (links.correction_of), when one that did not itself fail
  // does: the ledger's rule (decision 0024). The case then reports this one as corrected.
  corrected_by: string | null;
}

// The movements with these external ids the tenant holds, oldest first (by event time), at most
// `limit` when one is given.
export async function movementsByIds(db: Db, tenantId: string, ids: readonly string[], limit?: number): Promise<CaseMovementRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<CaseMovementRow>(
    `SELECT m.external_id, m.event_id, m.occurred_at, m.type, m.status, m.amount_value::text AS amount_value, m.amount_asset, m.amount_scale,
            m.debit_account_id, m.debit_party_id, m.credit_account_id, m.credit_party_id, m.normalized, m.data,
            (SELECT min(l.from_id) FROM canonical_movement_links l
              WHERE l.tenant_id = m.tenant_id AND l.to_id = m.external_id AND l.relation = 'correction_of'
                AND EXISTS (SELECT 1 FROM canonical_movements c WHERE c.tenant_id = m.tenant_id AND c.external_id = l.from_id AND c.status <> 'failed')) AS corrected_by
       FROM canonical_movements m WHERE m.tenant_id = $1 AND m.external_id = ANY($2::text[])
      ORDER BY m.occurred_at, m.external_id LIMIT $3`,
    [tenantId, ids, limit ?? null],
  );
  return rows;
}

// The parties behind the episode's subjects: party subjects themselves, and the holders of its
// account subjects as its live alerts name them (alerts.party_id).
export async function subjectParties(db: Db, tenantId: string, episodeId: string): Promise<Array<{ external_id: string; via_accounts: string[] }>> {
  const { rows } = await db.query<{ external_id: string; via_accounts: string[] }>(
    `SELECT party AS external_id, coalesce(array_agg(DISTINCT account ORDER BY account) FILTER (WHERE account IS NOT NULL), '{}') AS via_accounts
       FROM (SELECT m.subject_id AS party, NULL::text AS account FROM episode_members m
              WHERE m.tenant_id = $1 AND m.episode_id = $2 AND m.subject_kind = 'party' AND m.role = 'subject'
             UNION
             SELECT a.party_id, a.subject_id FROM alerts a
              WHERE a.tenant_id = $1 AND a.episode_id = $2 AND a.mode = 'live' AND a.subject_kind = 'account' AND a.party_id IS NOT NULL) p
      GROUP BY party ORDER BY party`,
    [tenantId, episodeId],
  );
  return rows;
}

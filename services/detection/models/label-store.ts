// Labels the service already holds: the case dispositions of episodes. An episode closed as
// suspicious_activity_reported is a true positive for the subjects of its alerts, one closed as
// false_positive a false positive for them; other dispositions (no further action, inconclusive)
// say nothing about the subject and are not labels. Each is taken at the episode's last alert:
// what the analyst judged.
//
// The subjects are the episode's live alerts' own, not its members: an account's alert makes its
// holder a member too, and labelling the holder would label every other account it holds, which
// no one judged. A party is a label only when a party was itself an alert's subject.
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { Label } from './labels.ts';

export async function dispositionLabels(db: Pick<Pool, 'query'>, tenantId: string): Promise<Label[]> {
  const { rows } = await db.query<{ subject_kind: 'account' | 'party'; subject_id: string; disposition: string; last_alert_at: Date }>({
    text: `SELECT DISTINCT a.subject_kind, a.subject_id, e.disposition, e.last_alert_at
             FROM episodes e
             JOIN alerts a ON a.tenant_id = e.tenant_id AND a.episode_id = e.episode_id AND a.mode = 'live'
            WHERE e.tenant_id = $1 AND e.disposition IN ('suspicious_activity_reported', 'false_positive')
              AND a.subject_kind IN ('account', 'party')
            ORDER BY e.last_alert_at, a.subject_kind, a.subject_id`,
    values: [tenantId],
  });
  return rows.map((r) => ({ kind: r.subject_kind, externalId: r.subject_id, label: r.disposition === 'suspicious_activity_reported', asOf: r.last_alert_at, source: 'disposition' as const }));
}

// The accounts each party holds (canonical accounts naming it as holder), for labels given on a
// party: the learned detector judges accounts.
export async function accountsOfParties(db: Pick<Pool, 'query'>, tenantId: string, parties: readonly string[]): Promise<Map<string, string[]>> {
  const held = new Map<string, string[]>();
  if (parties.length === 0) return held;
  const { rows } = await db.query<{ party: string; account: string }>({
    text: `SELECT data->>'holder_party_id' AS party, external_id AS account FROM canonical_entities
            WHERE tenant_id = $1 AND object = 'account' AND data->>'holder_party_id' = ANY($2::text[])
            ORDER BY 1, 2`,
    values: [tenantId, [...new Set(parties)]],
  });
  for (const r of rows) held.set(r.party, [...(held.get(r.party) ?? []), r.account]);
  return held;
}

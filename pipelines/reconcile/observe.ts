// What the service holds for a reconciliation's definition: the canonical movements of the scope,
// asset and period (count, sum in integer minor units, count per status), and, to explain a
// difference, the movement events of the same definition that were accepted but are not counted
// (still pending, held or quarantined on a missing reference, rejected by the pipeline).
import type { Pool, PoolClient } from '../../platform/postgres/pool.ts';
import type { Explanation } from '../../schemas/reconciliations.ts';

export interface Definition {
  tenantId: string;
  subjectKind: 'tenant' | 'account' | 'party';
  subjectId: string | null;
  direction: 'in' | 'out' | 'both';
  asset: string;
  from: Date;
  fromInclusive: boolean;
  to: Date;
  toInclusive: boolean;
}

export interface Observed {
  count: number;
  sum: bigint;
  statuses: Record<string, number>;
}

const SAMPLE = 5;
type Db = Pick<Pool | PoolClient, 'query'>;

// The scope's side(s) of a movement, as SQL over columns named by `debit` and `credit`.
function sides(def: Definition, debit: string, credit: string, param: string): string {
  // (The parameter is named even when unused, so it always has a type.)
  if (def.subjectKind === 'tenant') return `${param}::text IS NULL`;
  if (def.direction === 'in') return `${credit} = ${param}`;
  if (def.direction === 'out') return `${debit} = ${param}`;
  return `(${debit} = ${param} OR ${credit} = ${param})`;
}

function periodSql(column: string, def: Definition): string {
  return `${column} ${def.fromInclusive ? '>=' : '>'} $3 AND ${column} ${def.toInclusive ? '<=' : '<'} $4`;
}

export async function observe(db: Db, def: Definition): Promise<Observed> {
  const column = def.subjectKind === 'party' ? 'party_id' : 'account_id';
  const { rows } = await db.query<{ status: string; count: string; sum: string }>(
    `SELECT status, count(*)::text AS count, coalesce(sum(amount_value), 0)::text AS sum
       FROM canonical_movements
      WHERE tenant_id = $1 AND amount_asset = $2 AND ${periodSql('occurred_at', def)}
        AND ${sides(def, `debit_${column}`, `credit_${column}`, '$5')}
      GROUP BY status`,
    [def.tenantId, def.asset, def.from, def.to, def.subjectId],
  );
  const observed: Observed = { count: 0, sum: 0n, statuses: {} };
  for (const row of rows) {
    observed.count += Number(row.count);
    observed.sum += BigInt(row.sum);
    observed.statuses[row.status] = Number(row.count);
  }
  return observed;
}

// Accepted movement events of the definition not counted in `observe`, by reason, with a sample.
// Their legs are read from the event as sent; a party's are its own legs and its accounts' legs.
export async function unsettled(db: Db, def: Definition): Promise<Explanation['unsettled']> {
  const leg = (side: 'debit' | 'credit') =>
    def.subjectKind === 'party'
      ? `(e->'data'->'${side}'->>'party_id' = $5 OR e->'data'->'${side}'->>'account_id' IN (SELECT external_id FROM party_accounts))`
      : `e->'data'->'${side}'->>'account_id' = $5`;
  const scope =
    def.subjectKind === 'tenant' ? 'true' : def.direction === 'in' ? leg('credit') : def.direction === 'out' ? leg('debit') : `(${leg('debit')} OR ${leg('credit')})`;
  const { rows } = await db.query<{ reason: Explanation['unsettled'][number]['reason']; count: number; sample: Array<{ event_id: string; external_id: string; occurred_at: string }> }>(
    `WITH party_accounts AS (
       SELECT external_id FROM canonical_entities
        WHERE tenant_id = $1 AND object = 'account' AND data->>'holder_party_id' = $5
     ), candidates AS (
       SELECT i.event_id, i.external_id, i.occurred_at, i.status, convert_from(i.raw_event, 'UTF8')::jsonb AS e
         FROM inbox_events i
        WHERE i.tenant_id = $1 AND i.object = 'movement' AND ${periodSql('i.occurred_at', def)} AND i.status <> 'processed'
     ), matching AS (
       SELECT event_id, external_id, occurred_at, status FROM candidates
        WHERE e->'data'->'amount'->>'asset' = $2 AND ${scope}
     )
     SELECT status AS reason, count(*)::int AS count,
            (array_agg(json_build_object('event_id', 'evt_' || event_id, 'external_id', external_id,
                                         'occurred_at', to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                       ORDER BY occurred_at, event_id))[1:${SAMPLE}] AS sample
       FROM matching GROUP BY status ORDER BY status`,
    [def.tenantId, def.asset, def.from, def.to, def.subjectId],
  );
  return rows.map((r) => ({ reason: r.reason, count: r.count, sample: r.sample }));
}

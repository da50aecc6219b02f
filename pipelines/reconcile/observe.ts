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
// Their legs are read from the event as sent, in code (a raw event is only bytes to the database,
// and one that could not be parsed there must not stop a comparison); a leg's party is its own
// party_id, else its account's holder, as the canonical model resolves it.
export async function unsettled(db: Db, def: Definition): Promise<Explanation['unsettled']> {
  const { rows } = await db.query<{ event_id: string; external_id: string; occurred_at: Date; status: Explanation['unsettled'][number]['reason']; raw_event: Buffer }>(
    `SELECT event_id, external_id, occurred_at, status, raw_event
       FROM inbox_events
      WHERE tenant_id = $1 AND $2::text IS NULL AND object = 'movement' AND ${periodSql('occurred_at', def)} AND status <> 'processed'
      ORDER BY occurred_at, event_id`,
    [def.tenantId, null, def.from, def.to],
  );
  const events = rows.flatMap((row) => {
    try {
      const data = (JSON.parse(row.raw_event.toString('utf8')) as { data?: { amount?: { asset?: unknown }; debit?: Leg; credit?: Leg } }).data;
      return data && data.amount?.asset === def.asset ? [{ row, data }] : [];
    } catch {
      return [];
    }
  });
  const unnamed = events.flatMap(({ data }) => [data.debit, data.credit]).filter((leg) => leg?.party_id === undefined && leg?.account_id !== undefined);
  const holders = def.subjectKind === 'party' ? await accountHolders(db, def.tenantId, unnamed.map((leg) => leg!.account_id!)) : new Map<string, string>();
  const partyOf = (leg: Leg | undefined) => leg?.party_id ?? (leg?.account_id !== undefined ? holders.get(leg.account_id) : undefined);
  const sideMatches = (leg: Leg | undefined) => (def.subjectKind === 'account' ? leg?.account_id === def.subjectId : partyOf(leg) === def.subjectId);
  const byReason = new Map<Explanation['unsettled'][number]['reason'], Explanation['unsettled'][number]>();
  for (const { row, data } of events) {
    const inScope =
      def.subjectKind === 'tenant' ||
      (def.direction !== 'out' && sideMatches(data.credit)) ||
      (def.direction !== 'in' && sideMatches(data.debit));
    if (!inScope) continue;
    const entry = byReason.get(row.status) ?? { reason: row.status, count: 0, sample: [] };
    entry.count += 1;
    if (entry.sample.length < SAMPLE) entry.sample.push({ event_id: `evt_${row.event_id}`, external_id: row.external_id, occurred_at: row.occurred_at.toISOString() });
    byReason.set(row.status, entry);
  }
  return [...byReason.values()].sort((a, b) => a.reason.localeCompare(b.reason));
}

interface Leg {
  account_id?: string;
  party_id?: string;
}

async function accountHolders(db: Db, tenantId: string, accounts: string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const { rows } = await db.query<{ external_id: string; holder: string }>(
    `SELECT external_id, data->>'holder_party_id' AS holder FROM canonical_entities
      WHERE tenant_id = $1 AND object = 'account' AND external_id = ANY ($2::text[])`,
    [tenantId, [...new Set(accounts)]],
  );
  return new Map(rows.map((r) => [r.external_id, r.holder]));
}

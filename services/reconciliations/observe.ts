// What the service holds for a reconciliation's definition: the canonical movements of the scope,
// asset and period with ledger semantics (ledger.ts): count and sum (integer minor units) over the
// counted statuses, count and sum per status, and the counted sum in the tenant's base asset.
import type { Pool, PoolClient } from '../../platform/postgres/pool.ts';
import { registryWith } from '../../schemas/assets/registry.ts';
import { entriesSql, entryParams, type Definition } from './ledger.ts';

export type { Definition } from './ledger.ts';

export interface Observed {
  // Over the counted statuses.
  count: number;
  sum: bigint;
  // Every status seen, after corrections and reversals (counted or not).
  statuses: Record<string, number>;
  statusSums: Record<string, bigint>;
  // The counted sum in the tenant's base asset; value null when a counted movement had no rate.
  base: { value: bigint | null; asset: string; scale: number };
}

type Db = Pick<Pool | PoolClient, 'query'>;

export async function observe(db: Db, def: Definition): Promise<Observed> {
  const { rows } = await db.query<{ status: string; count: string; sum: string; base_sum: string | null; base_missing: string }>(
    `${entriesSql(def)}
     SELECT status, count(*)::text AS count, coalesce(sum(sign * amount_value), 0)::text AS sum,
            coalesce(sum(sign * base_value), 0)::text AS base_sum, count(*) FILTER (WHERE base_value IS NULL)::text AS base_missing
       FROM entries WHERE NOT superseded AND NOT cancelled
      GROUP BY status`,
    entryParams(def),
  );
  const base = await baseAsset(db, def.tenantId);
  const observed: Observed = { count: 0, sum: 0n, statuses: {}, statusSums: {}, base: { value: 0n, ...base } };
  for (const row of rows) {
    observed.statuses[row.status] = Number(row.count);
    observed.statusSums[row.status] = BigInt(row.sum);
    if (!def.countedStatuses.includes(row.status)) continue;
    observed.count += Number(row.count);
    observed.sum += BigInt(row.sum);
    if (Number(row.base_missing) > 0) observed.base.value = null;
    else if (observed.base.value !== null) observed.base.value += BigInt(row.base_sum!);
  }
  return observed;
}

async function baseAsset(db: Db, tenantId: string): Promise<{ asset: string; scale: number }> {
  const { rows } = await db.query<{ base_asset: string; scale: number | null }>(
    `SELECT t.base_asset, a.scale FROM tenants t LEFT JOIN tenant_assets a ON a.tenant_id = t.tenant_id AND a.asset = t.base_asset WHERE t.tenant_id = $1`,
    [tenantId],
  );
  const row = rows[0]!;
  return { asset: row.base_asset, scale: row.scale ?? registryWith(new Map()).scaleOf(row.base_asset) ?? 0 };
}

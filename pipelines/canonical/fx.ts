import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { convert, decimalToScaled } from '../../platform/fx/math.ts';
import type { StoredNormalization } from '../../schemas/families/stored.ts';

interface Money {
  value: string;
  asset: string;
  scale: number;
}

// What normaliseMany gives is what the movement stores.
export type Normalization = StoredNormalization;

export interface NormalisationRequest {
  amount: Money;
  baseAsset: string;
  registry: AssetRegistry;
  occurredAt: string;
}

// For each request, the amount in the tenant's base asset at the movement's event time, from
// the latest rate valid then, whichever way round it was quoted: a direct rate for the pair or
// the inverse of the reverse pair. The newest valid_from wins; a direct rate only breaks a tie
// (decision 0006). Preferring any direct rate kept an older one over a newer inverse one, so a
// treasury that quotes against its base (USD/EUR) after an older EUR/USD file was converted at
// the stale rate forever. Undefined when the amount is already in the base asset. One query for
// the whole batch.
export async function normaliseMany(db: Pick<PoolClient, 'query'>, requests: NormalisationRequest[], now: Date): Promise<Array<Normalization | undefined>> {
  const results: Array<Normalization | undefined> = new Array(requests.length).fill(undefined);
  const needed = requests.map((r, i) => ({ r, i })).filter(({ r }) => r.amount.asset !== r.baseAsset);
  if (needed.length === 0) return results;
  const { rows } = await db.query<{ i: number; rate: string | null; rate_scale: number | null; file_id: string | null; valid_from: Date | null; direction: 'direct' | 'inverse' | null }>({
    name: 'fx-rates-at',
    text: `SELECT u.i, r.rate, r.rate_scale, r.file_id, r.valid_from, r.direction
             FROM unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[]) AS u(i, asset, base, at)
             LEFT JOIN LATERAL (
               SELECT * FROM (
                 (SELECT rate, rate_scale, file_id, valid_from, 'direct' AS direction, 0 AS preference FROM fx_rates
                   WHERE base = u.asset AND quote = u.base AND valid_from <= u.at ORDER BY valid_from DESC, loaded_at DESC LIMIT 1)
                 UNION ALL
                 (SELECT rate, rate_scale, file_id, valid_from, 'inverse', 1 FROM fx_rates
                   WHERE base = u.base AND quote = u.asset AND valid_from <= u.at ORDER BY valid_from DESC, loaded_at DESC LIMIT 1)
               ) candidates ORDER BY valid_from DESC, preference LIMIT 1
             ) r ON true`,
    values: [needed.map(({ i }) => i), needed.map(({ r }) => r.amount.asset), needed.map(({ r }) => r.baseAsset), needed.map(({ r }) => r.occurredAt)],
  });
  for (const row of rows) {
    const { amount, baseAsset, registry, occurredAt } = requests[row.i]!;
    const toScale = registry.scaleOf(baseAsset);
    if (row.rate === null || row.rate_scale === null || row.direction === null || toScale === undefined) {
      results[row.i] = { status: 'unavailable', reason: 'no_rate', pair: `${amount.asset}/${baseAsset}`, at: occurredAt };
      continue;
    }
    const value = convert({
      value: BigInt(amount.value),
      fromScale: amount.scale,
      toScale,
      rate: decimalToScaled(row.rate, row.rate_scale),
      rateScale: row.rate_scale,
      direction: row.direction,
    });
    results[row.i] = {
      status: 'normalized',
      amount: { value: value.toString(), asset: baseAsset, scale: toScale },
      fx: {
        base: row.direction === 'direct' ? amount.asset : baseAsset,
        quote: row.direction === 'direct' ? baseAsset : amount.asset,
        rate: row.rate,
        rate_scale: row.rate_scale,
        direction: row.direction,
        rate_file_id: row.file_id!,
        rate_valid_from: row.valid_from!.toISOString(),
        computed_at: now.toISOString(),
      },
    };
  }
  return results;
}

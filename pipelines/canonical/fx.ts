import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { convertWith, ratesAt } from '../../platform/fx/rates.ts';
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
// the latest rate valid then (platform/fx/rates.ts says which). Undefined when the amount is
// already in the base asset. One query for the whole batch.
export async function normaliseMany(db: Pick<PoolClient, 'query'>, requests: NormalisationRequest[], now: Date): Promise<Array<Normalization | undefined>> {
  const results: Array<Normalization | undefined> = new Array(requests.length).fill(undefined);
  const needed = requests.map((r, i) => ({ r, i })).filter(({ r }) => r.amount.asset !== r.baseAsset);
  const rates = await ratesAt(db, needed.map(({ r }) => ({ asset: r.amount.asset, base: r.baseAsset, at: r.occurredAt })));
  needed.forEach(({ r, i }, k) => {
    const { amount, baseAsset, registry, occurredAt } = r;
    const rate = rates[k];
    const toScale = registry.scaleOf(baseAsset);
    if (rate === undefined || toScale === undefined) {
      results[i] = { status: 'unavailable', reason: 'no_rate', pair: `${amount.asset}/${baseAsset}`, at: occurredAt };
      return;
    }
    const value = convertWith(rate, BigInt(amount.value), amount.scale, toScale);
    results[i] = {
      status: 'normalized',
      amount: { value: value.toString(), asset: baseAsset, scale: toScale },
      fx: {
        base: rate.direction === 'direct' ? amount.asset : baseAsset,
        quote: rate.direction === 'direct' ? baseAsset : amount.asset,
        rate: rate.rate,
        rate_scale: rate.rateScale,
        direction: rate.direction,
        rate_file_id: rate.fileId,
        rate_valid_from: rate.validFrom.toISOString(),
        computed_at: now.toISOString(),
      },
    };
  });
  return results;
}

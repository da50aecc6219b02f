import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { convert, decimalToScaled } from './fx-math.ts';

export interface Money {
  value: string;
  asset: string;
  scale: number;
}

export type Normalization =
  | {
      status: 'normalized';
      amount: Money;
      fx: {
        base: string;
        quote: string;
        rate: string;
        rate_scale: number;
        direction: 'direct' | 'inverse';
        rate_file_id: string;
        rate_valid_from: string;
        computed_at: string;
      };
    }
  // No rate for the pair at that time: no amount, and the reason. Never a guess.
  | { status: 'unavailable'; reason: 'no_rate'; pair: string; at: string };

interface RateRow {
  rate: string;
  rate_scale: number;
  file_id: string;
  valid_from: Date;
}

// The amount in the tenant's base asset at the movement's event time, from the latest rate valid
// then (a direct rate for the pair, else the inverse of the reverse pair). Undefined when the
// amount is already in the base asset.
export async function normalise(
  db: Pick<PoolClient, 'query'>,
  amount: Money,
  baseAsset: string,
  registry: AssetRegistry,
  occurredAt: string,
  now: Date,
): Promise<Normalization | undefined> {
  if (amount.asset === baseAsset) return undefined;
  const toScale = registry.scaleOf(baseAsset);
  const find = async (base: string, quote: string) =>
    (
      await db.query<RateRow>({
        name: 'fx-rate-at',
        text: `SELECT rate, rate_scale, file_id, valid_from FROM fx_rates
                WHERE base = $1 AND quote = $2 AND valid_from <= $3
                ORDER BY valid_from DESC, loaded_at DESC LIMIT 1`,
        values: [base, quote, occurredAt],
      })
    ).rows[0];
  let direction: 'direct' | 'inverse' = 'direct';
  let rate = await find(amount.asset, baseAsset);
  if (!rate) {
    direction = 'inverse';
    rate = await find(baseAsset, amount.asset);
  }
  if (!rate || toScale === undefined) {
    return { status: 'unavailable', reason: 'no_rate', pair: `${amount.asset}/${baseAsset}`, at: occurredAt };
  }
  const value = convert({
    value: BigInt(amount.value),
    fromScale: amount.scale,
    toScale,
    rate: decimalToScaled(rate.rate, rate.rate_scale),
    rateScale: rate.rate_scale,
    direction,
  });
  return {
    status: 'normalized',
    amount: { value: value.toString(), asset: baseAsset, scale: toScale },
    fx: {
      base: direction === 'direct' ? amount.asset : baseAsset,
      quote: direction === 'direct' ? baseAsset : amount.asset,
      rate: rate.rate,
      rate_scale: rate.rate_scale,
      direction,
      rate_file_id: rate.file_id,
      rate_valid_from: rate.valid_from.toISOString(),
      computed_at: now.toISOString(),
    },
  };
}

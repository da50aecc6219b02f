// The FX rate store's lookup: which loaded rate converts an asset into a tenant's base asset at an
// instant (decision 0006). Shared by the canonical pipeline (a movement's normalized amount) and
// detection (a declared amount in another asset), so both convert with the same rate.
import type { PoolClient } from '../postgres/pool.ts';
import { convert, decimalToScaled } from './math.ts';

export interface RateAsk {
  // Convert `asset` into `base` with the rate valid at `at`.
  asset: string;
  base: string;
  at: string | Date;
}

export interface RateFound {
  // As loaded: the decimal text and its places. direct: 1 asset = rate base; inverse: 1 base = rate asset.
  rate: string;
  rateScale: number;
  direction: 'direct' | 'inverse';
  fileId: string;
  validFrom: Date;
}

// For each ask, the latest rate valid at its instant, whichever way round it was quoted: a direct
// rate for the pair or the inverse of the reverse pair. The newest valid_from wins; a direct rate
// only breaks a tie. (Preferring any direct rate kept an older one over a newer inverse one, so a
// treasury that quotes against its base, USD/EUR, after an older EUR/USD file was converted at the
// stale rate forever.) Undefined where no rate was valid then. One query for all the asks.
export async function ratesAt(db: Pick<PoolClient, 'query'>, asks: readonly RateAsk[]): Promise<Array<RateFound | undefined>> {
  const found: Array<RateFound | undefined> = new Array(asks.length).fill(undefined);
  if (asks.length === 0) return found;
  const { rows } = await db.query<{ i: number; rate: string; rate_scale: number; file_id: string; valid_from: Date; direction: 'direct' | 'inverse' }>({
    name: 'fx-rates-at',
    text: `SELECT u.i, r.rate, r.rate_scale, r.file_id, r.valid_from, r.direction
             FROM unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[]) AS u(i, asset, base, at)
             JOIN LATERAL (
               SELECT * FROM (
                 (SELECT rate, rate_scale, file_id, valid_from, 'direct' AS direction, 0 AS preference FROM fx_rates
                   WHERE base = u.asset AND quote = u.base AND valid_from <= u.at ORDER BY valid_from DESC, loaded_at DESC LIMIT 1)
                 UNION ALL
                 (SELECT rate, rate_scale, file_id, valid_from, 'inverse', 1 FROM fx_rates
                   WHERE base = u.base AND quote = u.asset AND valid_from <= u.at ORDER BY valid_from DESC, loaded_at DESC LIMIT 1)
               ) candidates ORDER BY valid_from DESC, preference LIMIT 1
             ) r ON true`,
    values: [asks.map((_, i) => i), asks.map((a) => a.asset), asks.map((a) => a.base), asks.map((a) => a.at)],
  });
  for (const row of rows) {
    found[row.i] = { rate: row.rate, rateScale: row.rate_scale, direction: row.direction, fileId: row.file_id, validFrom: row.valid_from };
  }
  return found;
}

// Minor units at `fromScale` to minor units at `toScale` with a rate ratesAt found: exact, rounded
// once, half to even.
export function convertWith(rate: RateFound, value: bigint, fromScale: number, toScale: number): bigint {
  return convert({ value, fromScale, toScale, rate: decimalToScaled(rate.rate, rate.rateScale), rateScale: rate.rateScale, direction: rate.direction });
}

import { divideHalfEven } from '../../../platform/fx/math.ts';

// Money of the exports: integer minor units turned into decimal text by the asset's scale, in
// integer arithmetic only (never a float).

// 1234567n at scale 3 → "1234.567"; scale 0 → "1234567".
export function minorToDecimal(minor: bigint, scale: number): string {
  if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`bad scale ${scale}`);
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  if (scale === 0) return `${sign}${abs}`;
  const unit = 10n ** BigInt(scale);
  return `${sign}${abs / unit}.${(abs % unit).toString().padStart(scale, '0')}`;
}

// For people: thousands grouped, every decimal of the scale kept, the asset after the number:
// 15488800n, USD, 2 → "154,888.00 USD".
export function formatMoney(minor: bigint, asset: string, scale: number): string {
  const [whole, fraction] = minorToDecimal(minor, scale).split('.');
  const sign = whole!.startsWith('-') ? '-' : '';
  const digits = sign ? whole!.slice(1) : whole!;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${grouped}${fraction === undefined ? '' : `.${fraction}`} ${asset}`;
}

// A decimal rate (text with rateScale places) as local units per foreign unit, with at most
// `places` decimals, trailing zeros dropped. direct: 1 foreign = rate local; inverse: 1 local =
// rate foreign, so the rate is inverted.
export function localPerForeign(rate: bigint, rateScale: number, direction: 'direct' | 'inverse', places: number): string {
  const scaled =
    direction === 'direct'
      ? rateScale > places
        ? divideHalfEven(rate, 10n ** BigInt(rateScale - places))
        : rate * 10n ** BigInt(places - rateScale)
      : divideHalfEven(10n ** BigInt(rateScale + places), rate);
  return trimZeros(minorToDecimal(scaled, places));
}

function trimZeros(decimal: string): string {
  return decimal.includes('.') ? decimal.replace(/\.?0+$/, '') : decimal;
}

// Money arithmetic for behaviour detectors: base-asset minor units stay bigint; only ratios
// (how far a threshold was exceeded) become numbers.
import { moneyParameter } from '../../framework/money-params.ts';

// A money parameter: base-asset minor units, its default in USD cents (framework/money-params.ts).
export const minorUnits = moneyParameter;

// a / b as a number; Infinity when b is zero and a is not.
export function ratio(a: bigint, b: bigint): number {
  if (b === 0n) return a === 0n ? 0 : Number.POSITIVE_INFINITY;
  return Number(a) / Number(b);
}

export function sumOf(values: Iterable<bigint | null>): bigint {
  let total = 0n;
  for (const value of values) total += value ?? 0n;
  return total;
}

export const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);

// A ratio for thresholds and summaries: two decimals, Infinity spelt out.
export function round2(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 100) / 100 : value;
}

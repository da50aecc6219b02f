// Materiality: how far observed may be from declared and still be matched. A sum difference is
// within an absolute threshold (minor units of the asset) or a relative one (basis points of the
// declared amount, compared in integers: |difference| * 10000 <= bps * |declared|); a count
// difference within the declared count threshold (0 unless given). No threshold: exact.
export interface Tolerance {
  sumMinor: bigint | null;
  sumBps: number | null;
  count: number;
}

export const EXACT: Tolerance = { sumMinor: null, sumBps: null, count: 0 };

const abs = (n: bigint) => (n < 0n ? -n : n);

export function sumWithin(tolerance: Tolerance, declared: bigint, observed: bigint): boolean {
  const difference = abs(observed - declared);
  if (difference === 0n) return true;
  if (tolerance.sumMinor !== null) return difference <= tolerance.sumMinor;
  if (tolerance.sumBps !== null) return difference * 10_000n <= BigInt(tolerance.sumBps) * abs(declared);
  return false;
}

export function countWithin(tolerance: Tolerance, declared: number, observed: number): boolean {
  return Math.abs(observed - declared) <= tolerance.count;
}

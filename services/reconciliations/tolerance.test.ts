import { describe, expect, it } from 'vitest';
import { countWithin, EXACT, sumWithin } from './tolerance.ts';

describe('materiality thresholds', () => {
  it('is exact without one', () => {
    expect(sumWithin(EXACT, 1000n, 1000n)).toBe(true);
    expect(sumWithin(EXACT, 1000n, 1001n)).toBe(false);
    expect(countWithin(EXACT, 3, 4)).toBe(false);
  });

  it('takes an absolute difference in minor units, either way', () => {
    const t = { ...EXACT, sumMinor: 50n };
    expect(sumWithin(t, 10_000n, 10_050n)).toBe(true);
    expect(sumWithin(t, 10_000n, 9_950n)).toBe(true);
    expect(sumWithin(t, 10_000n, 10_051n)).toBe(false);
  });

  it('takes a relative difference in basis points of the declared sum, in integers', () => {
    const t = { ...EXACT, sumBps: 25 };
    // 0.25% of 1,000,000 is 2,500.
    expect(sumWithin(t, 1_000_000n, 1_002_500n)).toBe(true);
    expect(sumWithin(t, 1_000_000n, 1_002_501n)).toBe(false);
    expect(sumWithin(t, -1_000_000n, -997_500n)).toBe(true);
    // Nothing declared: any difference is material.
    expect(sumWithin(t, 0n, 1n)).toBe(false);
    // Beyond 2^53, still exact.
    expect(sumWithin(t, 10n ** 30n, 10n ** 30n + 25n * 10n ** 26n)).toBe(true);
    expect(sumWithin(t, 10n ** 30n, 10n ** 30n + 25n * 10n ** 26n + 1n)).toBe(false);
  });

  it('takes a count difference', () => {
    expect(countWithin({ ...EXACT, count: 1 }, 3, 4)).toBe(true);
    expect(countWithin({ ...EXACT, count: 1 }, 3, 1)).toBe(false);
  });
});

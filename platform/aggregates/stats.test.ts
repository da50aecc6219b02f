import { describe, expect, it } from 'vitest';
import { roundTest, roundUnitsFraction } from './stats.ts';

// The rule on integers alone, as the stores apply it: value · 10^decimals is a multiple of
// scaled · 10^scale.
function reference(units: number, value: bigint, scale: number): boolean {
  const { scaled, decimals } = roundUnitsFraction(units);
  const divisor = scaled * 10n ** BigInt(scale);
  return divisor !== 0n && (value * 10n ** decimals) % divisor === 0n;
}

describe('roundTest', () => {
  it('answers by the integer rule, for amounts within and beyond 2^53, whole and fractional units', () => {
    const safe = BigInt(Number.MAX_SAFE_INTEGER);
    const values = [0n, 1n, 99n, 100n, 5_000n, 10_000n, 12_345n, 1_000_000n, -20_000n, -20_001n, safe - 1n, safe, safe + 1n, (safe + 1n) * 100n, (safe + 1n) * 100n + 1n, 10n ** 30n, 10n ** 30n + 7n];
    let round = 0;
    for (const units of [100, 1, 50, 0.5, 0.25, 1_000_000]) {
      for (const scale of [0, 2, 3, 8]) {
        for (const value of values) {
          const expected = reference(units, value, scale);
          expect(roundTest(units)(value, scale), `${value} at scale ${scale}, units ${units}`).toBe(expected);
          if (expected) round++;
        }
      }
    }
    // Both answers occur, on both sides of 2^53.
    expect(round).toBeGreaterThan(20);
    expect(roundTest(100)((safe + 1n) * 100n * 100n, 2)).toBe(true);
    expect(roundTest(100)((safe + 1n) * 100n * 100n + 1n, 2)).toBe(false);
    expect(roundTest(100)(10_000n, 2)).toBe(true);
    expect(roundTest(100)(10_050n, 2)).toBe(false);
  });
});

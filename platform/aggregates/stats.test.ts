import { describe, expect, it } from 'vitest';
import { roundTest } from './stats.ts';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

describe('roundTest', () => {
  // [round unit in major units, amount value as sent, its scale, round?], each worked out by hand.
  const cases: Array<[number, bigint, number, boolean]> = [
    [100, 10_000n, 2, true], // 100.00
    [100, 15_000n, 2, false], // 150.00
    [100, 10_050n, 2, false], // 100.50
    [100, 0n, 2, true], // 0.00: every unit divides zero
    [100, -20_000n, 2, true], // -200.00
    [100, -20_001n, 2, false],
    [100, 5_000n, 0, true], // 5,000 of an asset without minor units
    [100, 5_050n, 0, false],
    [100, 100_000_000n, 8, false], // 1.00000000
    [100, 10_000_000_000n, 8, true], // 100.00000000
    [1, 1_000n, 3, true], // 1.000
    [1, 1_500n, 3, false], // 1.500
    [50, 5_000n, 2, true], // 50.00
    [50, 7_500n, 2, false], // 75.00
    [0.5, 150n, 2, true], // 1.50 is three halves
    [0.5, 125n, 2, false], // 1.25
    [0.25, 125n, 2, true], // 1.25 is five quarters
    [0.25, 3n, 0, true], // 3 is twelve quarters
    [1_000_000, 100_000_000n, 2, true], // 1,000,000.00
    [1_000_000, 100_000_001n, 2, false],
    // Beyond 2^53: exact, never through floating point.
    [100, (SAFE + 1n) * 10_000n, 2, true], // (2^53)·100.00
    [100, (SAFE + 1n) * 10_000n + 1n, 2, false],
    [1, 10n ** 30n, 2, true],
    [1, 10n ** 30n + 7n, 2, false],
  ];

  it.each(cases)('with units of %d, %d at scale %d is round: %s', (units, value, scale, round) => {
    expect(roundTest(units)(value, scale)).toBe(round);
  });

  it('answers each unit by its own rule whatever was asked before (the tests are kept per unit and scale)', () => {
    for (const [units, value, scale, round] of [...cases].reverse()) expect(roundTest(units)(value, scale), `${value}/${scale} by ${units}`).toBe(round);
  });
});

import { describe, expect, it } from 'vitest';
import { perParameters } from './per-parameters.ts';

describe('perParameters', () => {
  it('derives once per parameter object, and again for another object with the same values', () => {
    let derivations = 0;
    const sorted = perParameters((hours: readonly number[]) => {
      derivations += 1;
      return [...new Set(hours)].sort((a, b) => a - b);
    });
    const params = [48, 24, 48];
    expect(sorted(params)).toEqual([24, 48]);
    expect(sorted(params)).toBe(sorted(params));
    expect(derivations).toBe(1);
    expect(sorted([48, 24, 48])).toEqual([24, 48]);
    expect(derivations).toBe(2);
  });
});

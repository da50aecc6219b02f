import { describe, expect, it } from 'vitest';
import { convert, decimalToScaled, divideHalfEven } from './math.ts';

describe('exact FX conversion', () => {
  it('converts with a direct rate and rounds half to even', () => {
    // 100.00 EUR at 1.0825 USD/EUR = 108.25 USD
    expect(convert({ value: 10000n, fromScale: 2, toScale: 2, rate: 10825n, rateScale: 4, direction: 'direct' })).toBe(10825n);
    // 0.05 EUR at 1.5 = 0.075 → 0.08 (half to even: 7.5 → 8)
    expect(convert({ value: 5n, fromScale: 2, toScale: 2, rate: 15n, rateScale: 1, direction: 'direct' })).toBe(8n);
    // 0.03 EUR at 1.5 = 0.045 → 0.04 (4.5 → 4)
    expect(convert({ value: 3n, fromScale: 2, toScale: 2, rate: 15n, rateScale: 1, direction: 'direct' })).toBe(4n);
  });

  it('handles different scales on each side', () => {
    // 1000 JPY (scale 0) at 0.0067 USD/JPY = 6.70 USD
    expect(convert({ value: 1000n, fromScale: 0, toScale: 2, rate: 67n, rateScale: 4, direction: 'direct' })).toBe(670n);
    // 1.000 KWD (scale 3) at 3.25 USD/KWD = 3.25 USD
    expect(convert({ value: 1000n, fromScale: 3, toScale: 2, rate: 325n, rateScale: 2, direction: 'direct' })).toBe(325n);
  });

  it('converts with an inverse rate', () => {
    // Rate file says 1 USD = 0.92 EUR; 100.00 EUR → 108.70 USD (108.695... → 108.70)
    expect(convert({ value: 10000n, fromScale: 2, toScale: 2, rate: 92n, rateScale: 2, direction: 'inverse' })).toBe(10870n);
  });

  it('keeps the sign of reversal legs', () => {
    expect(convert({ value: -10000n, fromScale: 2, toScale: 2, rate: 10825n, rateScale: 4, direction: 'direct' })).toBe(-10825n);
    expect(divideHalfEven(-5n, 2n)).toBe(-2n);
    expect(divideHalfEven(-7n, 2n)).toBe(-4n);
  });

  it('reads decimal rate text exactly', () => {
    expect(decimalToScaled('1.0825', 6)).toBe(1082500n);
    expect(decimalToScaled('12', 2)).toBe(1200n);
    expect(decimalToScaled('0.000001', 6)).toBe(1n);
  });
});

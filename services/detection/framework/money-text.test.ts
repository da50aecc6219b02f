import { describe, expect, it } from 'vitest';
import { formatMoney } from './money-text.ts';

describe('money in summaries', () => {
  it('writes major units of the ISO scale, grouped, whatever the detector family', () => {
    expect(formatMoney(1234567n, 'USD')).toBe('12,345.67 USD');
    expect(formatMoney('-5', 'USD')).toBe('-0.05 USD');
    expect(formatMoney(1500000n, 'JPY')).toBe('1,500,000 JPY');
    expect(formatMoney('1234567', 'BHD')).toBe('1,234.567 BHD');
  });

  it('says minor units when the asset has no known scale', () => {
    expect(formatMoney(1234n, 'X-POINTS')).toBe('1234 minor units of X-POINTS');
  });
});

import { describe, expect, it } from 'vitest';
import { useAssets } from './assets.ts';
import { formatMinor, formatMoney, parseAmount } from './money.ts';

useAssets('acme', {
  base_asset: { asset: 'USD', scale: 2 },
  assets: [
    { asset: 'USD', scale: 2 },
    { asset: 'JPY', scale: 0 },
    { asset: 'BHD', scale: 3 },
    { asset: 'X-PTS', scale: 4 },
  ],
});

describe('formatMoney', () => {
  it.each([
    ['15488800', 'USD', '154,888.00 USD'],
    [15488800, 'USD', '154,888.00 USD'],
    [15488800n, 'USD', '154,888.00 USD'],
    ['5', 'USD', '0.05 USD'],
    ['0', 'USD', '0.00 USD'],
    ['-123456', 'USD', '-1,234.56 USD'],
    ['-5', 'USD', '-0.05 USD'],
    ['-0', 'USD', '0.00 USD'],
    ['000120', 'USD', '1.20 USD'],
    ['1234567', 'JPY', '1,234,567 JPY'],
    ['1234567', 'BHD', '1,234.567 BHD'],
    ['12345', 'X-PTS', '1.2345 X-PTS'],
  ] as const)('%s %s is %s', (minor, asset, shown) => expect(formatMoney(minor, asset)).toBe(shown));

  it('keeps every digit beyond 2^53 (no float on the way)', () => {
    expect(formatMoney(123456789012345678901234567890n, 'USD')).toBe('1,234,567,890,123,456,789,012,345,678.90 USD');
    expect(formatMoney('9007199254740993', 'USD')).toBe('90,071,992,547,409.93 USD');
  });

  it('says "minor units" for an asset the tenant did not register, instead of guessing a scale', () => {
    expect(formatMoney('15488800', 'X-UNKNOWN')).toBe('15,488,800 X-UNKNOWN (minor units)');
  });

  it('shows what is not an integer as it came, never NaN', () => {
    expect(formatMoney('12.5', 'USD')).toBe('12.5 USD');
    expect(formatMoney(1.5, 'USD')).toBe('1.5 USD');
    expect(formatMoney(2 ** 60, 'USD')).toBe(`${2 ** 60} USD`);
  });

  it('uses the scale a money object carries', () => {
    expect(formatMinor('30150', 2, 'USD')).toBe('301.50 USD');
    expect(formatMinor('7', 0, '')).toBe('7');
  });
});

describe('parseAmount', () => {
  it.each([
    ['1,500.5', 2, '150050'],
    ['1500', 2, '150000'],
    ['0.05', 2, '5'],
    ['0', 2, '0'],
    ['12 345', 0, '12345'],
    ['7.', 3, '7000'],
    ['98765432109876543210.12', 2, '9876543210987654321012'],
  ] as const)('%s at scale %i is %s minor units', (text, scale, minor) => expect(parseAmount(text, scale)).toBe(minor));

  it.each([['1.234', 2], ['-5', 2], ['1e3', 2], ['', 2], ['abc', 2], ['1.5', 0]] as const)('refuses %s at scale %i', (text, scale) => expect(parseAmount(text, scale)).toBeUndefined());
});

import { describe, expect, it } from 'vitest';
import { checkRateFile } from './rate-files.ts';

const HEADER = 'base,quote,rate,rate_scale,valid_from';

describe('rate files are checked whole', () => {
  it('accepts a well-formed file', () => {
    const check = checkRateFile(`${HEADER}\nEUR,USD,1.0825,4,2026-08-01T00:00:00Z\nJPY,USD,0.0067,6,2026-08-01T00:00:00Z\n`);
    expect(check).toEqual({
      ok: true,
      rows: [
        { base: 'EUR', quote: 'USD', rate: '1.0825', rateScale: 4, validFrom: '2026-08-01T00:00:00.000Z' },
        { base: 'JPY', quote: 'USD', rate: '0.0067', rateScale: 6, validFrom: '2026-08-01T00:00:00.000Z' },
      ],
    });
  });

  it.each([
    ['EUR,USD,1.08251,4,2026-08-01T00:00:00Z', 'more than rate_scale'],
    ['EUR,USD,1,0825,4,2026-08-01T00:00:00Z', 'expected 5 fields'],
    ['EUR,USD,-1.0,4,2026-08-01T00:00:00Z', 'positive decimal'],
    ['EUR,USD,0.000,4,2026-08-01T00:00:00Z', 'greater than zero'],
    ['EUR,USD,1e3,4,2026-08-01T00:00:00Z', 'positive decimal'],
    ['eur,USD,1.0,4,2026-08-01T00:00:00Z', 'not an asset code'],
    ['EUR,EUR,1.0,4,2026-08-01T00:00:00Z', 'same asset'],
    ['EUR,USD,1.0,19,2026-08-01T00:00:00Z', 'rate_scale'],
    ['EUR,USD,1.0,4,2026-08-01', 'valid_from'],
  ])('refuses the whole file for one bad row: %s', (row, message) => {
    const check = checkRateFile(`${HEADER}\nGBP,USD,1.25,2,2026-08-01T00:00:00Z\n\n${row}\n`);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors).toEqual([{ line: 4, message: expect.stringContaining(message) }]);
  });

  it('refuses a wrong header, an empty file and a repeated rate', () => {
    expect(checkRateFile('base,quote,rate\nEUR,USD,1.0')).toMatchObject({ ok: false, errors: [{ line: 1 }] });
    expect(checkRateFile(`${HEADER}\n`)).toMatchObject({ ok: false });
    const twice = checkRateFile(`${HEADER}\nEUR,USD,1.0,1,2026-08-01T00:00:00Z\nEUR,USD,1.1,1,2026-08-01T02:00:00+02:00\n`);
    expect(twice).toMatchObject({ ok: false, errors: [{ line: 3, message: expect.stringContaining('second rate') }] });
  });
});

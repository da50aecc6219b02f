import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { loadRateFile } from './rate-files.ts';
import { convertWith, ratesAt } from './rates.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  // EUR/USD quoted directly in June; the treasury then quotes USD/EUR (0.80, so 1 EUR = 1.25 USD)
  // from October. Both are loaded; only the newest valid at the instant asked about may convert.
  const rates = [
    'base,quote,rate,rate_scale,valid_from',
    'EUR,USD,1.2000,4,2026-06-01T00:00:00Z',
    'USD,EUR,0.80,2,2026-10-01T00:00:00Z',
    'GBP,USD,1.25,2,2026-06-01T00:00:00Z',
    'USD,GBP,0.50,2,2026-06-01T00:00:00Z',
  ].join('\n');
  expect((await loadRateFile(db.pool, 'rates.csv', rates, new Date('2026-11-29T12:00:00Z'))).kind).toBe('loaded');
});
afterAll(async () => db?.drop());

const usd = (asset: string, at: string) => ({ asset, base: 'USD', at });

describe('ratesAt', () => {
  it('finds the latest rate valid at the instant, whichever way round it was quoted', async () => {
    const [november, july, may] = await ratesAt(db.pool, [usd('EUR', '2026-11-01T00:00:00Z'), usd('EUR', '2026-07-01T00:00:00Z'), usd('EUR', '2026-05-01T00:00:00Z')]);
    // November: the October inverse rate, not the older direct one.
    expect(november).toMatchObject({ rate: '0.80', rateScale: 2, direction: 'inverse', validFrom: new Date('2026-10-01T00:00:00Z') });
    expect(convertWith(november!, 10000n, 2, 2)).toBe(12500n);
    // July: only the June direct rate was valid yet; May: none.
    expect(july).toMatchObject({ rate: '1.2000', rateScale: 4, direction: 'direct', validFrom: new Date('2026-06-01T00:00:00Z') });
    expect(convertWith(july!, 10000n, 2, 2)).toBe(12000n);
    expect(may).toBeUndefined();
  });

  it('prefers the direct rate when both directions are valid from the same instant', async () => {
    const [gbp] = await ratesAt(db.pool, [usd('GBP', '2026-07-01T00:00:00Z')]);
    expect(gbp).toMatchObject({ rate: '1.25', direction: 'direct' });
  });
});

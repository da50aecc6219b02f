import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRateFile } from '../../platform/fx/rate-files.ts';
import { isoRegistry } from '../../schemas/assets/registry.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { normaliseMany } from './fx.ts';

let db: TestDatabase;
const now = new Date('2026-11-29T12:00:00Z');
beforeAll(async () => {
  db = await createTestDatabase();
  // EUR/USD quoted directly in June; the treasury then quotes USD/EUR (0.80, so 1 EUR = 1.25 USD)
  // from October. Both are loaded; only the newest valid at the movement's time may convert it.
  const rates = [
    'base,quote,rate,rate_scale,valid_from',
    'EUR,USD,1.2000,4,2026-06-01T00:00:00Z',
    'USD,EUR,0.80,2,2026-10-01T00:00:00Z',
    'GBP,USD,1.25,2,2026-06-01T00:00:00Z',
    'USD,GBP,0.50,2,2026-06-01T00:00:00Z',
  ].join('\n');
  expect((await loadRateFile(db.pool, 'rates.csv', rates, now)).kind).toBe('loaded');
});
afterAll(async () => db?.drop());

const eur = (occurredAt: string, asset = 'EUR') => ({ amount: { value: '10000', asset, scale: 2 }, baseAsset: 'USD', registry: isoRegistry, occurredAt });

describe('normaliseMany', () => {
  it('converts with the latest rate valid at the event time, whichever way round it was quoted', async () => {
    const [november, july] = await normaliseMany(db.pool, [eur('2026-11-01T00:00:00Z'), eur('2026-07-01T00:00:00Z')], now);
    // November: the October inverse rate (10000 / 0.80), not the older direct one (10000 × 1.2).
    expect(november).toMatchObject({
      status: 'normalized',
      amount: { value: '12500', asset: 'USD', scale: 2 },
      fx: { base: 'USD', quote: 'EUR', rate: '0.80', direction: 'inverse', rate_valid_from: '2026-10-01T00:00:00.000Z' },
    });
    // July: only the June direct rate was valid yet.
    expect(july).toMatchObject({
      status: 'normalized',
      amount: { value: '12000', asset: 'USD', scale: 2 },
      fx: { base: 'EUR', quote: 'USD', direction: 'direct', rate_valid_from: '2026-06-01T00:00:00.000Z' },
    });
  });

  it('prefers the direct rate when both directions are valid from the same instant', async () => {
    const [gbp] = await normaliseMany(db.pool, [eur('2026-07-01T00:00:00Z', 'GBP')], now);
    expect(gbp).toMatchObject({ amount: { value: '12500' }, fx: { base: 'GBP', quote: 'USD', direction: 'direct' } });
  });
});

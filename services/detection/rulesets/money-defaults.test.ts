import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRateFile } from '../../../platform/fx/rate-files.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { largeCashAggregate } from '../typologies/behaviour/large_cash_aggregate.ts';
import { structuring } from '../typologies/behaviour/structuring.ts';
import { RulesetCache } from './active.ts';
import { moneyDefaultsFor } from './money-defaults.ts';

// The detectors' money defaults are USD cents. On a JPY or BHD tenant they are converted with the
// USD rate valid now (decision 0081): 10,000.00 USD is 1,501,250 JPY at 150.125 and 3,760.000 BHD
// at 0.376, not 1,000,000 JPY or 1,000.000 BHD.
let db: TestDatabase;
const now = new Date('2026-11-29T12:00:00Z');
beforeAll(async () => {
  db = await createTestDatabase();
  for (const [tenant, base] of [['t-usd', 'USD'], ['t-jpy', 'JPY'], ['t-bhd', 'BHD'], ['t-krw', 'KRW']] as const) {
    expect((await createTenant(db.pool, tenant, base)).kind).toBe('created');
  }
  const rates = ['base,quote,rate,rate_scale,valid_from', 'USD,JPY,150.125,3,2026-01-01T00:00:00Z', 'BHD,USD,2.659574,6,2026-01-01T00:00:00Z', 'USD,BHD,0.376,3,2026-02-01T00:00:00Z'].join('\n');
  expect((await loadRateFile(db.pool, 'rates.csv', rates, now)).kind).toBe('loaded');
});
afterAll(async () => db?.drop());

const paramsOf = async (cache: RulesetCache, tenant: string, id: string, segment?: string) => {
  const { live } = await cache.forTenant(tenant);
  const configured = live.detectors.find((d) => d.detector.id === id)!;
  return { configured, params: configured.paramsFor(segment, undefined) as Record<string, unknown> };
};

describe('money defaults in the base asset', () => {
  it('converts the USD defaults with the latest USD rate, direct or inverse, and leaves a USD tenant as it was', async () => {
    expect(await moneyDefaultsFor(db.pool, 't-usd', now)).toEqual({ kind: 'usd' });
    const jpy = await moneyDefaultsFor(db.pool, 't-jpy', now);
    expect(jpy.kind === 'converted' && jpy.convert('1000000')).toBe('1501250');
    const bhd = await moneyDefaultsFor(db.pool, 't-bhd', now);
    expect(bhd.kind === 'converted' && bhd.convert('1000000')).toBe('3760000');
    expect(await moneyDefaultsFor(db.pool, 't-krw', now)).toMatchObject({ kind: 'unavailable', reason: expect.stringContaining('USD/KRW') });
  });

  it('runs the default ruleset with thresholds in the base asset, segment defaults included', async () => {
    const cache = new RulesetCache(db.pool, [largeCashAggregate, structuring], () => now.getTime());
    expect((await paramsOf(cache, 't-usd', 'large_cash_aggregate')).params).toMatchObject({ threshold24h: '1000000', threshold7d: '2500000' });
    expect((await paramsOf(cache, 't-jpy', 'large_cash_aggregate')).params).toMatchObject({ threshold24h: '1501250', threshold7d: '3753125' });
    expect((await paramsOf(cache, 't-jpy', 'large_cash_aggregate', 'cash_agent')).params).toMatchObject({ threshold24h: '15012500', threshold7d: '75062500' });
    expect((await paramsOf(cache, 't-bhd', 'structuring')).params).toMatchObject({ threshold: '3760000', margin: '376000' });
  });

  it('keeps money a tenant ruleset sets, and converts only what it leaves to the default', async () => {
    const document = { name: 'jpy', detectors: { large_cash_aggregate: { params: { threshold24h: '2000000' } } } };
    await db.pool.query(`INSERT INTO rulesets (tenant_id, version, name, document, state, created_at) VALUES ('t-jpy', 1, 'jpy', $1::jsonb, 'active', $2)`, [JSON.stringify(document), now]);
    const cache = new RulesetCache(db.pool, [largeCashAggregate, structuring], () => now.getTime());
    expect((await paramsOf(cache, 't-jpy', 'large_cash_aggregate')).params).toMatchObject({ threshold24h: '2000000', threshold7d: '3753125' });
  });

  it('answers insufficient_data instead of judging in USD cents when the base asset has no USD rate', async () => {
    const cache = new RulesetCache(db.pool, [largeCashAggregate], () => now.getTime());
    const { configured, params } = await paramsOf(cache, 't-krw', 'large_cash_aggregate');
    const outcome = await configured.detector.evaluate({} as never, params);
    expect(outcome).toMatchObject({ outcome: 'insufficient_data', reason: expect.stringContaining('threshold24h, threshold7d') });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRateFile } from '../../../../platform/fx/rate-files.ts';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import { expectedProfileDeviation } from './expected_profile_deviation.ts';

const AT = '2026-08-20T16:00:00Z';
const usd = (value: number) => ({ value: String(value), asset: 'USD', scale: 2 });

describe('expected_profile_deviation', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    const lowCash = { declared_monthly_volume: usd(200_000), cash_intensity: 'low', corridors: ['US-GB'] };
    await world.party('ep-p1', { expected_profile: lowCash });
    await world.party('ep-p2', { expected_profile: lowCash });
    // The fixture's own profile: 2,500.00 GBP a month, low cash, GB-US.
    await world.party('ep-p3');
    await world.party('ep-p4');
    await world.party('ep-p5', { expected_profile: undefined });
    await world.party('ep-p6', { expected_profile: lowCash }, '2024-06-01T00:00:00Z');
    await world.party('ep-p7', { expected_profile: { ...lowCash, cash_intensity: 'medium' } });
    for (const n of [1, 2, 3, 4, 5, 6, 7]) await world.account(`ep-a${n}`, `ep-p${n}`);
    await world.account('ep-a1s', 'ep-p1');
    await world.party('ep-x');
    await world.account('ep-x-a', 'ep-x');
    const cashIn = (id: string, n: number, value: number, at: string): MovementSpec => ({ id, from: [null, null], to: [`ep-a${n}`, `ep-p${n}`], value, at, type: 'cash_in' });
    const paidBy = (id: string, n: number, value: number, at: string): MovementSpec => ({ id, from: ['ep-x-a', 'ep-x'], to: [`ep-a${n}`, `ep-p${n}`], value, at });
    const abroad = (id: string, n: number, value: number, country: string, at: string): MovementSpec => ({ id, from: [`ep-a${n}`, `ep-p${n}`], to: [null, null], value, at, toCountry: country });
    await world.movements([
      // 1: three times the declared volume in, a third of it cash, money to an undeclared corridor.
      cashIn('ep-m1', 1, 300_000, '2026-08-05T10:00:00Z'),
      paidBy('ep-m2', 1, 300_000, '2026-08-06T10:00:00Z'),
      abroad('ep-m3', 1, 150_000, 'NG', '2026-08-07T10:00:00Z'),
      abroad('ep-m4', 1, 100_000, 'GB', '2026-08-08T10:00:00Z'),
      // A sweep to its own account is not volume.
      { id: 'ep-m5', from: ['ep-a1', 'ep-p1'], to: ['ep-a1s', 'ep-p1'], value: 900_000, at: '2026-08-09T10:00:00Z', type: 'internal_transfer' },
      // Outside the 30 days.
      cashIn('ep-m6', 1, 9_000_000, '2026-07-01T10:00:00Z'),
      // 2: just inside the declared profile.
      paidBy('ep-n1', 2, 350_000, '2026-08-05T10:00:00Z'),
      cashIn('ep-n2', 2, 39_000, '2026-08-06T10:00:00Z'),
      abroad('ep-n3', 2, 300_000, 'GB', '2026-08-07T10:00:00Z'),
      // 3: declared in GBP, nothing else deviates.
      paidBy('ep-g1', 3, 900_000, '2026-08-05T10:00:00Z'),
      // 4: declared in GBP, but mostly cash.
      paidBy('ep-g2', 4, 100_000, '2026-08-05T10:00:00Z'),
      cashIn('ep-g3', 4, 400_000, '2026-08-06T10:00:00Z'),
      cashIn('ep-z1', 5, 400_000, '2026-08-06T10:00:00Z'),
      cashIn('ep-z2', 6, 400_000, '2026-08-06T10:00:00Z'),
      // 7: medium cash intensity allows 40 %.
      paidBy('ep-k1', 7, 250_000, '2026-08-05T10:00:00Z'),
      cashIn('ep-k2', 7, 150_000, '2026-08-06T10:00:00Z'),
    ]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('judges the volume of a party with more movements than a listing holds on its exact sums', async () => {
    await world.party('ep-big', { expected_profile: { declared_monthly_volume: usd(10_000_000) } });
    await world.account('ep-big-a', 'ep-big');
    await world.account('ep-big-s', 'ep-big');
    const start = Date.parse('2026-07-25T00:00:00Z');
    // 2,100 payments of 100.00 in 26 days: 210,000.00 in, 2.1 times the declared 100,000.00.
    const paid = Array.from({ length: 2_100 }, (_, i): MovementSpec => ({
      id: `ep-big-m${i}`, from: ['ep-x-a', 'ep-x'], to: ['ep-big-a', 'ep-big'], value: 10_000, at: new Date(start + i * 1_000_000).toISOString(),
    }));
    // The latest: a sweep between its own accounts, which is no volume.
    const sweep: MovementSpec = { id: 'ep-big-sweep', from: ['ep-big-a', 'ep-big'], to: ['ep-big-s', 'ep-big'], value: 5_000_000, at: '2026-08-20T15:00:00Z', type: 'internal_transfer' };
    await world.movements([...paid, sweep]);
    await world.settle();
    const outcome = await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-big' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      evidence: {
        thresholds: expect.arrayContaining([{ name: 'volume_vs_declared', threshold: '20000000', observed: '21000000' }]),
        amounts: { in: '21000000', out: '0' },
        facts: { listing_truncated: true },
      },
    });
  }, 120_000);

  it('hits on volume, cash share and an undeclared corridor together', async () => {
    const outcome = await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'high',
      evidence: {
        amounts: { total: '850000', count: 4, in: '600000', out: '250000' },
        thresholds: [
          { name: 'volume_vs_declared', threshold: '400000', observed: '600000' },
          { name: 'volume_minimum', threshold: '500000', observed: '600000' },
          { name: 'cash_share_low_intensity', threshold: 0.1, observed: 0.35 },
          { name: 'cash_minimum', threshold: '100000', observed: '300000' },
          { name: 'undeclared_corridor_sum', threshold: '100000', observed: '150000' },
        ],
        window: { from: '2026-07-21T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
        facts: { deviations: ['volume', 'cash', 'corridors'], volume_check: 'done' },
      },
    });
    if (outcome.outcome !== 'hit') return;
    expect(outcome.evidence.movements).toEqual(expect.arrayContaining(['ep-m1', 'ep-m2', 'ep-m3']));
    expect(outcome.evidence.movements).not.toContain('ep-m5');
    expect(outcome.evidence.movements).not.toContain('ep-m4');
    expect(outcome.summary).toContain('US>NG');
  });

  it('does not hit just inside the declared profile, and allows more cash to a medium intensity', async () => {
    expect(await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p7' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('answers insufficient_data when the declared volume is in another asset and nothing else deviates', async () => {
    expect(await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p3' }, AT)).toMatchObject({
      outcome: 'insufficient_data',
      reason: expect.stringContaining('GBP'),
    });
    // The other checks still run.
    expect(await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p4' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: { thresholds: [{ name: 'cash_share_low_intensity', observed: 0.8 }, { name: 'cash_minimum' }], facts: { deviations: ['cash'], volume_check: expect.stringContaining('GBP') } },
    });
  });

  it('converts a declared volume in another asset with the rate valid at the evaluation time', async () => {
    // GBP/USD 1.25 from 25 August: 2,500.00 GBP declared is 3,125.00 USD, so 9,000.00 USD in is
    // 2.88 times it. Before that rate the volume cannot be judged (the test above, on 20 August).
    const rates = 'base,quote,rate,rate_scale,valid_from\nGBP,USD,1.25,2,2026-08-25T00:00:00Z\n';
    expect((await loadRateFile(world.api.db.pool, 'rates.csv', rates, new Date())).kind).toBe('loaded');
    const outcome = await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p3' }, '2026-08-30T16:00:00Z');
    expect(outcome).toMatchObject({
      outcome: 'hit',
      evidence: {
        thresholds: expect.arrayContaining([{ name: 'volume_vs_declared', threshold: '625000', observed: '900000' }]),
        facts: { deviations: ['volume'], volume_check: expect.stringContaining('2,500.00 GBP = 3,125.00 USD at GBP/USD 1.25') },
      },
    });
    if (outcome.outcome === 'hit') expect(outcome.summary).toContain('2.88x the declared monthly 3,125.00 USD (2,500.00 GBP)');
  });

  it('is not applicable without an expected profile, and stale on old KYC data', async () => {
    expect(await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p5' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    expect(await world.evaluate(expectedProfileDeviation, { kind: 'party', id: 'ep-p6' }, AT)).toMatchObject({ outcome: 'stale' });
  });
});

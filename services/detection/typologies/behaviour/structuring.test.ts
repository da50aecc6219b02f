import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import { structuring } from './structuring.ts';

const AT = '2026-08-20T16:00:00Z';

describe('structuring', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    await world.party('st-other');
    await world.account('st-other-a', 'st-other');
  });
  afterAll(async () => world?.close());

  it('hits on three movements just below 10,000.00 spread over the accounts of one party', async () => {
    await world.party('st-p1');
    await world.account('st-a1', 'st-p1');
    await world.account('st-a2', 'st-p1');
    await world.movements([
      { id: 'st-m1', from: [null, null], to: ['st-a1', 'st-p1'], value: 950_000, at: '2026-08-15T10:00:00Z', type: 'cash_in' },
      { id: 'st-m2', from: ['st-other-a', 'st-other'], to: ['st-a2', 'st-p1'], value: 980_000, at: '2026-08-17T10:00:00Z' },
      { id: 'st-m3', from: ['st-a1', 'st-p1'], to: [null, null], value: 920_000, at: '2026-08-19T10:00:00Z', type: 'withdrawal' },
      // Outside the band: at the threshold, and under its 10 % margin.
      { id: 'st-m4', from: [null, null], to: ['st-a1', 'st-p1'], value: 1_000_000, at: '2026-08-18T10:00:00Z' },
      { id: 'st-m5', from: [null, null], to: ['st-a2', 'st-p1'], value: 899_999, at: '2026-08-18T11:00:00Z' },
      // Outside the 7-day window.
      { id: 'st-m6', from: [null, null], to: ['st-a2', 'st-p1'], value: 950_000, at: '2026-08-12T10:00:00Z' },
    ]);
    await world.settle();
    const outcome = await world.evaluate(structuring, { kind: 'party', id: 'st-p1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: {
        movements: ['st-m2', 'st-m1', 'st-m3'],
        amounts: { total: '2850000', count: 3, in: '1930000', out: '920000' },
        thresholds: [{ name: 'movements_just_below_threshold', threshold: 3, observed: 3 }],
        window: { from: '2026-08-13T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
        facts: { band: { from: '900000', below: '1000000' }, accounts: ['st-a1', 'st-a2'] },
      },
    });
    // Each account alone has two: not enough for the account subject.
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-a1' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('leaves out money given back: a reversal or refund in the band is not one more structured movement', async () => {
    await world.party('st-p7');
    await world.account('st-a7', 'st-p7');
    await world.movements([
      { id: 'st-m70', from: [null, null], to: ['st-a7', 'st-p7'], value: 930_000, at: '2026-08-15T10:00:00Z', type: 'cash_in' },
      { id: 'st-m71', from: [null, null], to: ['st-a7', 'st-p7'], value: 930_000, at: '2026-08-16T10:00:00Z', type: 'cash_in' },
      { id: 'st-m72', from: ['st-other-a', 'st-other'], to: ['st-a7', 'st-p7'], value: 930_000, at: '2026-08-17T10:00:00Z', type: 'reversal' },
      { id: 'st-m73', from: ['st-other-a', 'st-other'], to: ['st-a7', 'st-p7'], value: 930_000, at: '2026-08-18T10:00:00Z', type: 'refund' },
    ]);
    await world.settle();
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-a7' }, AT)).toEqual({ outcome: 'no_hit' });
    const counted = await world.evaluate(structuring, { kind: 'account', id: 'st-a7' }, AT, { params: { excludeMovementTypes: [] } });
    expect(counted).toMatchObject({ outcome: 'hit', evidence: { thresholds: [{ observed: 4 }] } });
  });

  it('answers insufficient_data when movements without an FX rate could make up the count', async () => {
    await world.party('st-p9');
    await world.account('st-a9', 'st-p9');
    await world.movements([
      { id: 'st-m90', from: [null, null], to: ['st-a9', 'st-p9'], value: 950_000, at: '2026-08-15T10:00:00Z' },
      { id: 'st-m91', from: [null, null], to: ['st-a9', 'st-p9'], value: 960_000, at: '2026-08-16T10:00:00Z' },
      { id: 'st-m92', from: [null, null], to: ['st-a9', 'st-p9'], value: 850_000, at: '2026-08-17T10:00:00Z', asset: 'EUR' },
    ]);
    await world.settle();
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-a9' }, AT)).toMatchObject({ outcome: 'insufficient_data' });
    // Two priced in the band and none unknown: clear.
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-a9' }, '2026-08-16T12:00:00Z')).toEqual({ outcome: 'no_hit' });
  });

  it('does not count a sweep between the party\'s own accounts', async () => {
    await world.party('st-p2');
    await world.account('st-b1', 'st-p2');
    await world.account('st-b2', 'st-p2');
    await world.movements([
      { id: 'st-n1', from: [null, null], to: ['st-b1', 'st-p2'], value: 950_000, at: '2026-08-15T10:00:00Z', type: 'cash_in' },
      { id: 'st-n2', from: ['st-b1', 'st-p2'], to: ['st-b2', 'st-p2'], value: 950_000, at: '2026-08-15T11:00:00Z', type: 'internal_transfer' },
      { id: 'st-n3', from: [null, null], to: ['st-b2', 'st-p2'], value: 960_000, at: '2026-08-16T10:00:00Z', type: 'cash_in' },
    ]);
    await world.settle();
    expect(await world.evaluate(structuring, { kind: 'party', id: 'st-p2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-b1' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-b2' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('hits on one account, higher when the structured total is three times the threshold', async () => {
    await world.party('st-p3');
    await world.account('st-c1', 'st-p3');
    await world.party('st-p4');
    await world.account('st-d1', 'st-p4');
    const deposits = (account: string, party: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `${account}-m${i}`, from: [null, null] as [null, null], to: [account, party] as [string, string], value: 990_000, at: `2026-08-1${4 + i}T10:00:00Z`, type: 'cash_in' }));
    await world.movements([...deposits('st-c1', 'st-p3', 3), ...deposits('st-d1', 'st-p4', 5)]);
    await world.settle();
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-c1' }, AT)).toMatchObject({ outcome: 'hit', severity: 'medium', evidence: { amounts: { count: 3 }, facts: { accounts: ['st-c1'] } } });
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-d1' }, AT)).toMatchObject({ outcome: 'hit', severity: 'high', evidence: { amounts: { total: '4950000', count: 5 } } });
    // Deposits only / withdrawals only narrow the rule.
    expect(await world.evaluate(structuring, { kind: 'account', id: 'st-c1' }, AT, { params: { direction: 'out' } })).toEqual({ outcome: 'no_hit' });
  });
});

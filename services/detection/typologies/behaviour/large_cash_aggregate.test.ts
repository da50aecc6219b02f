import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import { compileRuleset, defaultRulesetDocument } from '../../framework/ruleset.ts';
import { largeCashAggregate } from './large_cash_aggregate.ts';

describe('large_cash_aggregate', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  const cashIn = (id: string, account: string, party: string, value: number, at: string) =>
    ({ id, from: [null, null] as [null, null], to: [account, party] as [string, string], value, at, type: 'cash_in' });

  it('answers insufficient_data before any movement has been received', async () => {
    await world.party('lc-p0');
    await world.account('lc-a0', 'lc-p0');
    await world.settle();
    expect(await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a0' }, '2026-08-20T16:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('hits when cash paid in over 24h reaches 10,000.00, on the account and on its party', async () => {
    await world.party('lc-p1');
    await world.account('lc-a1', 'lc-p1');
    await world.movements([
      cashIn('lc-m1', 'lc-a1', 'lc-p1', 600_000, '2026-08-20T09:00:00Z'),
      cashIn('lc-m2', 'lc-a1', 'lc-p1', 500_000, '2026-08-20T15:00:00Z'),
      // Not cash: a large transfer does not count.
      { id: 'lc-m3', from: [null, null], to: ['lc-a1', 'lc-p1'], value: 5_000_000, at: '2026-08-20T10:00:00Z' },
    ]);
    await world.settle();
    const outcome = await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a1' }, '2026-08-20T16:00:00Z');
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: {
        movements: ['lc-m1', 'lc-m2'],
        amounts: { total: '1100000', count: 2, asset: 'USD', in: '1100000', out: '0' },
        thresholds: [{ name: 'cash_in_24h', threshold: '1000000', observed: '1100000' }],
        window: { from: '2026-08-19T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
      },
    });
    if (outcome.outcome !== 'hit') return;
    expect(outcome.score).toBeGreaterThanOrEqual(0.5);
    expect(outcome.summary).toContain('11,000.00 USD');
    const party = await world.evaluate(largeCashAggregate, { kind: 'party', id: 'lc-p1' }, '2026-08-20T16:00:00Z');
    expect(party).toMatchObject({ outcome: 'hit', evidence: { movements: ['lc-m1', 'lc-m2'] } });
  });

  it('does not hit just under the thresholds, and judges cash in and out separately', async () => {
    await world.party('lc-p2');
    await world.account('lc-a2', 'lc-p2');
    await world.movements([
      cashIn('lc-m4', 'lc-a2', 'lc-p2', 999_999, '2026-08-20T09:00:00Z'),
      { id: 'lc-m5', from: ['lc-a2', 'lc-p2'], to: [null, null], value: 900_000, at: '2026-08-20T12:00:00Z', type: 'cash_out' },
    ]);
    await world.settle();
    expect(await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a2' }, '2026-08-20T16:00:00Z')).toEqual({ outcome: 'no_hit' });
    // An operator who wants cash handled in both directions added up can say so.
    expect(await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a2' }, '2026-08-20T16:00:00Z', { params: { combineDirections: true } })).toMatchObject({
      outcome: 'hit',
      evidence: { thresholds: [{ name: 'cash_in+out_24h', observed: '1899999' }] },
    });
  });

  it('answers insufficient_data when cash without an FX rate could have crossed', async () => {
    await world.party('lc-p6');
    await world.account('lc-a6', 'lc-p6');
    await world.movements([
      cashIn('lc-m60', 'lc-a6', 'lc-p6', 100_000, '2026-08-20T09:00:00Z'),
      { ...cashIn('lc-m61', 'lc-a6', 'lc-p6', 2_000_000, '2026-08-20T10:00:00Z'), asset: 'EUR' },
    ]);
    await world.settle();
    expect(await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a6' }, '2026-08-20T16:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
    // Before the unpriced cash, the priced cash alone was judged.
    expect(await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a6' }, '2026-08-20T09:30:00Z')).toEqual({ outcome: 'no_hit' });
  });

  it('hits on a week of cash kept under the daily threshold, and grades a wide excess higher', async () => {
    await world.party('lc-p3');
    await world.account('lc-a3', 'lc-p3');
    await world.movements([
      cashIn('lc-m6', 'lc-a3', 'lc-p3', 900_000, '2026-08-14T10:00:00Z'),
      cashIn('lc-m7', 'lc-a3', 'lc-p3', 900_000, '2026-08-16T10:00:00Z'),
      cashIn('lc-m8', 'lc-a3', 'lc-p3', 900_000, '2026-08-18T10:00:00Z'),
      // Outside the week.
      cashIn('lc-m9', 'lc-a3', 'lc-p3', 900_000, '2026-08-10T10:00:00Z'),
    ]);
    await world.settle();
    const outcome = await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a3' }, '2026-08-20T16:00:00Z');
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: { thresholds: [{ name: 'cash_in_7d', threshold: '2500000', observed: '2700000' }], amounts: { total: '2700000', count: 3 } },
    });
    if (outcome.outcome !== 'hit') return;
    expect([...outcome.evidence.movements].sort()).toEqual(['lc-m6', 'lc-m7', 'lc-m8']);
    const wide = await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a3' }, '2026-08-20T16:00:00Z', { params: { threshold7d: '800000' } });
    expect(wide).toMatchObject({ outcome: 'hit', severity: 'high' });
  });

  it('ships higher thresholds for cash agents', async () => {
    const compiled = compileRuleset(0, defaultRulesetDocument([largeCashAggregate]), [largeCashAggregate]);
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
    expect(compiled.ruleset.detectors[0]!.paramsFor('cash_agent', undefined)).toMatchObject({ threshold24h: '10000000', threshold7d: '50000000' });
    expect(compiled.ruleset.detectors[0]!.paramsFor('consumer', undefined)).toMatchObject({ threshold24h: '1000000', threshold7d: '2500000' });
    // The cash agent's day of 11,000.00 is ordinary under its own thresholds.
    expect(await world.evaluate(largeCashAggregate, { kind: 'account', id: 'lc-a1' }, '2026-08-20T16:00:00Z', { params: { threshold24h: '10000000', threshold7d: '50000000' } })).toEqual({ outcome: 'no_hit' });
  });
});

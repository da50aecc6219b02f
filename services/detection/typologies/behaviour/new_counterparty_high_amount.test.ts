import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import type { MovementChange } from '../../../../schemas/bus/canonical-change.ts';
import { SubjectContext } from '../../framework/context.ts';
import { newCounterpartyHighAmount } from './new_counterparty_high_amount.ts';

const AT = '2026-08-20T16:00:00Z';
const DAY = 86_400_000;

describe('new_counterparty_high_amount', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    for (const id of ['nc-known', 'nc-new1', 'nc-new2', 'nc-new3', 'nc-new4', 'nc-new5', 'nc-new6', 'nc-new7']) {
      await world.party(id);
      await world.account(`${id}-a`, id);
    }
    for (const n of [1, 2, 3, 4, 5, 6]) {
      await world.party(`nc-p${n}`);
      await world.account(`nc-a${n}`, `nc-p${n}`);
    }
    const pay = (id: string, n: number, to: string, value: number, at: string): MovementSpec => ({ id, from: [`nc-a${n}`, `nc-p${n}`], to: [`${to}-a`, to], value, at });
    // 30 days of paying a known counterparty `daily` minor units before 2026-08-20.
    const history = (n: number, daily: number) =>
      Array.from({ length: 30 }, (_, i) => pay(`nc-h${n}-${i}`, n, 'nc-known', daily, new Date(Date.parse('2026-08-19T10:00:00Z') - i * DAY).toISOString()));
    await world.movements([
      ...history(1, 5_000),
      pay('nc-m1', 1, 'nc-new1', 600_000, '2026-08-20T11:00:00Z'),
      pay('nc-m2', 1, 'nc-known', 900_000, '2026-08-20T12:00:00Z'),
      // Just under the absolute threshold.
      ...history(2, 5_000),
      pay('nc-n1', 2, 'nc-new2', 499_999, '2026-08-20T11:00:00Z'),
      // Large, but ordinary for an account that sends 2,000.00 a day.
      ...history(3, 200_000),
      pay('nc-n2', 3, 'nc-new3', 600_000, '2026-08-20T11:00:00Z'),
      // A new customer: no baseline to judge against.
      pay('nc-f1', 4, 'nc-new4', 1_600_000, '2026-08-20T11:00:00Z'),
      // Two new counterparties in one day, then a known one.
      pay('nc-x0', 5, 'nc-known', 1_000, '2026-08-01T11:00:00Z'),
      pay('nc-x1', 5, 'nc-new5', 2_000_000, '2026-08-20T09:00:00Z'),
      pay('nc-x2', 5, 'nc-new6', 600_000, '2026-08-20T10:00:00Z'),
      pay('nc-x3', 5, 'nc-known', 700_000, '2026-08-20T12:00:00Z'),
      // Exactly 2.2 times a daily outflow of 2,000.00.
      ...history(6, 200_000),
      pay('nc-e1', 6, 'nc-new7', 440_000, '2026-08-20T11:00:00Z'),
    ]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('hits on a large first payment to a new counterparty, far above the daily outflow', async () => {
    const outcome = await world.evaluate(newCounterpartyHighAmount, { kind: 'account', id: 'nc-a1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: {
        movements: ['nc-m1'],
        counterparties: ['account:nc-new1-a'],
        amounts: { total: '600000', count: 1, out: '600000' },
        thresholds: [
          { name: 'amount', threshold: '500000', observed: '600000' },
          { name: 'multiple_of_mean_daily_out', threshold: 5, observed: 120 },
        ],
        baseline: { days: 30, mean: '5000', observed: '600000', metric: 'out_sum' },
        window: { from: '2026-08-19T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
      },
    });
    // The receiving party has no history at all: nothing to judge a new counterparty against.
    expect(await world.evaluate(newCounterpartyHighAmount, { kind: 'party', id: 'nc-new1' }, AT)).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('puts the triggering movement first, and still judges earlier ones of the day', async () => {
    const judge = async (movement: string | null) => {
      const trigger = movement ? ({ object: 'movement', external_id: movement, occurred_at: '2026-08-20T12:00:00Z' } as MovementChange) : null;
      const ctx = new SubjectContext(world.stores, world.api.tenantId, 'USD', { kind: 'account', id: 'nc-a5' }, new Date(AT), trigger);
      return newCounterpartyHighAmount.evaluate(ctx, newCounterpartyHighAmount.params.parse({}));
    };
    expect(await judge(null)).toMatchObject({ outcome: 'hit', evidence: { movements: ['nc-x1', 'nc-x2'] } });
    expect(await judge('nc-x2')).toMatchObject({ outcome: 'hit', evidence: { movements: ['nc-x2', 'nc-x1'], thresholds: [{ name: 'amount', observed: '600000' }, { name: 'multiple_of_mean_daily_out' }] } });
    // Evaluated at a known counterparty's movement, the earlier new one of the batch is not missed.
    expect(await judge('nc-x3')).toMatchObject({ outcome: 'hit', evidence: { movements: ['nc-x1', 'nc-x2'] } });
  });

  it('does not hit under the absolute threshold, nor under the multiple of the baseline', async () => {
    expect(await world.evaluate(newCounterpartyHighAmount, { kind: 'account', id: 'nc-a2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(newCounterpartyHighAmount, { kind: 'account', id: 'nc-a3' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('hits on an amount exactly at the multiple, which floating point puts just under it', async () => {
    const params = { baselineMultiple: 2.2, minAmount: '1' };
    expect(await world.evaluate(newCounterpartyHighAmount, { kind: 'account', id: 'nc-a6' }, AT, { params })).toMatchObject({
      outcome: 'hit',
      evidence: { movements: ['nc-e1'], thresholds: [{ name: 'amount' }, { name: 'multiple_of_mean_daily_out', threshold: 2.2, observed: 2.2 }] },
    });
    expect(await world.evaluate(newCounterpartyHighAmount, { kind: 'account', id: 'nc-a6' }, AT, { params: { ...params, baselineMultiple: 2.21 } })).toEqual({ outcome: 'no_hit' });
  });

  it('cannot judge a new customer: while everything is new, a new counterparty says nothing', async () => {
    expect(await world.evaluate(newCounterpartyHighAmount, { kind: 'account', id: 'nc-a4' }, AT)).toMatchObject({
      outcome: 'insufficient_data',
      reason: expect.stringContaining('0 days of history'),
    });
  });
});

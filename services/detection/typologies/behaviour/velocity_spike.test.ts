import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { explain } from '../../explain.ts';
import { velocitySpike } from './velocity_spike.ts';

const AT = '2026-08-20T16:00:00Z';
const DAY = 86_400_000;

describe('velocity_spike', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    await world.party('vs-shop');
    await world.account('vs-shop-a', 'vs-shop');
  });
  afterAll(async () => world?.close());

  // One payment of `value` a day at 10:00 for `days` days before 2026-08-20.
  const daily = (prefix: string, account: string, party: string, days: number, value: number): MovementSpec[] =>
    Array.from({ length: days }, (_, i) => ({
      id: `${prefix}-d${i}`,
      from: [account, party],
      to: ['vs-shop-a', 'vs-shop'],
      value,
      at: new Date(Date.parse('2026-08-19T10:00:00Z') - i * DAY).toISOString(),
    }));

  it('writes a sum past 2^53 minor units exactly in its evidence and summary', async () => {
    await world.party('vs-big');
    await world.account('vs-big-a', 'vs-big');
    const huge = '9007199254740993';
    await world.movements([...daily('vsb', 'vs-big-a', 'vs-big', 30, 10_000), { id: 'vs-big-m', from: ['vs-big-a', 'vs-big'], to: [null, null], value: huge, at: '2026-08-20T11:00:00Z' }]);
    await world.settle();
    const outcome = await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-big-a' }, AT);
    if (outcome.outcome !== 'hit') throw new Error(outcome.outcome);
    expect(outcome.evidence.baseline).toMatchObject({ mean: '10000', observed: huge, metric: 'out_sum' });
    expect(outcome.evidence.thresholds).toContainEqual({ name: 'out_sum_minimum', threshold: '500000', observed: huge });
    expect((outcome.evidence.facts!.spikes as Array<Record<string, unknown>>)[0]).toMatchObject({ metric: 'out_sum', observed: huge, mean: '10000', stddev: '0' });
    expect(outcome.summary).toContain('90,071,992,547,409.93 USD');
  });

  it('hits when a day\'s outflow is far above the account\'s own daily baseline', async () => {
    await world.party('vs-p1');
    await world.account('vs-a1', 'vs-p1');
    await world.movements([
      ...daily('vs1', 'vs-a1', 'vs-p1', 30, 10_000),
      { id: 'vs-m1', from: ['vs-a1', 'vs-p1'], to: [null, null], value: 500_000, at: '2026-08-20T11:00:00Z' },
      { id: 'vs-m2', from: ['vs-a1', 'vs-p1'], to: [null, null], value: 300_000, at: '2026-08-20T12:00:00Z' },
    ]);
    await world.settle();
    const outcome = await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: {
        movements: ['vs-m1', 'vs-m2'],
        amounts: { total: '800000', count: 2, out: '800000' },
        baseline: { days: 30, mean: '10000', stddev: '0', observed: '800000', metric: 'out_sum' },
        window: { from: '2026-08-19T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
      },
    });
    if (outcome.outcome !== 'hit') return;
    expect(outcome.evidence.thresholds).toEqual([
      { name: 'out_sum_zscore', threshold: 8, observed: 79 },
      { name: 'out_sum_ratio_to_mean', threshold: 5, observed: 80 },
      { name: 'out_sum_minimum', threshold: '500000', observed: '800000' },
    ]);
  });

  it('says a spike over a mean of nothing as such, not as an infinite ratio', async () => {
    await world.party('vs-p0');
    await world.account('vs-a0', 'vs-p0');
    await world.movements([...daily('vs0', 'vs-a0', 'vs-p0', 30, 10_000), { id: 'vs-m0', from: [null, null], to: ['vs-a0', 'vs-p0'], value: 600_000, at: '2026-08-20T11:00:00Z' }]);
    await world.settle();
    const outcome = await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a0' }, AT);
    expect(outcome).toMatchObject({ outcome: 'hit', evidence: { baseline: { metric: 'in_sum', mean: '0' } } });
    if (outcome.outcome !== 'hit') return;
    expect(outcome.summary).toContain('where the mean was nothing at all');
    expect(`${outcome.summary}\n${explain(velocitySpike, outcome, null, 'USD')}`).not.toContain('Infinity');
  });

  it('does not hit under the minimum amount, nor on a payday of the usual size', async () => {
    await world.party('vs-p2');
    await world.account('vs-a2', 'vs-p2');
    await world.party('vs-p3');
    await world.account('vs-a3', 'vs-p3');
    const salary = (id: string, at: string): MovementSpec => ({ id, from: [null, null], to: ['vs-a3', 'vs-p3'], value: 800_000, at, type: 'ach' });
    await world.movements([
      ...daily('vs2', 'vs-a2', 'vs-p2', 30, 10_000),
      { id: 'vs-n1', from: ['vs-a2', 'vs-p2'], to: [null, null], value: 499_999, at: '2026-08-20T11:00:00Z' },
      // Monthly pay: two paydays in the 90 baseline days, then the third.
      salary('vs-s0', '2026-05-21T09:00:00Z'),
      salary('vs-s1', '2026-06-21T09:00:00Z'),
      salary('vs-s2', '2026-07-21T09:00:00Z'),
      salary('vs-s3', '2026-08-20T09:00:00Z'),
    ]);
    await world.settle();
    expect(await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a3' }, AT)).toEqual({ outcome: 'no_hit' });
    // The textbook z of 6 would have called that payday a spike.
    expect(await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a3' }, AT, { params: { minZ: 6 } })).toMatchObject({
      outcome: 'hit',
      evidence: { baseline: { days: 90, metric: 'in_sum' } },
    });
  });

  it('grades a burst of many small payments as a weak count signal', async () => {
    await world.party('vs-p4');
    await world.account('vs-a4', 'vs-p4');
    await world.movements([
      ...daily('vs4', 'vs-a4', 'vs-p4', 20, 1_000),
      ...Array.from({ length: 12 }, (_, i): MovementSpec => ({ id: `vs-b${i}`, from: ['vs-a4', 'vs-p4'], to: ['vs-shop-a', 'vs-shop'], value: 1_000, at: `2026-08-20T1${Math.floor(i / 6)}:0${i % 6}:00Z` })),
    ]);
    await world.settle();
    const hit = (await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a4' }, AT)) as Hit;
    expect(hit).toMatchObject({
      outcome: 'hit',
      severity: 'low',
      evidence: { baseline: { days: 20, mean: '1.00', stddev: '0.00', observed: '12.00', metric: 'out_count' }, amounts: { count: 12 } },
    });
    // A count is explained as a count, not as money.
    expect(explain(velocitySpike, hit, null, 'USD')).toContain('out_count 12.00 where the mean is 1.00');
  });

  it('answers insufficient_data with fewer than 14 days of history', async () => {
    await world.party('vs-p5');
    await world.account('vs-a5', 'vs-p5');
    await world.movements([
      ...daily('vs5', 'vs-a5', 'vs-p5', 10, 10_000),
      { id: 'vs-q1', from: ['vs-a5', 'vs-p5'], to: [null, null], value: 5_000_000, at: '2026-08-20T11:00:00Z' },
    ]);
    await world.settle();
    expect(await world.evaluate(velocitySpike, { kind: 'account', id: 'vs-a5' }, AT)).toMatchObject({ outcome: 'insufficient_data', reason: expect.stringContaining('10 days') });
  });
});

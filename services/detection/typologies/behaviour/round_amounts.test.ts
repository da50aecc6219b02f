import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import { roundAmounts } from './round_amounts.ts';

const AT = '2026-08-20T16:00:00Z';

describe('round_amounts', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    for (const n of [1, 2, 3]) {
      await world.party(`ra-p${n}`);
      await world.account(`ra-a${n}`, `ra-p${n}`);
    }
    // Amounts in major units, one movement every 12 hours back from 2026-08-19, alternating in and out.
    const series = (n: number, majors: number[]): MovementSpec[] =>
      majors.map((major, i) => {
        const own: [string, string] = [`ra-a${n}`, `ra-p${n}`];
        const at = new Date(Date.parse('2026-08-19T10:00:00Z') - i * 43_200_000).toISOString();
        return { id: `ra-${n}-${i}`, from: i % 2 ? own : [null, null], to: i % 2 ? [null, null] : own, value: Math.round(major * 100), at };
      });
    await world.movements([
      ...series(1, [10_000, 5_000, 3_000, 2_000, 1_000, 123.45, 87.1]),
      // Only four round amounts.
      ...series(2, [10_000, 5_000, 5_000, 1_000, 12.5]),
      // Five round amounts, but fewer than half of all movements.
      ...series(3, [10_000, 5_000, 5_000, 3_000, 2_000, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]),
    ]);
    // Round, but outside the week.
    await world.movement({ id: 'ra-1-old', from: [null, null], to: ['ra-a1', 'ra-p1'], value: 100_000_00, at: '2026-08-10T10:00:00Z' });
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('hits as a weak signal on five round thousands making most of a week\'s movements', async () => {
    const outcome = await world.evaluate(roundAmounts, { kind: 'account', id: 'ra-a1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'low',
      evidence: {
        movements: ['ra-1-0', 'ra-1-1', 'ra-1-2', 'ra-1-3', 'ra-1-4'],
        amounts: { total: '2100000', count: 5, in: '1400000', out: '700000' },
        thresholds: [
          { name: 'round_count', threshold: 5, observed: 5 },
          { name: 'round_share', threshold: 0.5, observed: 0.71 },
          { name: 'round_sum', threshold: '2000000', observed: '2100000' },
        ],
        window: { from: '2026-08-13T16:00:00.000Z', to: '2026-08-20T16:00:00.000Z' },
      },
    });
  });

  it('does not hit on four round amounts, nor when they are under half of the movements', async () => {
    expect(await world.evaluate(roundAmounts, { kind: 'account', id: 'ra-a2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(roundAmounts, { kind: 'account', id: 'ra-a3' }, AT)).toEqual({ outcome: 'no_hit' });
    // And not under the minimum sum.
    expect(await world.evaluate(roundAmounts, { kind: 'account', id: 'ra-a1' }, AT, { params: { minSum: '2100001' } })).toEqual({ outcome: 'no_hit' });
  });
});

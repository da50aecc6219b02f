import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import { dormantReactivation } from './dormant_reactivation.ts';

const AT = '2026-08-20T16:00:00Z';

describe('dormant_reactivation', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    for (const n of [1, 2, 3, 4, 5, 6]) {
      await world.party(`dr-p${n}`);
      await world.account(`dr-a${n}`, `dr-p${n}`, n === 4 || n === 6 ? { status: 'dormant' } : {}, '2026-03-01T00:00:00Z');
    }
    const into = (id: string, n: number, value: number, at: string) => ({ id, from: [null, null] as [null, null], to: [`dr-a${n}`, `dr-p${n}`] as [string, string], value, at });
    const outOf = (id: string, n: number, value: number, at: string) => ({ id, from: [`dr-a${n}`, `dr-p${n}`] as [string, string], to: [null, null] as [null, null], value, at });
    await world.movements([
      // 1: quiet since January, then 5,000.00 in and 4,900.00 out.
      into('dr-m1', 1, 10_000, '2026-01-10T10:00:00Z'),
      into('dr-m2', 1, 500_000, '2026-08-20T10:00:00Z'),
      outOf('dr-m3', 1, 490_000, '2026-08-20T11:00:00Z'),
      // 2: quiet for 179 days only.
      into('dr-n1', 2, 10_000, '2026-02-22T10:00:00Z'),
      into('dr-n2', 2, 500_000, '2026-08-20T10:00:00Z'),
      // 3: quiet long enough, but woken with less than 1,000.00.
      into('dr-n3', 3, 10_000, '2026-01-10T10:00:00Z'),
      into('dr-n4', 3, 99_999, '2026-08-20T10:00:00Z'),
      // 4: declared dormant, never used, now moves 2,000.00.
      into('dr-d1', 4, 200_000, '2026-08-20T10:00:00Z'),
      // 5: active, first movement ever.
      into('dr-f1', 5, 500_000, '2026-08-20T10:00:00Z'),
      // 6: declared dormant but in use since (a stale status, not a new reactivation).
      into('dr-s1', 6, 200_000, '2026-08-10T10:00:00Z'),
      into('dr-s2', 6, 200_000, '2026-08-20T10:00:00Z'),
    ]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('hits when an account quiet for 180 days moves money again', async () => {
    const outcome = await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-a1' }, AT);
    expect(outcome).toMatchObject({
      outcome: 'hit',
      severity: 'high',
      evidence: {
        movements: ['dr-m2', 'dr-m3'],
        amounts: { total: '990000', count: 2, in: '500000', out: '490000' },
        thresholds: [
          { name: 'days_without_activity', threshold: 180, observed: 222 },
          { name: 'amount_after_reactivation', threshold: '100000', observed: '500000' },
        ],
        facts: { previous_activity_at: '2026-01-10T10:00:00.000Z', reactivated_at: '2026-08-20T10:00:00.000Z', declared_dormant: false },
      },
    });
  });

  it('does not hit after 179 quiet days, nor under the minimum amount', async () => {
    expect(await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-a2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-a3' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('hits on an account declared dormant, even with no earlier activity', async () => {
    expect(await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-a4' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: { movements: ['dr-d1'], thresholds: [{ name: 'declared_status', threshold: 'dormant' }, { name: 'amount_after_reactivation', observed: '200000' }] },
    });
    // Still marked dormant, but in use since: not a new reactivation.
    expect(await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-a6' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('is not applicable to an account\'s first activity, and needs account data', async () => {
    expect(await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-a5' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    expect(await world.evaluate(dormantReactivation, { kind: 'account', id: 'dr-unknown' }, AT)).toMatchObject({ outcome: 'insufficient_data' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { compileRuleset, defaultRulesetDocument } from '../../framework/ruleset.ts';
import { repeatedControlFailures as detector } from './repeated_control_failures.ts';
import { customerWithTwoAccounts } from './test-kit.ts';

const AT = '2026-08-31T12:00:00Z';
const usd = (value: string) => ({ amount: { value, asset: 'USD', scale: 2 } });

describe('repeated_control_failures', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  const customer = (party: string, data?: Record<string, unknown>) => customerWithTwoAccounts(world, party, data);
  const onAccount = (party: string, n = 1) => ({ kind: 'account' as const, external_id: `${party}-a${n}` });

  it('answers insufficient_data while the tenant has sent no control events at all', async () => {
    await customer('r0');
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 'r0' }, AT)).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('reports three failures within 24 hours, with their events and linked movements', async () => {
    await customer('r1');
    await world.controlEvent('r1-ce1', 'transfer.failed', onAccount('r1'), '2026-08-30T13:00:00Z', { linked_movement_id: 'r1-m1', ...usd('10000') });
    await world.controlEvent('r1-ce2', 'withdrawal.blocked', onAccount('r1'), '2026-08-31T02:00:00Z', { linked_movement_id: 'r1-m2', ...usd('20000') });
    await world.controlEvent('r1-ce3', 'velocity_check.failed', { kind: 'party', external_id: 'r1' }, '2026-08-31T11:00:00Z', { amount: { value: '500', asset: 'EUR', scale: 2 } });
    // Not a failure: never counted.
    await world.controlEvent('r1-ce4', 'auth.failed', onAccount('r1'), '2026-08-31T11:30:00Z');
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 'r1' }, AT)) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'medium', score: 0.45 });
    expect(hit.evidence.thresholds).toEqual([{ name: 'control_failures_24h', threshold: 3, observed: 3 }]);
    expect(hit.evidence.movements).toEqual(['r1-m2', 'r1-m1']);
    expect(hit.evidence.amounts).toEqual({ total: '30000', count: 3, asset: 'USD' });
    expect(hit.evidence.window).toEqual({ from: '2026-08-30T12:00:00.000Z', to: '2026-08-31T12:00:00.000Z' });
    expect((hit.evidence.facts!.control_events as Array<{ id: string }>).map((e) => e.id)).toEqual(['r1-ce1', 'r1-ce2', 'r1-ce3']);
    expect(hit.evidence.facts?.by_type).toEqual({ 'transfer.failed': 1, 'withdrawal.blocked': 1, 'velocity_check.failed': 1 });

    // The account sees its own and its holder's events; its sibling sees only the holder's.
    expect(await world.evaluate(detector, { kind: 'account', id: 'r1-a1' }, AT)).toMatchObject({ outcome: 'hit' });
    expect(await world.evaluate(detector, { kind: 'account', id: 'r1-a2' }, AT)).toEqual({ outcome: 'no_hit' });
    // The third failure completes the pattern; just before it there were two.
    expect(await world.evaluate(detector, { kind: 'party', id: 'r1' }, '2026-08-31T10:59:59Z')).toEqual({ outcome: 'no_hit' });
  });

  it('reports six failures spread over a week', async () => {
    await customer('r2');
    for (let day = 0; day < 6; day++) {
      await world.controlEvent(`r2-ce${day}`, 'transfer.retried_repeatedly', onAccount('r2', 2), `2026-08-${String(25 + day).padStart(2, '0')}T14:00:00Z`);
    }
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 'r2' }, AT)) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'medium', evidence: { thresholds: [{ name: 'control_failures_7d', threshold: 6, observed: 6 }], movements: [] } });
    expect(hit.evidence.window.from).toBe('2026-08-24T12:00:00.000Z');
  });

  it('answers no_hit just under both minimums', async () => {
    await customer('r3');
    const times = ['2026-08-26T10:00:00Z', '2026-08-27T10:00:00Z', '2026-08-28T10:00:00Z', '2026-08-31T01:00:00Z', '2026-08-31T09:00:00Z'];
    for (const [i, at] of times.entries()) await world.controlEvent(`r3-ce${i}`, 'transfer.failed', onAccount('r3'), at);
    // Older than a week: outside every window.
    await world.controlEvent('r3-old', 'transfer.failed', onAccount('r3'), '2026-08-24T11:00:00Z');
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 'r3' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('scores a run of twice the minimum as high', async () => {
    await customer('r4');
    for (let i = 0; i < 6; i++) await world.controlEvent(`r4-ce${i}`, 'withdrawal.blocked', onAccount('r4'), `2026-08-31T0${i}:30:00Z`);
    await world.settle();
    const hit = (await world.evaluate(detector, { kind: 'party', id: 'r4' }, AT)) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'high', score: 0.7 });
    expect(hit.evidence.thresholds.map((t) => t.name)).toEqual(['control_failures_24h', 'control_failures_7d']);
  });

  it('asks more of a merchant in the default ruleset', async () => {
    await customer('r5', { segment: 'merchant' });
    for (let i = 0; i < 4; i++) await world.controlEvent(`r5-ce${i}`, 'transfer.failed', onAccount('r5'), `2026-08-31T0${i}:30:00Z`);
    await world.settle();
    const compiled = compileRuleset(0, defaultRulesetDocument([detector]), [detector]);
    if (!compiled.ok) throw new Error('the default ruleset does not compile');
    const merchant = compiled.ruleset.detectors[0]!.paramsFor('merchant', undefined) as Record<string, unknown>;
    expect(await world.evaluate(detector, { kind: 'party', id: 'r5' }, AT, { params: merchant })).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 'r5' }, AT)).toMatchObject({ outcome: 'hit' });
  });
});

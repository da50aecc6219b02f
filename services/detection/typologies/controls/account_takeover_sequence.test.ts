import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { accountTakeoverSequence as detector } from './account_takeover_sequence.ts';
import { customerWithTwoAccounts, outflow as out } from './test-kit.ts';

const DAY_MS = 86_400_000;

describe('account_takeover_sequence', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  const customer = (party: string, data?: Record<string, unknown>) => customerWithTwoAccounts(world, party, data);
  // device.changed, beneficiary.added, password.reset at the given instants.
  const sequence = async (party: string, [device, beneficiary, password]: [string, string, string]) => {
    await world.controlEvent(`${party}-dev`, 'device.changed', { kind: 'party', external_id: party }, device, { device_ref: 'dev-123' });
    await world.controlEvent(`${party}-ben`, 'beneficiary.added', { kind: 'account', external_id: `${party}-a1` }, beneficiary);
    await world.controlEvent(`${party}-pwd`, 'password.reset', { kind: 'party', external_id: party }, password);
  };

  it('answers insufficient_data while the tenant has sent no movements at all', async () => {
    await customer('t0');
    await sequence('t0', ['2026-08-29T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 't0' }, '2026-08-30T12:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('reports a large transfer to a new counterparty after all three steps, and only after them', async () => {
    await customer('t1');
    await world.party('t1-mule');
    await world.account('t1-mule-a', 't1-mule');
    await world.movements([
      // Before the sequence was complete: not part of it.
      out('t1', 't1-m-early', 500000, '2026-08-29T20:00:00Z'),
      out('t1', 't1-m-big', 150000, '2026-08-30T09:00:00Z', { to: ['t1-mule-a', 't1-mule'] }),
      out('t1', 't1-m-small', 5000, '2026-08-30T09:30:00Z'),
      { id: 't1-m-self', from: ['t1-a1', 't1'], to: ['t1-a2', 't1'], value: 900000, at: '2026-08-30T09:45:00Z' },
    ]);
    await sequence('t1', ['2026-08-29T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 't1' }, '2026-08-30T10:00:00Z')) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'high', score: 0.76 });
    expect(hit.evidence.movements).toEqual(['t1-m-big']);
    expect(hit.evidence.counterparties).toEqual(['party:t1-mule']);
    expect(hit.evidence.amounts).toEqual({ total: '150000', count: 1, asset: 'USD', out: '150000' });
    expect(hit.evidence.thresholds).toEqual([
      { name: 'sequence_steps', threshold: 3, observed: 3 },
      { name: 'transfer_amount', threshold: '100000', observed: '150000' },
    ]);
    expect(hit.evidence.window).toEqual({ from: '2026-08-27T10:00:00.000Z', to: '2026-08-30T10:00:00.000Z' });
    expect((hit.evidence.facts!.control_events as Array<{ id: string }>).map((e) => e.id)).toEqual(['t1-dev', 't1-ben', 't1-pwd']);
    expect(hit.evidence.facts).toMatchObject({ sequence_completed_at: '2026-08-30T08:00:00.000Z', new_counterparty: true });

    // Two steps and a large transfer; then three steps and nothing after them yet.
    expect(await world.evaluate(detector, { kind: 'party', id: 't1' }, '2026-08-29T20:00:00Z')).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 't1' }, '2026-08-30T08:30:00Z')).toEqual({ outcome: 'no_hit' });
  });

  it('scores suspicious logins and a burst of failed logins higher', async () => {
    await customer('t2');
    await world.movements([out('t2', 't2-m1', 100000, '2026-08-30T09:00:00Z')]);
    await sequence('t2', ['2026-08-29T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.controlEvent('t2-sus', 'auth.suspicious_login', { kind: 'party', external_id: 't2' }, '2026-08-29T09:00:00Z');
    for (let i = 0; i < 3; i++) await world.controlEvent(`t2-fail${i}`, 'auth.failed', { kind: 'party', external_id: 't2' }, `2026-08-29T08:0${i}:00Z`);
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 't2' }, '2026-08-30T10:00:00Z')) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'high', score: 0.8, evidence: { movements: ['t2-m1'] } });
    expect(hit.evidence.thresholds).toContainEqual({ name: 'auth_failed_burst', threshold: 3, observed: 3 });
    expect((hit.evidence.facts!.control_events as unknown[]).length).toBe(7);
  });

  it('answers no_hit just under the transfer minimum, with a step missing, or with the steps too far apart', async () => {
    await customer('t3');
    await customer('t4');
    await customer('t5');
    await world.movements([
      out('t3', 't3-m1', 99999, '2026-08-30T09:00:00Z'),
      out('t4', 't4-m1', 900000, '2026-08-30T09:00:00Z'),
      out('t5', 't5-m1', 900000, '2026-08-30T09:00:00Z'),
    ]);
    await sequence('t3', ['2026-08-29T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.controlEvent('t4-dev', 'device.changed', { kind: 'party', external_id: 't4' }, '2026-08-29T10:00:00Z');
    await world.controlEvent('t4-pwd', 'password.reset', { kind: 'party', external_id: 't4' }, '2026-08-29T11:00:00Z');
    await sequence('t5', ['2026-08-26T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.settle();

    const at = '2026-08-30T10:00:00Z';
    expect(await world.evaluate(detector, { kind: 'party', id: 't3' }, at)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 't4' }, at)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 't5' }, at)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 't5' }, at, { params: { windowHours: 120 } })).toMatchObject({ outcome: 'hit' });
  });

  it('lowers the transfer minimum for a party that rarely sends money, down to the floor', async () => {
    await customer('t6');
    const history: MovementSpec[] = [];
    for (let day = 1; day <= 30; day++) history.push(out('t6', `t6-h${day}`, 2000, new Date(Date.parse('2026-08-29T06:00:00Z') - day * DAY_MS)));
    await world.movements([...history, out('t6', 't6-m1', 30000, '2026-08-30T09:00:00Z')]);
    await sequence('t6', ['2026-08-29T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 't6' }, '2026-08-30T10:00:00Z')) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', evidence: { movements: ['t6-m1'] } });
    expect(hit.evidence.thresholds).toContainEqual({ name: 'transfer_amount', threshold: '20000', observed: '30000' });
    expect(hit.evidence.baseline).toMatchObject({ days: 31, mean: '1935' });
  });

  it('answers insufficient_data when the only outflow after the sequence is unpriced, and is not applicable to accounts', async () => {
    await customer('t7');
    await world.movements([out('t7', 't7-m1', 900000, '2026-08-30T09:00:00Z', { asset: 'EUR' })]);
    await sequence('t7', ['2026-08-29T10:00:00Z', '2026-08-29T12:00:00Z', '2026-08-30T08:00:00Z']);
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 't7' }, '2026-08-30T10:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
    expect(await world.evaluate(detector, { kind: 'account', id: 't7-a1' }, '2026-08-30T10:00:00Z')).toMatchObject({ outcome: 'not_applicable' });
  });
});

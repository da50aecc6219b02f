import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { kycDowngradeOutflow as detector } from './kyc_downgrade_outflow.ts';
import { customerWithTwoAccounts, outflow as out } from './test-kit.ts';

const DAY_MS = 86_400_000;

describe('kyc_downgrade_outflow', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  const customer = (party: string, data?: Record<string, unknown>) => customerWithTwoAccounts(world, party, data);

  it('answers insufficient_data while the tenant has sent no movements at all', async () => {
    await customer('k0');
    await world.controlEvent('k0-ce', 'kyc.downgraded', { kind: 'party', external_id: 'k0' }, '2026-08-30T10:00:00Z');
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 'k0' }, '2026-08-31T12:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('reports outflow after a downgrade once it crosses the minimum, for a party without history', async () => {
    await customer('k1');
    await world.movements([
      out('k1', 'k1-m-before', 900000, '2026-08-27T10:00:00Z'),
      out('k1', 'k1-m1', 300000, '2026-08-28T12:00:00Z'),
      // Between its own accounts: the money stays with the customer.
      { id: 'k1-m-self', from: ['k1-a1', 'k1'], to: ['k1-a2', 'k1'], value: 400000, at: '2026-08-28T13:00:00Z' },
      { id: 'k1-m-in', from: [null, null], to: ['k1-a2', 'k1'], value: 50000, at: '2026-08-28T14:00:00Z' },
      out('k1', 'k1-m2', 250000, '2026-08-29T09:00:00Z', { from: ['k1-a2', 'k1'] }),
    ]);
    await world.controlEvent('k1-ce', 'kyc.downgraded', { kind: 'party', external_id: 'k1' }, '2026-08-28T10:00:00Z', { reason_code: 'adverse_media' });
    await world.controlEvent('k1-ce-up', 'kyc.upgraded', { kind: 'party', external_id: 'k1' }, '2026-08-28T11:00:00Z');
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 'k1' }, '2026-08-29T09:00:00Z')) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'medium', score: 0.53 });
    expect(hit.evidence.movements).toEqual(['k1-m1', 'k1-m2']);
    expect(hit.evidence.amounts).toEqual({ total: '550000', count: 2, asset: 'USD', out: '550000' });
    expect(hit.evidence.thresholds).toEqual([{ name: 'outflow_after_kyc_event', threshold: '500000', observed: '550000' }]);
    expect(hit.evidence.baseline).toBeUndefined();
    expect(hit.evidence.window).toEqual({ from: '2026-08-22T09:00:00.000Z', to: '2026-08-29T09:00:00.000Z' });
    expect(hit.evidence.facts?.control_events).toEqual([expect.objectContaining({ id: 'k1-ce', type: 'kyc.downgraded', reason_code: 'adverse_media' })]);
    expect(hit.evidence.facts?.hours_to_latest_outflow).toBe(23);
    // Judged again a day later with no new outflow: the same facts, so an alert an analyst closed
    // on them is not opened again (pipelines/detect/alerts.ts compares facts).
    const later = (await world.evaluate(detector, { kind: 'party', id: 'k1' }, '2026-08-30T09:00:00Z')) as Hit;
    expect(later.outcome).toBe('hit');
    expect(later.evidence.facts).toEqual(hit.evidence.facts);

    // Just under the minimum before the second transfer; and a week later the downgrade is out of the window.
    expect(await world.evaluate(detector, { kind: 'party', id: 'k1' }, '2026-08-29T08:59:59Z')).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 'k1' }, '2026-09-04T10:00:01Z')).toEqual({ outcome: 'no_hit' });
  });

  it('compares with the party baseline when it has history', async () => {
    await customer('k2');
    // Sixty days of sending 2,000.00 a day: its normal.
    const history: MovementSpec[] = [];
    for (let day = 1; day <= 60; day++) history.push(out('k2', `k2-h${day}`, 200000, new Date(Date.parse('2026-08-30T08:00:00Z') - day * DAY_MS)));
    await world.movements([
      ...history,
      out('k2', 'k2-m1', 550000, '2026-08-30T11:00:00Z'),
      out('k2', 'k2-m2', 2000000, '2026-08-30T11:30:00Z'),
    ]);
    await world.controlEvent('k2-ce', 'kyc.downgraded', { kind: 'account', external_id: 'k2-a1' }, '2026-08-30T10:00:00Z');
    await world.settle();

    // Over the absolute minimum, but under three days' worth of its normal outflow for the day.
    expect(await world.evaluate(detector, { kind: 'party', id: 'k2' }, '2026-08-30T11:15:00Z')).toEqual({ outcome: 'no_hit' });
    const hit = (await world.evaluate(detector, { kind: 'party', id: 'k2' }, '2026-08-30T12:00:00Z')) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'high', score: 0.89 });
    expect(hit.evidence.movements).toEqual(['k2-m2', 'k2-m1']);
    expect(hit.evidence.thresholds).toEqual([
      { name: 'outflow_after_kyc_event', threshold: '500000', observed: '2550000' },
      { name: 'outflow_vs_baseline', threshold: '600000', observed: '2550000' },
    ]);
    expect(hit.evidence.baseline).toMatchObject({ days: 60, mean: '200000', observed: '2550000' });
  });

  it('answers insufficient_data when unpriced outflow could have crossed', async () => {
    await customer('k3');
    await world.movements([
      out('k3', 'k3-m1', 100000, '2026-08-30T11:00:00Z'),
      out('k3', 'k3-m2', 900000, '2026-08-30T11:30:00Z', { asset: 'EUR' }),
    ]);
    await world.controlEvent('k3-ce', 'kyc.verification_failed', { kind: 'party', external_id: 'k3' }, '2026-08-30T10:00:00Z');
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 'k3' }, '2026-08-30T12:00:00Z')).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('answers no_hit for outflow without a KYC event, and is not applicable to accounts', async () => {
    await customer('k4');
    await world.movements([out('k4', 'k4-m1', 5000000, '2026-08-30T11:00:00Z')]);
    await world.controlEvent('k4-ce', 'kyc.upgraded', { kind: 'party', external_id: 'k4' }, '2026-08-30T10:00:00Z');
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 'k4' }, '2026-08-30T12:00:00Z')).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'account', id: 'k4-a1' }, '2026-08-30T12:00:00Z')).toMatchObject({ outcome: 'not_applicable' });
  });
});

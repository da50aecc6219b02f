import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import { SubjectContext } from '../../framework/context.ts';
import type { Hit } from '../../framework/detector.ts';
import type { MovementChange } from '../../../../schemas/bus/canonical-change.ts';
import { sanctionsHitReported as detector } from './sanctions_hit_reported.ts';
import { customerWithTwoAccounts } from './test-kit.ts';

const AT = '2026-08-31T12:00:00Z';

describe('sanctions_hit_reported', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // A party with two accounts, as most cases need.
  const customer = (party: string, data?: Record<string, unknown>) => customerWithTwoAccounts(world, party, data);

  it('answers insufficient_data while the tenant has sent no control events at all', async () => {
    await customer('s0');
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 's0' }, AT)).toMatchObject({ outcome: 'insufficient_data' });
  });

  it('reports a confirmed hit as critical, with the movements that followed it, on the party and its accounts', async () => {
    await customer('s1');
    await world.movements([
      { id: 's1-m-before', from: ['s1-a1', 's1'], to: [null, null], value: 1000, at: '2026-08-10T10:00:00Z' },
      { id: 's1-m-out', from: ['s1-a1', 's1'], to: [null, null], value: 250000, at: '2026-08-21T10:00:00Z' },
      { id: 's1-m-in', from: [null, null], to: ['s1-a2', 's1'], value: 4000, at: '2026-08-22T10:00:00Z' },
    ]);
    await world.controlEvent('s1-ce', 'sanctions.hit_reported', { kind: 'party', external_id: 's1' }, '2026-08-20T09:00:00Z', {
      outcome: 'Confirmed Match',
      linked_movement_id: 's1-m-before',
    });
    await world.settle();

    const hit = (await world.evaluate(detector, { kind: 'party', id: 's1' }, AT, { trigger: 'control_event' })) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', severity: 'critical', score: 0.95 });
    expect(hit.evidence.movements).toEqual(['s1-m-before', 's1-m-in', 's1-m-out']);
    expect(hit.evidence.amounts).toMatchObject({ total: '254000', count: 2, asset: 'USD', in: '4000', out: '250000' });
    expect(hit.evidence.thresholds).toEqual([{ name: 'sanctions_hits_reported', threshold: 1, observed: 1 }]);
    expect(hit.evidence.window).toEqual({ from: '2026-08-01T12:00:00.000Z', to: '2026-08-31T12:00:00.000Z' });
    expect(hit.evidence.facts?.control_events).toEqual([expect.objectContaining({ id: 's1-ce', type: 'sanctions.hit_reported', standing: 'confirmed' })]);
    expect(hit.summary).toContain('s1-ce');
    expect(hit.summary).toContain('2 movement(s) followed it, 2,500.00 USD out and 40.00 USD in.');

    // An account of the party is told too, on a movement, with its own movements only.
    const onAccount = (await world.evaluate(detector, { kind: 'account', id: 's1-a2' }, AT, { trigger: 'movement' })) as Hit;
    expect(onAccount).toMatchObject({ outcome: 'hit', severity: 'critical' });
    expect(onAccount.evidence.movements).toEqual(['s1-m-before', 's1-m-in']);

    // Evidence stops at the instant evaluated; before the hit there was nothing to report.
    const earlier = (await world.evaluate(detector, { kind: 'party', id: 's1' }, '2026-08-21T12:00:00Z')) as Hit;
    expect(earlier.evidence.movements).toEqual(['s1-m-before', 's1-m-out']);
    expect(await world.evaluate(detector, { kind: 'party', id: 's1' }, '2026-08-20T08:59:59Z')).toEqual({ outcome: 'no_hit' });
  });

  it('reports an unconfirmed hit as high, and a screening status changed to confirmed match as critical', async () => {
    await customer('s2');
    await customer('s3');
    await world.controlEvent('s2-ce', 'sanctions.hit_reported', { kind: 'account', external_id: 's2-a1' }, '2026-08-25T09:00:00Z', { outcome: 'potential_match' });
    await world.controlEvent('s3-ce', 'screening.status_changed', { kind: 'party', external_id: 's3' }, '2026-08-25T09:00:00Z', { outcome: 'confirmed-match' });
    await world.settle();

    expect(await world.evaluate(detector, { kind: 'party', id: 's2' }, AT)).toMatchObject({ outcome: 'hit', severity: 'high', score: 0.8, evidence: { movements: [] } });
    expect(await world.evaluate(detector, { kind: 'account', id: 's2-a1' }, AT)).toMatchObject({ outcome: 'hit', severity: 'high' });
    // A hit on one account is not about its sibling account (the party already carries it).
    expect(await world.evaluate(detector, { kind: 'account', id: 's2-a2' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 's3' }, AT)).toMatchObject({ outcome: 'hit', severity: 'critical' });
    expect(await world.evaluate(detector, { kind: 'party', id: 's3' }, AT, { params: { includeConfirmedScreening: false } })).toEqual({ outcome: 'no_hit' });
  });

  it('keeps a hit the customer has since cleared, at medium', async () => {
    await customer('s4');
    await world.controlEvent('s4-ce1', 'sanctions.hit_reported', { kind: 'party', external_id: 's4' }, '2026-08-25T09:00:00Z', { customer_severity: 'CRITICAL' });
    await world.controlEvent('s4-ce2', 'screening.status_changed', { kind: 'party', external_id: 's4' }, '2026-08-26T09:00:00Z', { outcome: 'false_positive' });
    await world.settle();

    // Before the review cleared it, the customer called it critical.
    expect(await world.evaluate(detector, { kind: 'party', id: 's4' }, '2026-08-26T08:00:00Z')).toMatchObject({ outcome: 'hit', severity: 'critical' });
    const cleared = (await world.evaluate(detector, { kind: 'party', id: 's4' }, AT)) as Hit;
    expect(cleared).toMatchObject({ outcome: 'hit', severity: 'medium', score: 0.45 });
    expect(cleared.evidence.facts?.control_events).toEqual([
      expect.objectContaining({ id: 's4-ce1', standing: 'cleared' }),
      expect.objectContaining({ id: 's4-ce2', clears_earlier_hits: true }),
    ]);
  });

  it('clears a hit only by a clearing of its own subject and screening', async () => {
    await customer('s7');
    await world.controlEvent('s7-ce1', 'sanctions.hit_reported', { kind: 'account', external_id: 's7-a1' }, '2026-08-25T09:00:00Z', { outcome: 'confirmed_match', external_ref: 'scr-1' });
    // A false positive on the sibling account, and one of another screening of the same account.
    await world.controlEvent('s7-ce2', 'screening.status_changed', { kind: 'account', external_id: 's7-a2' }, '2026-08-26T09:00:00Z', { outcome: 'cleared' });
    await world.controlEvent('s7-ce3', 'screening.status_changed', { kind: 'account', external_id: 's7-a1' }, '2026-08-27T09:00:00Z', { outcome: 'cleared', external_ref: 'scr-2' });
    await world.settle();

    const party = (await world.evaluate(detector, { kind: 'party', id: 's7' }, AT)) as Hit;
    expect(party).toMatchObject({ outcome: 'hit', severity: 'critical', score: 0.95 });
    expect(party.evidence.facts?.control_events).toEqual([
      expect.objectContaining({ id: 's7-ce1', standing: 'confirmed' }),
      expect.objectContaining({ id: 's7-ce2', clears_earlier_hits: false }),
      expect.objectContaining({ id: 's7-ce3', clears_earlier_hits: false }),
    ]);
    expect(await world.evaluate(detector, { kind: 'account', id: 's7-a1' }, AT)).toMatchObject({ outcome: 'hit', severity: 'critical' });

    // Its own screening's clearing does clear it.
    await world.controlEvent('s7-ce4', 'screening.status_changed', { kind: 'account', external_id: 's7-a1' }, '2026-08-28T09:00:00Z', { outcome: 'false_positive', external_ref: 'scr-1' });
    await world.settle();
    expect(await world.evaluate(detector, { kind: 'party', id: 's7' }, AT)).toMatchObject({ outcome: 'hit', severity: 'medium', score: 0.45 });
  });

  it('answers no_hit for a hit older than the lookback and for screening that found only a potential match', async () => {
    await customer('s5');
    await world.controlEvent('s5-ce1', 'sanctions.hit_reported', { kind: 'party', external_id: 's5' }, '2026-07-31T11:00:00Z', { outcome: 'confirmed' });
    await world.controlEvent('s5-ce2', 'screening.status_changed', { kind: 'party', external_id: 's5' }, '2026-08-30T09:00:00Z', { outcome: 'potential_match' });
    await world.controlEvent('s5-ce3', 'auth.failed', { kind: 'party', external_id: 's5' }, '2026-08-30T10:00:00Z');
    await world.settle();

    expect(await world.evaluate(detector, { kind: 'party', id: 's5' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(detector, { kind: 'party', id: 's5' }, AT, { params: { lookbackDays: 40 } })).toMatchObject({ outcome: 'hit', severity: 'critical' });
  });

  it('puts the movement that triggered the evaluation first', async () => {
    await customer('s6');
    await world.movements([
      { id: 's6-m1', from: ['s6-a1', 's6'], to: [null, null], value: 500, at: '2026-08-27T10:00:00Z' },
      { id: 's6-m2', from: ['s6-a1', 's6'], to: [null, null], value: 700, at: '2026-08-28T10:00:00Z' },
    ]);
    await world.controlEvent('s6-ce', 'sanctions.hit_reported', { kind: 'party', external_id: 's6' }, '2026-08-26T09:00:00Z');
    await world.settle();

    const trigger = { object: 'movement', external_id: 's6-m1' } as MovementChange;
    const ctx = new SubjectContext(world.stores, world.api.tenantId, 'USD', { kind: 'party', id: 's6' }, new Date(AT), trigger);
    const hit = (await detector.evaluate(ctx, detector.params.parse({}))) as Hit;
    expect(hit.evidence.movements).toEqual(['s6-m1', 's6-m2']);
  });
});

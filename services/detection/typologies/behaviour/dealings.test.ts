import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingAggregates, startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import { SubjectContext } from '../../framework/context.ts';
import { dealings } from './dealings.ts';

const AT = new Date('2026-08-20T20:00:00Z');

describe('dealings', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    await world.party('dl-p');
    await world.account('dl-a', 'dl-p');
    await world.account('dl-savings', 'dl-p');
    await world.party('dl-q');
    await world.account('dl-b', 'dl-q');
    await world.movements([
      { id: 'dl-paid', from: ['dl-a', 'dl-p'], to: ['dl-b', 'dl-q'], value: 300, at: '2026-08-20T08:00:00Z' },
      // Between the holder's own accounts: nobody was dealt with.
      { id: 'dl-swept', from: ['dl-a', 'dl-p'], to: ['dl-savings', 'dl-p'], value: 900, at: '2026-08-20T09:00:00Z' },
      { id: 'dl-earlier', from: ['dl-b', 'dl-q'], to: ['dl-a', 'dl-p'], value: 200, at: '2026-08-18T09:00:00Z' },
    ]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('lists an evaluation\'s dealings from a window start once, for every detector that asks', async () => {
    const { store, calls } = countingAggregates(world);
    const ctx = new SubjectContext({ ...world.stores, aggregates: store }, world.api.tenantId, 'USD', { kind: 'account', id: 'dl-a' }, AT);
    const day = new Date(AT.getTime() - 86_400_000);
    const [first, second] = await Promise.all([dealings(ctx, day), dealings(ctx, new Date(day))]);
    expect(second).toBe(first);
    expect(first.records.map((r) => r.movementId)).toEqual(['dl-paid']);
    expect(calls.get('activities')).toBe(1);
    // Another window start is another listing.
    const week = await dealings(ctx, new Date(AT.getTime() - 7 * 86_400_000));
    expect(week.records.map((r) => r.movementId)).toEqual(['dl-paid', 'dl-earlier']);
    expect(calls.get('activities')).toBe(2);
    // Another evaluation reads again.
    const other = new SubjectContext({ ...world.stores, aggregates: store }, world.api.tenantId, 'USD', { kind: 'account', id: 'dl-a' }, AT);
    expect((await dealings(other, day)).records).toEqual(first.records);
    expect(calls.get('activities')).toBe(3);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphStore } from '../../../platform/graph/port.ts';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { before, holders, side } from '../typologies/network/test-kit.ts';
import { SubjectContext } from './context.ts';
import { prefetch } from './prefetch.ts';
import { flowSetOf } from './snapshot-flows.ts';

const AT = '2026-08-20T12:00:00Z';

describe('flows answered from the snapshot', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
    await holders(world, ['sf-hub', 'sf-a', 'sf-b', 'sf-c', 'sf-d', 'sf-e']);
    await world.movements([
      // In: sf-a twice and sf-b once, the same 150.00 in all (a tie, ordered by account); sf-c in
      // an asset without a rate (unpriced); sf-d before every window asked; sf-e after AT.
      { id: 'sf-1', from: side('sf-a'), to: side('sf-hub'), value: 10_000, at: before(AT, 50) },
      { id: 'sf-2', from: side('sf-a'), to: side('sf-hub'), value: 5_000, at: before(AT, 30) },
      { id: 'sf-3', from: side('sf-b'), to: side('sf-hub'), value: 15_000, at: before(AT, 20) },
      { id: 'sf-4', from: side('sf-c'), to: side('sf-hub'), value: 7_000, asset: 'GBP', at: before(AT, 10) },
      { id: 'sf-5', from: side('sf-d'), to: side('sf-hub'), value: 99_000, at: before(AT, 24 * 40) },
      { id: 'sf-6', from: side('sf-e'), to: side('sf-hub'), value: 99_000, at: before(AT, -5) },
      // Out: to two accounts, to itself, and to someone outside the tenant.
      { id: 'sf-7', from: side('sf-hub'), to: side('sf-a'), value: 3_000, at: before(AT, 8) },
      { id: 'sf-8', from: side('sf-hub'), to: side('sf-b'), value: 20_000, at: before(AT, 6) },
      { id: 'sf-9', from: side('sf-hub'), to: side('sf-hub'), value: 1_000, at: before(AT, 4) },
      { id: 'sf-10', from: side('sf-hub'), to: [null, null], value: 2_000, at: before(AT, 2) },
      // Exactly at a window's start, and exactly at AT.
      { id: 'sf-11', from: side('sf-d'), to: side('sf-hub'), value: 1_000, at: before(AT, 24 * 7) },
      { id: 'sf-12', from: side('sf-hub'), to: side('sf-d'), value: 1_000, at: AT },
    ]);
    await world.settle();
  });
  afterAll(async () => world?.close());

  it('answers fan-in, fan-out and gather-scatter exactly as the network does, without reading it', async () => {
    const subject = { kind: 'account' as const, id: 'sf-hub' };
    const [prefetched] = await prefetch(world.stores, [{ tenantId: world.api.tenantId, subject, at: new Date(AT) }]);
    const refuse = () => Promise.reject(new Error('the network was read'));
    const noNetwork = { ...world.stores, graph: { ...world.stores.graph, fanIn: refuse, fanOut: refuse, gatherScatter: refuse } as unknown as GraphStore };
    const graph = world.stores.graph;
    let compared = 0;
    for (const days of [1, 7, 30, 90]) {
      const since = new Date(Date.parse(AT) - days * 86_400_000);
      for (const limit of [1, 2, 100]) {
        const ctx = new SubjectContext(noNetwork, world.api.tenantId, 'USD', subject, new Date(AT), null, prefetched);
        const window = { since, until: new Date(AT), limit };
        expect(await ctx.fanIn(since, limit)).toEqual(await graph.fanIn(world.api.tenantId, 'sf-hub', window));
        expect(await ctx.fanOut(since, limit)).toEqual(await graph.fanOut(world.api.tenantId, 'sf-hub', window));
        expect(await ctx.gatherScatter(since, limit)).toEqual(await graph.gatherScatter(world.api.tenantId, 'sf-hub', window));
        compared++;
      }
    }
    expect(compared).toBe(12);
    // The cases above are all there: a tie listed by account, an unpriced movement, the window's
    // first instant and AT itself.
    const week = await graph.fanIn(world.api.tenantId, 'sf-hub', { since: new Date(before(AT, 24 * 7)), until: new Date(AT), limit: 100 });
    expect(week.counterparties.map((c) => [c.account, c.sum, c.unpriced])).toEqual([
      ['sf-a', 15_000n, 0],
      ['sf-b', 15_000n, 0],
      ['sf-d', 1_000n, 0],
      ['sf-c', 0n, 1],
    ]);
    expect((await graph.fanOut(world.api.tenantId, 'sf-hub', { since: new Date(before(AT, 1)), until: new Date(AT), limit: 100 })).counterparties.map((c) => c.account)).toEqual(['sf-d']);
  });

  it('leaves the answer to the network when the snapshot does not hold the window', async () => {
    const subject = { kind: 'account' as const, id: 'sf-hub' };
    const ctx = new SubjectContext(world.stores, world.api.tenantId, 'USD', subject, new Date(AT), null, {});
    const since = new Date(before(AT, 24 * 7));
    expect(await ctx.fanIn(since, 100)).toEqual(await world.stores.graph.fanIn(world.api.tenantId, 'sf-hub', { since, until: new Date(AT), limit: 100 }));
  });
});

describe('flowSetOf', () => {
  it('counts every movement in the totals, lists the largest sums first and says when it cut the list', () => {
    const at = (h: number) => new Date(Date.UTC(2026, 0, 1, h));
    const set = flowSetOf(
      'X',
      [
        { movementId: 'm1', account: 'B', value: 5n, occurredAt: at(3) },
        { movementId: 'm2', account: 'A', value: 5n, occurredAt: at(1) },
        { movementId: 'm3', account: 'C', value: null, occurredAt: at(2) },
        { movementId: 'm4', account: 'X', value: 100n, occurredAt: at(2) },
        { movementId: 'm5', account: 'B', value: 1n, occurredAt: at(0) },
      ],
      2,
    );
    expect(set).toEqual({
      account: 'X',
      counterparties: [
        { account: 'B', count: 2, sum: 6n, unpriced: 0, firstAt: at(0), lastAt: at(3) },
        { account: 'A', count: 1, sum: 5n, unpriced: 0, firstAt: at(1), lastAt: at(1) },
      ],
      count: 4,
      sum: 11n,
      truncated: true,
    });
  });
});

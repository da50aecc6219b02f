import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { scatterGather } from './scatter_gather.ts';
import { before, cutShortContext, holders, range, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';

describe('scatter_gather', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // The source pays each intermediary `scatter`, and each then pays the sink `gather`;
  // `gatherFirst` has the intermediaries pay the sink before they were paid.
  async function scheme(prefix: string, n: number, scatter: number, gather: number, options: { sinkParty?: Record<string, unknown>; gatherFirst?: boolean } = {}) {
    const mids = range(`${prefix}-i`, n);
    await holders(world, [`${prefix}-src`, ...mids]);
    await holders(world, [`${prefix}-sink`], { party: options.sinkParty ?? {} });
    await world.movements([
      ...mids.map((mid, i) => ({ id: `${prefix}-s${i + 1}`, from: side(`${prefix}-src`), to: side(mid), value: scatter + i * 100, at: before(AT, 150 - i) })),
      ...mids.map((mid, i) => ({ id: `${prefix}-g${i + 1}`, from: side(mid), to: side(`${prefix}-sink`), value: gather, at: before(AT, options.gatherFirst ? 200 - i : 100 - i) })),
    ]);
    await world.settle();
    return mids;
  }

  it('hits when the intermediaries pass on what they were sent to one account', async () => {
    const mids = await scheme('sg', 5, 100_000, 95_000);
    const hit = (await world.evaluate(scatterGather, { kind: 'account', id: 'sg-src' }, AT)) as Hit;
    expect(hit.outcome).toBe('hit');
    expect(hit.evidence.movements).toEqual(range('sg-s', 5).reverse());
    expect(hit.evidence.counterparties).toEqual(['account:sg-sink', ...mids.map((m) => `account:${m}`)]);
    expect(hit.evidence.amounts).toEqual({ total: '475000', count: 5, asset: 'USD', out: '501000' });
    expect(hit.evidence.thresholds).toEqual([
      { name: 'intermediaries', threshold: 4, observed: 5 },
      { name: 'gathered', threshold: '50000', observed: '475000' },
      { name: 'gather_ratio', threshold: 0.5, observed: 0.948 },
    ]);
    expect(hit.evidence.facts).toMatchObject({ gathers: [{ account: 'sg-sink', intermediaries: mids, gathered: '475000', scattered: '501000' }] });
    expect(hit.evidence.window).toEqual({ from: before(AT, 240), to: new Date(AT).toISOString() });
    expect(hit.severity).toBe('medium');
    expect(hit.summary).toContain('5 intermediaries');
  });

  it('does not hit with one intermediary too few, a sink paid before, or a merchant everyone pays', async () => {
    await scheme('sg-few', 3, 100_000, 95_000);
    await scheme('sg-early', 5, 100_000, 95_000, { gatherFirst: true });
    await scheme('sg-shop', 5, 100_000, 95_000, { sinkParty: { segment: 'merchant' } });
    for (const source of ['sg-few-src', 'sg-early-src', 'sg-shop-src']) {
      expect(await world.evaluate(scatterGather, { kind: 'account', id: source }, AT), source).toEqual({ outcome: 'no_hit' });
    }
    // The merchant case is a scatter-gather in shape: only its segment keeps it out.
    expect(await world.evaluate(scatterGather, { kind: 'account', id: 'sg-shop-src' }, AT, { params: { ignoreGathererSegments: [] } })).toMatchObject({ outcome: 'hit' });
  });

  it('does not hit when the sink gathered sums unrelated to what was scattered', async () => {
    // Paying back four flatmates who each then pay the landlord their rent.
    await scheme('sg-rent', 4, 5_000, 150_000);
    expect(await world.evaluate(scatterGather, { kind: 'account', id: 'sg-rent-src' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('is not applicable to parties, and cannot judge a source whose graph read was cut short', async () => {
    expect(await world.evaluate(scatterGather, { kind: 'party', id: 'sg-src-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    expect(await scatterGather.evaluate(cutShortContext('sg-x', AT), scatterGather.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
    // Only the gathering accounts reached through most intermediaries were read, and none counts
    // (a shop's): one further down, never read, may.
    const mids = ['sg-m1', 'sg-m2', 'sg-m3', 'sg-m4'];
    const paid = { account: 'sg-x', counterparties: mids.map((account) => ({ account, count: 1, sum: 100_000n, unpriced: 0, firstAt: new Date(AT), lastAt: new Date(AT) })), truncated: false };
    const entities: Record<string, { data: Record<string, unknown> }> = { 'account:sg-shop': { data: { holder_party_id: 'sg-shop-p' } }, 'party:sg-shop-p': { data: { segment: 'merchant' } } };
    const shopsFirst = (truncated: boolean) =>
      cutShortContext('sg-x', AT, {
        fanOut: async () => paid,
        scatterGather: async () => ({ source: 'sg-x', gathers: [{ account: 'sg-shop', intermediaries: mids, sum: 390_000n }], truncated }),
        entity: async (kind: string, id: string) => entities[`${kind}:${id}`],
      });
    expect(await scatterGather.evaluate(shopsFirst(true), scatterGather.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
    expect(await scatterGather.evaluate(shopsFirst(false), scatterGather.params.parse({}))).toEqual({ outcome: 'no_hit' });
  });
});

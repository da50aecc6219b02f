import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { gatherScatter } from './gather_scatter.ts';
import { before, cutShortContext, holders, range, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';

describe('gather_scatter', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // `sources` new accounts pay the hub, then it pays `targets` new accounts (or first pays them
  // when `scatterFirst`).
  async function hub(prefix: string, sources: number, targets: number, options: { scatterFirst?: boolean } = {}) {
    const ins = range(`${prefix}-s`, sources);
    const outs = range(`${prefix}-t`, targets);
    await holders(world, [prefix, ...ins, ...outs]);
    const gatherAt = options.scatterFirst ? 60 : 120;
    const scatterAt = options.scatterFirst ? 120 : 60;
    await world.movements([
      ...ins.map((s, i) => ({ id: `${prefix}-in${i + 1}`, from: side(s), to: side(prefix), value: 80_000 + i * 100, at: before(AT, gatherAt - i) })),
      ...outs.map((t, i) => ({ id: `${prefix}-out${i + 1}`, from: side(prefix), to: side(t), value: 78_000 + i * 100, at: before(AT, scatterAt - i) })),
    ]);
    return { ins, outs };
  }

  it('hits when many new accounts pay in and the hub then pays many new accounts about as much', async () => {
    const { ins, outs } = await hub('gs-hub', 6, 6);
    await world.settle();
    const hit = (await world.evaluate(gatherScatter, { kind: 'account', id: 'gs-hub' }, AT)) as Hit;
    expect(hit.outcome).toBe('hit');
    expect(hit.evidence.movements).toEqual([...range('gs-hub-in', 6).reverse(), ...range('gs-hub-out', 6).reverse()]);
    expect(hit.evidence.counterparties).toEqual([...ins.reverse(), ...outs.reverse()].map((a) => `account:${a}`));
    expect(hit.evidence.amounts).toEqual({ total: '481500', count: 12, asset: 'USD', in: '481500', out: '469500' });
    expect(hit.evidence.thresholds).toEqual([
      { name: 'new_sources', threshold: 5, observed: 6 },
      { name: 'new_targets', threshold: 5, observed: 6 },
      { name: 'new_source_share', threshold: 0.6, observed: 1 },
      { name: 'new_target_share', threshold: 0.6, observed: 1 },
      { name: 'inflow', threshold: '100000', observed: '481500' },
      { name: 'out_in_ratio', threshold: 0.5, observed: 0.975 },
    ]);
    expect(hit.severity).toBe('medium');
    expect(hit.summary).toContain('6 new accounts paid');
  });

  it('does not hit with one target too few, or when the paying out came before the gathering', async () => {
    await hub('gs-few', 6, 4);
    await hub('gs-rev', 6, 6, { scatterFirst: true });
    await world.settle();
    expect(await world.evaluate(gatherScatter, { kind: 'account', id: 'gs-few' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(gatherScatter, { kind: 'account', id: 'gs-rev' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it("does not hit a business's regular customers and suppliers, nor a merchant under its segment's defaults", async () => {
    const { ins, outs } = await hub('gs-biz', 6, 6);
    // The same customers and suppliers last month.
    await world.movements([
      ...ins.map((s, i) => ({ id: `gs-biz-oldin${i}`, from: side(s), to: side('gs-biz'), value: 80_000, at: before(AT, 40 * 24 + i) })),
      ...outs.map((t, i) => ({ id: `gs-biz-oldout${i}`, from: side('gs-biz'), to: side(t), value: 78_000, at: before(AT, 39 * 24 + i) })),
    ]);
    await hub('gs-shop', 6, 6);
    await world.settle();
    expect(await world.evaluate(gatherScatter, { kind: 'account', id: 'gs-biz' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(gatherScatter, { kind: 'account', id: 'gs-shop' }, AT)).toMatchObject({ outcome: 'hit' });
    expect(await world.evaluate(gatherScatter, { kind: 'account', id: 'gs-shop' }, AT, { params: gatherScatter.segmentDefaults!.merchant! })).toEqual({ outcome: 'no_hit' });
  });

  it('is not applicable to parties, and cannot judge a hub whose graph read was cut short', async () => {
    expect(await world.evaluate(gatherScatter, { kind: 'party', id: 'gs-hub-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    expect(await gatherScatter.evaluate(cutShortContext('gs-x', AT), gatherScatter.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
    // The inflow read, then the budget ran out on the outflow.
    const sources = Array.from({ length: 60 }, (_, i) => ({ account: `gs-s${i}`, count: 1, sum: 100_000n, unpriced: 0, firstAt: new Date(AT), lastAt: new Date(AT) }));
    const halfRead = cutShortContext('gs-x', AT, { gatherScatter: async () => ({ hub: 'gs-x', sources, targets: [], inSum: 6_000_000n, outSum: 0n, truncated: true }) });
    expect(await gatherScatter.evaluate(halfRead, gatherScatter.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { compileRuleset, defaultRulesetDocument } from '../../framework/ruleset.ts';
import { fanIn } from './fan_in.ts';
import { before, cutShortContext, holders, range, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';

describe('fan_in', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // `n` new senders each paying the hub about `value` within the last three days.
  async function smurfs(hub: string, prefix: string, n: number, value: (i: number) => number) {
    const senders = range(prefix, n);
    await holders(world, [hub, ...senders]);
    await world.movements(senders.map((s, i) => ({ id: `${prefix}-m${i + 1}`, from: side(s), to: side(hub), value: value(i), at: before(AT, 70 - i * 3) })));
    return senders;
  }

  it('hits on many new senders with like-sized amounts, and the money moving on raises it', async () => {
    const senders = await smurfs('fi-hub', 'fi-s', 12, (i) => 30_000 + i * 150);
    await holders(world, ['fi-out']);
    await world.movement({ id: 'fi-out-1', from: side('fi-hub'), to: side('fi-out'), value: 300_000, at: before(AT, 2) });
    await world.settle();

    const outcome = await world.evaluate(fanIn, { kind: 'account', id: 'fi-hub' }, AT);
    expect(outcome.outcome).toBe('hit');
    const hit = outcome as Hit;
    expect(hit.evidence.movements).toHaveLength(13);
    expect(hit.evidence.movements).toEqual(expect.arrayContaining([...range('fi-s-m', 12), 'fi-out-1']));
    // Largest inflow first.
    expect(hit.evidence.movements[0]).toBe('fi-s-m12');
    expect(hit.evidence.counterparties).toEqual(expect.arrayContaining(senders.map((s) => `account:${s}`)));
    expect(hit.evidence.amounts).toMatchObject({ count: 12, asset: 'USD', total: String(12 * 30_000 + 150 * 66), out: '300000' });
    expect(hit.evidence.thresholds).toEqual(
      expect.arrayContaining([
        { name: 'new_senders', threshold: 8, observed: 12 },
        { name: 'new_sender_share', threshold: 0.6, observed: 1 },
        expect.objectContaining({ name: 'amount_cv', threshold: 0.35 }),
        { name: 'outflow_after_ratio', threshold: 0.5, observed: expect.any(Number) },
      ]),
    );
    expect(hit.evidence.window).toEqual({ from: before(AT, 7 * 24), to: new Date(AT).toISOString() });
    // 12/8 of the count plus money moving on: over the medium band.
    expect(hit.severity).toBe('high');
    expect(hit.score).toBeGreaterThanOrEqual(0.65);
    expect(hit.summary).toContain('12 new senders');

    // Before the outflow the same fan is only medium.
    const earlier = (await world.evaluate(fanIn, { kind: 'account', id: 'fi-hub' }, before(AT, 3))) as Hit;
    expect(earlier.outcome).toBe('hit');
    expect(earlier.severity).toBe('medium');
    expect(earlier.evidence.movements).not.toContain('fi-out-1');
  });

  it('does not hit one sender short of the threshold', async () => {
    await smurfs('fi-short', 'fi-short-s', 7, () => 30_000);
    await world.settle();
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-short' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('does not hit when the senders are regular counterparties', async () => {
    const senders = await smurfs('fi-reg', 'fi-reg-s', 10, () => 30_000);
    // The same people paid a month earlier: a club collecting its monthly dues.
    await world.movements(senders.map((s, i) => ({ id: `fi-reg-old${i + 1}`, from: side(s), to: side('fi-reg'), value: 30_000, at: before(AT, 30 * 24 + i) })));
    await world.settle();
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-reg' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('does not hit on varied small amounts (a consumer selling second-hand goods)', async () => {
    const amounts = [1_500, 12_000, 4_000, 25_000, 2_000, 9_000, 800, 30_000, 5_500, 15_000];
    await smurfs('fi-sell', 'fi-sell-s', 10, (i) => amounts[i]!);
    await world.settle();
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-sell' }, AT)).toEqual({ outcome: 'no_hit' });
    // A material total makes the same crowd a hit whatever the amounts.
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-sell' }, AT, { params: { minTotal: '100000' } })).toMatchObject({ outcome: 'hit' });
  });

  it("does not hit a merchant's crowd of new payers under its segment's defaults", async () => {
    await smurfs('fi-shop', 'fi-shop-s', 20, () => 2_500);
    await world.settle();
    const merchant = fanIn.segmentDefaults!.merchant!;
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-shop' }, AT)).toMatchObject({ outcome: 'hit' });
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-shop' }, AT, { params: merchant })).toEqual({ outcome: 'no_hit' });
    // The built-in ruleset applies those defaults to merchants.
    const compiled = compileRuleset(0, defaultRulesetDocument([fanIn]), [fanIn]);
    if (!compiled.ok) throw new Error('default ruleset does not compile');
    expect(compiled.ruleset.detectors[0]!.paramsFor('merchant', undefined)).toMatchObject({ minNewSenders: 100 });
  });

  it('does not hit an account whose normal traffic is that busy', async () => {
    // Forty days of three new payers a day, then a week like any other.
    const regulars = range('fi-busy-s', 12);
    await holders(world, ['fi-busy', ...regulars]);
    const history = Array.from({ length: 40 * 3 }, (_, i) => ({
      id: `fi-busy-h${i}`,
      from: side(regulars[i % regulars.length]!),
      to: side('fi-busy'),
      value: 30_000,
      at: before(AT, 47 * 24 - i * 8),
    }));
    const fresh = range('fi-busy-n', 9);
    await holders(world, fresh);
    await world.movements([
      ...history,
      ...fresh.map((s, i) => ({ id: `fi-busy-m${i}`, from: side(s), to: side('fi-busy'), value: 30_000, at: before(AT, 60 - i * 5) })),
    ]);
    await world.settle();
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-busy' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(fanIn, { kind: 'account', id: 'fi-busy' }, AT, { params: { baselineMultiple: 0 } })).toMatchObject({ outcome: 'hit' });
  });

  it('is not applicable to parties, and cannot judge an account whose graph read was cut short', async () => {
    expect(await world.evaluate(fanIn, { kind: 'party', id: 'fi-hub-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    const params = fanIn.params.parse({});
    expect(await fanIn.evaluate(cutShortContext('fi-x', AT), params)).toMatchObject({ outcome: 'insufficient_data' });
  });
});

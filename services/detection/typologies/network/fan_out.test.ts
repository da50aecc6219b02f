import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { fanOut } from './fan_out.ts';
import { before, cutShortContext, holders, range, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';

describe('fan_out', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // The hub pays `n` new receivers within the last three days.
  async function dispersal(hub: string, prefix: string, n: number, value: (i: number) => number) {
    const receivers = range(prefix, n);
    await holders(world, [hub, ...receivers]);
    await world.movements(receivers.map((r, i) => ({ id: `${prefix}-m${i + 1}`, from: side(hub), to: side(r), value: value(i), at: before(AT, 60 - i * 3) })));
    return receivers;
  }

  it('hits on many new receivers, raised by fresh funding just before', async () => {
    await holders(world, ['fo-funder']);
    await world.movement({ id: 'fo-fund', from: side('fo-funder'), to: side('fo-hub'), value: 500_000, at: before(AT, 64) });
    const receivers = await dispersal('fo-hub', 'fo-r', 9, (i) => 45_000 + i * 100);
    await world.settle();

    const hit = (await world.evaluate(fanOut, { kind: 'account', id: 'fo-hub' }, AT)) as Hit;
    expect(hit.outcome).toBe('hit');
    expect(hit.evidence.movements).toEqual([...range('fo-r-m', 9).reverse(), 'fo-fund']);
    expect(hit.evidence.counterparties).toEqual(expect.arrayContaining(receivers.map((r) => `account:${r}`)));
    expect(hit.evidence.counterparties).not.toContain('account:fo-funder');
    expect(hit.evidence.amounts).toMatchObject({ count: 9, total: String(405_000 + 3_600), out: String(405_000 + 3_600), in: '500000' });
    expect(hit.evidence.thresholds).toEqual(
      expect.arrayContaining([
        { name: 'new_receivers', threshold: 8, observed: 9 },
        { name: 'funding_before_ratio', threshold: 0.5, observed: expect.any(Number) },
      ]),
    );
    expect(hit.severity).toBe('medium');
    expect(hit.summary).toContain('9 new receivers');

    // Without the funding the same payouts score lower.
    const unfunded = (await world.evaluate(fanOut, { kind: 'account', id: 'fo-hub' }, AT, { params: { fundingRatio: 5 } })) as Hit;
    expect(unfunded.score).toBeLessThan(hit.score);
    expect(unfunded.evidence.thresholds.map((t) => t.name)).not.toContain('funding_before_ratio');
  });

  it('does not hit one receiver short of the threshold', async () => {
    await dispersal('fo-short', 'fo-short-r', 7, () => 45_000);
    await world.settle();
    expect(await world.evaluate(fanOut, { kind: 'account', id: 'fo-short' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it("does not hit a payroll run to last month's employees, nor a first run under the payroll defaults", async () => {
    const staff = await dispersal('fo-pay', 'fo-pay-r', 12, () => 250_000);
    await world.movements(staff.map((r, i) => ({ id: `fo-pay-old${i}`, from: side('fo-pay'), to: side(r), value: 250_000, at: before(AT, 31 * 24 + i) })));
    await dispersal('fo-pay2', 'fo-pay2-r', 12, () => 250_000);
    await world.settle();
    expect(await world.evaluate(fanOut, { kind: 'account', id: 'fo-pay' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(fanOut, { kind: 'account', id: 'fo-pay2' }, AT)).toMatchObject({ outcome: 'hit' });
    expect(await world.evaluate(fanOut, { kind: 'account', id: 'fo-pay2' }, AT, { params: fanOut.segmentDefaults!.payroll! })).toEqual({ outcome: 'no_hit' });
  });

  it('is not applicable to parties, and cannot judge an account whose graph read was cut short', async () => {
    expect(await world.evaluate(fanOut, { kind: 'party', id: 'fo-hub-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    expect(await fanOut.evaluate(cutShortContext('fo-x', AT), fanOut.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
  });
});

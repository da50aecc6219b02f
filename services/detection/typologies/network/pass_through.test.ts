import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { passThrough } from './pass_through.ts';
import { before, holders, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';

describe('pass_through', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  it('hits when nearly all of a material inflow leaves within 48 hours, to accounts or outside', async () => {
    await holders(world, ['pt-a', 'pt-src', 'pt-dst']);
    await world.movements([
      { id: 'pt-in', from: side('pt-src'), to: side('pt-a'), value: 500_000, at: before(AT, 30) },
      { id: 'pt-out1', from: side('pt-a'), to: side('pt-dst'), value: 200_000, at: before(AT, 10) },
      { id: 'pt-out2', from: side('pt-a'), to: [null, null], value: 270_000, at: before(AT, 9), type: 'cash_out' },
      // Spent before the money arrived: not part of the pass.
      { id: 'pt-early', from: side('pt-a'), to: side('pt-dst'), value: 10_000, at: before(AT, 40) },
    ]);
    await world.settle();

    // Two payees (an account and a cash withdrawal): a pass at most two wide.
    const hit = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-a' }, AT, { params: { maxCounterpartiesPerSide: 2 } })) as Hit;
    expect(hit.outcome).toBe('hit');
    expect(hit.evidence.movements).toEqual(['pt-in', 'pt-out2', 'pt-out1']);
    expect(hit.evidence.counterparties).toEqual(['account:pt-dst', 'account:pt-src']);
    expect(hit.evidence.amounts).toEqual({ total: '500000', count: 3, asset: 'USD', in: '500000', out: '470000' });
    expect(hit.evidence.thresholds).toEqual([
      { name: 'inflow', threshold: '100000', observed: '500000' },
      { name: 'out_in_ratio', threshold: 0.8, observed: 0.94 },
      // The cash withdrawal names no counterparty: it counts as one of its own.
      { name: 'counterparties_per_side', threshold: 2, observed: 2 },
    ]);
    expect(hit.evidence.window).toEqual({ from: before(AT, 48), to: new Date(AT).toISOString() });
    expect(hit.evidence.facts).toMatchObject({ flow_hours: 21, retained: '30000' });
    expect(hit.summary).toContain('within 48 hours');
    // Judged again two days on with nothing new, the flow is found in the week's window: its facts
    // are the same, so an alert closed on them stays closed (pipelines/detect/alerts.ts).
    const later = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-a' }, new Date(new Date(AT).getTime() + 2 * 86_400_000).toISOString(), { params: { maxCounterpartiesPerSide: 2 } })) as Hit;
    expect(later.summary).toContain('within 168 hours');
    expect(later.evidence.facts).toEqual(hit.evidence.facts);
    expect(hit.severity).toBe('medium');
  });

  it('does not take a payment sent back, or taken back, for money passing through', async () => {
    await holders(world, ['pt-rv', 'pt-rv-src', 'pt-rf', 'pt-rf-src', 'pt-rf-dst']);
    await world.movements([
      { id: 'pt-rv-in', from: side('pt-rv-src'), to: side('pt-rv'), value: 150_000, at: before(AT, 30) },
      { id: 'pt-rv-back', from: side('pt-rv'), to: side('pt-rv-src'), value: 150_000, at: before(AT, 10), type: 'reversal' },
      // A real pass beside a refund: the refund is left out of both the sums and the evidence.
      { id: 'pt-rf-in', from: side('pt-rf-src'), to: side('pt-rf'), value: 500_000, at: before(AT, 30) },
      { id: 'pt-rf-refund', from: side('pt-rf'), to: side('pt-rf-src'), value: 20_000, at: before(AT, 20), type: 'refund' },
      { id: 'pt-rf-out', from: side('pt-rf'), to: side('pt-rf-dst'), value: 460_000, at: before(AT, 10) },
    ]);
    await world.settle();
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-rv' }, AT)).toEqual({ outcome: 'no_hit' });
    const hit = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-rf' }, AT)) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', evidence: { movements: ['pt-rf-in', 'pt-rf-out'], amounts: { in: '500000', out: '460000' } } });
  });

  // Issue 32: an account paid by several and paying several others in the same days is spending
  // its income; a chain's link passes money from few accounts to few.
  it('does not hit a wide pass, from three payers to three payees, at the default', async () => {
    await holders(world, ['pt-wide', 'pt-w-s1', 'pt-w-s2', 'pt-w-s3', 'pt-w-d1', 'pt-w-d2', 'pt-w-d3']);
    await world.movements([
      ...[1, 2, 3].map((i) => ({ id: `pt-w-in${i}`, from: side(`pt-w-s${i}`), to: side('pt-wide'), value: 200_000, at: before(AT, 30 - i) })),
      ...[1, 2, 3].map((i) => ({ id: `pt-w-out${i}`, from: side('pt-wide'), to: side(`pt-w-d${i}`), value: 190_000, at: before(AT, 10 - i) })),
    ]);
    await world.settle();
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-wide' }, AT)).toEqual({ outcome: 'no_hit' });
    const wide = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-wide' }, AT, { params: { maxCounterpartiesPerSide: 3 } })) as Hit;
    expect(wide).toMatchObject({ outcome: 'hit', evidence: { facts: { in_counterparties: 3, out_counterparties: 3 } } });
    expect(wide.evidence.thresholds).toContainEqual({ name: 'counterparties_per_side', threshold: 3, observed: 3 });
  });

  it('falls back to the week-long window when the pass was slower, at a lower score', async () => {
    await holders(world, ['pt-slow', 'pt-slow-src', 'pt-slow-dst']);
    await world.movements([
      { id: 'pt-slow-in', from: side('pt-slow-src'), to: side('pt-slow'), value: 500_000, at: before(AT, 100) },
      { id: 'pt-slow-out', from: side('pt-slow'), to: side('pt-slow-dst'), value: 470_000, at: before(AT, 20) },
    ]);
    await world.settle();
    const hit = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-slow' }, AT)) as Hit;
    expect(hit).toMatchObject({ outcome: 'hit', evidence: { facts: { flow_hours: 80 }, movements: ['pt-slow-in', 'pt-slow-out'] } });
    const rapid = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-a' }, AT, { params: { maxCounterpartiesPerSide: 2 } })) as Hit;
    expect(hit.score).toBeLessThan(rapid.score);
  });

  it('does not hit just under the ratio or the minimum inflow, nor on moves to own accounts or an earlier balance spent', async () => {
    await holders(world, ['pt-under', 'pt-small', 'pt-own', 'pt-bal', 'pt-x', 'pt-y']);
    await world.account('pt-own-savings', 'pt-own-p');
    await world.movements([
      // 75 % forwarded.
      { id: 'pt-under-in', from: side('pt-x'), to: side('pt-under'), value: 500_000, at: before(AT, 30) },
      { id: 'pt-under-out', from: side('pt-under'), to: side('pt-y'), value: 375_000, at: before(AT, 10) },
      // All forwarded, but under the minimum inflow.
      { id: 'pt-small-in', from: side('pt-x'), to: side('pt-small'), value: 90_000, at: before(AT, 30) },
      { id: 'pt-small-out', from: side('pt-small'), to: side('pt-y'), value: 90_000, at: before(AT, 10) },
      // Salary swept into the holder's own savings account.
      { id: 'pt-own-in', from: side('pt-x'), to: side('pt-own'), value: 500_000, at: before(AT, 30) },
      { id: 'pt-own-out', from: side('pt-own'), to: ['pt-own-savings', 'pt-own-p'], value: 450_000, at: before(AT, 10) },
      // Five times the inflow out: an earlier balance spent, not this money passed on.
      { id: 'pt-bal-in', from: side('pt-x'), to: side('pt-bal'), value: 200_000, at: before(AT, 30) },
      { id: 'pt-bal-out', from: side('pt-bal'), to: side('pt-y'), value: 1_000_000, at: before(AT, 10) },
    ]);
    await world.settle();
    for (const account of ['pt-under', 'pt-small', 'pt-own', 'pt-bal']) {
      expect(await world.evaluate(passThrough, { kind: 'account', id: account }, AT), account).toEqual({ outcome: 'no_hit' });
    }
  });

  it('does not hit an account that turns its money over like this every day', async () => {
    await holders(world, ['pt-busy', 'pt-busy-src', 'pt-busy-dst']);
    const days = Array.from({ length: 45 }, (_, d) => d);
    await world.movements(
      days.flatMap((d) => [
        { id: `pt-busy-in${d}`, from: side('pt-busy-src'), to: side('pt-busy'), value: 300_000, at: before(AT, 24 * d + 20) },
        { id: `pt-busy-out${d}`, from: side('pt-busy'), to: side('pt-busy-dst'), value: 290_000, at: before(AT, 24 * d + 12) },
      ]),
    );
    await world.settle();
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-busy' }, AT)).toEqual({ outcome: 'no_hit' });
    const unguarded = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-busy' }, AT, { params: { baselineMultiple: 0 } })) as Hit;
    expect(unguarded.outcome).toBe('hit');
  });

  it('does not take cash paid in and taken out again for money passing through, but counts cash paid on', async () => {
    await holders(world, ['pt-cash', 'pt-placed', 'pt-placed-dst']);
    await world.movements([
      { id: 'pt-cash-in', from: [null, null], to: side('pt-cash'), value: 500_000, at: before(AT, 30), type: 'cash_in' },
      { id: 'pt-cash-out', from: side('pt-cash'), to: [null, null], value: 480_000, at: before(AT, 10), type: 'cash_out' },
      // Cash paid in and sent on to an account: placement.
      { id: 'pt-placed-in', from: [null, null], to: side('pt-placed'), value: 500_000, at: before(AT, 30), type: 'cash_in' },
      { id: 'pt-placed-out', from: side('pt-placed'), to: side('pt-placed-dst'), value: 480_000, at: before(AT, 10) },
    ]);
    await world.settle();
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-cash' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-placed' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: { movements: ['pt-placed-in', 'pt-placed-out'] },
    });
  });

  it("judges a window against the account's largest day: a monthly salary spent within days is usual", async () => {
    await holders(world, ['pt-sal', 'pt-sal-more', 'pt-employer', 'pt-landlord']);
    const salaries = (account: string, now: number) => [
      ...[89, 60, 30].map((days) => ({ id: `${account}-pay${days}`, from: side('pt-employer'), to: side(account), value: 400_000, at: before(AT, 24 * days) })),
      { id: `${account}-pay`, from: side('pt-employer'), to: side(account), value: now, at: before(AT, 30) },
      { id: `${account}-rent`, from: side(account), to: side('pt-landlord'), value: Math.round(now * 0.9), at: before(AT, 10) },
    ];
    await world.movements([...salaries('pt-sal', 400_000), ...salaries('pt-sal-more', 900_000)]);
    await world.settle();
    // The daily mean is about 18,000 cents (four salaries over 89 days): twice it over 48 hours is
    // far below one salary, but the largest day before the window is one. The window's own salary
    // is not.
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-sal' }, AT)).toEqual({ outcome: 'no_hit' });
    const more = (await world.evaluate(passThrough, { kind: 'account', id: 'pt-sal-more' }, AT)) as Hit;
    expect(more.outcome).toBe('hit');
    expect(more.evidence.thresholds).toContainEqual({ name: 'in_sum_vs_baseline', threshold: '800000', observed: '900000' });
  });

  it('is not applicable to payroll accounts under their defaults, nor to parties', async () => {
    expect(await world.evaluate(passThrough, { kind: 'account', id: 'pt-a' }, AT, { params: passThrough.segmentDefaults!.payroll! })).toMatchObject({
      outcome: 'not_applicable',
    });
    expect(await world.evaluate(passThrough, { kind: 'party', id: 'pt-a-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
  });
});

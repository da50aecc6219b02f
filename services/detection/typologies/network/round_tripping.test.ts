import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { noQualifyingReturn, roundTripping } from './round_tripping.ts';
import { before, cutShortContext, holders, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';

describe('round_tripping', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // A chain of hops through `accounts` and back to the first, `hours` before AT each.
  function chain(prefix: string, accounts: string[], values: number[], hours: number[]) {
    return accounts.map((from, i) => ({
      id: `${prefix}${i + 1}`,
      from: side(from),
      to: side(accounts[(i + 1) % accounts.length]!),
      value: values[i]!,
      at: before(AT, hours[i]!),
    }));
  }

  it('hits on money returning through three accounts, every hop close to the first, in time order', async () => {
    await holders(world, ['rt-a', 'rt-b', 'rt-c', 'rt-d']);
    await world.movements(chain('rt-m', ['rt-a', 'rt-b', 'rt-c', 'rt-d'], [100_000, 98_000, 97_000, 96_000], [200, 150, 100, 50]));
    await world.settle();

    const hit = (await world.evaluate(roundTripping, { kind: 'account', id: 'rt-a' }, AT)) as Hit;
    expect(hit.outcome).toBe('hit');
    expect(hit.evidence.movements).toEqual(['rt-m1', 'rt-m2', 'rt-m3', 'rt-m4']);
    expect(hit.evidence.counterparties).toEqual(['account:rt-b', 'account:rt-c', 'account:rt-d']);
    expect(hit.evidence.amounts).toEqual({ total: '391000', count: 4, asset: 'USD', out: '100000', in: '96000' });
    expect(hit.evidence.thresholds).toEqual([
      { name: 'cycles', threshold: 1, observed: 1 },
      { name: 'cycle_length', threshold: 2, observed: 4 },
      { name: 'first_hop_amount', threshold: '20000', observed: '100000' },
      { name: 'hop_amount_tolerance', threshold: 0.1, observed: 0.04 },
    ]);
    expect(hit.evidence.facts).toMatchObject({
      cycles: [{ accounts: ['rt-a', 'rt-b', 'rt-c', 'rt-d', 'rt-a'], movements: ['rt-m1', 'rt-m2', 'rt-m3', 'rt-m4'], amounts: ['100000', '98000', '97000', '96000'] }],
    });
    expect(hit.severity).toBe('medium');
    expect(hit.summary).toContain('through 3 other accounts');
    // Before the money came back there was no cycle.
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-a' }, before(AT, 60))).toEqual({ outcome: 'no_hit' });
  });

  it('does not hit when the hops are out of time order or one hop is outside the tolerance', async () => {
    await holders(world, ['rt-u1', 'rt-u2', 'rt-u3', 'rt-t1', 'rt-t2', 'rt-t3']);
    await world.movements([
      // Equal amounts, but the money came back before it left.
      ...chain('rt-u', ['rt-u1', 'rt-u2', 'rt-u3'], [100_000, 100_000, 100_000], [50, 150, 100]),
      // In order, but the middle hop is 15 % short.
      ...chain('rt-t', ['rt-t1', 'rt-t2', 'rt-t3'], [100_000, 85_000, 100_000], [150, 100, 50]),
    ]);
    await world.settle();
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-u1' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-t1' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('leaves out a loan repaid and savings moved between own accounts; a material two-hop return is a low hit', async () => {
    await holders(world, ['rt-lend', 'rt-friend', 'rt-big', 'rt-big2', 'rt-own']);
    await world.account('rt-own-sav', 'rt-own-p');
    await world.account('rt-own-inv', 'rt-own-p');
    await world.movements([
      ...chain('rt-loan', ['rt-lend', 'rt-friend'], [50_000, 50_000], [100, 20]),
      ...chain('rt-own-m', ['rt-own', 'rt-own-sav', 'rt-own-inv'], [1_000_000, 1_000_000, 1_000_000], [100, 60, 20]).map((m) => ({
        ...m,
        from: [m.from[0], 'rt-own-p'] as [string, string],
        to: [m.to[0], 'rt-own-p'] as [string, string],
      })),
      ...chain('rt-big-m', ['rt-big', 'rt-big2'], [600_000, 600_000], [100, 20]),
    ]);
    await world.settle();
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-lend' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-own' }, AT)).toEqual({ outcome: 'no_hit' });
    // The network does hold that cycle: the detector is what leaves it out.
    const owned = await world.stores.graph.cycles(world.api.tenantId, 'rt-own', { since: new Date(before(AT, 500)), until: new Date(AT), minLength: 2, maxLength: 6, tolerance: 0.1, limit: 5 });
    expect(owned.cycles).toHaveLength(1);
    const twoHop = (await world.evaluate(roundTripping, { kind: 'account', id: 'rt-big' }, AT)) as Hit;
    expect(twoHop).toMatchObject({ outcome: 'hit', severity: 'low', evidence: { movements: ['rt-big-m1', 'rt-big-m2'] } });
    expect(twoHop.evidence.thresholds).toContainEqual({ name: 'first_hop_amount_two_hop', threshold: '500000', observed: '600000' });
  });

  it('leaves out a material payment refunded or reversed', async () => {
    await holders(world, ['rt-shop', 'rt-buyer', 'rt-payee', 'rt-payer']);
    const [refunded, refund] = chain('rt-rf', ['rt-buyer', 'rt-shop'], [600_000, 600_000], [100, 20]);
    const [sent, reversed] = chain('rt-rv', ['rt-payer', 'rt-payee'], [700_000, 700_000], [100, 20]);
    await world.movements([refunded!, { ...refund!, type: 'refund' }, sent!, { ...reversed!, type: 'reversal' }]);
    await world.settle();
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-buyer' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-payer' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('answers non-results for parties, impossible parameters and a search cut short', async () => {
    expect(await world.evaluate(roundTripping, { kind: 'party', id: 'rt-a-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
    expect(await world.evaluate(roundTripping, { kind: 'account', id: 'rt-a' }, AT, { params: { minLength: 5, maxLength: 3 } })).toMatchObject({
      outcome: 'not_applicable',
    });
    expect(await roundTripping.evaluate(cutShortContext('rt-x', AT), roundTripping.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
    // Cut short after cycles that do not count (a small two-hop return): the longer ones were never reached.
    const small = { movements: [
      { movementId: 's1', from: 'rt-x', to: 'rt-y', occurredAt: new Date('2026-08-01T00:00:00Z'), amount: 1_000n },
      { movementId: 's2', from: 'rt-y', to: 'rt-x', occurredAt: new Date('2026-08-02T00:00:00Z'), amount: 1_000n },
    ] };
    const stopped = cutShortContext('rt-x', AT, { cycles: async () => ({ cycles: [small], truncated: true }) });
    expect(await roundTripping.evaluate(stopped, roundTripping.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
    const complete = cutShortContext('rt-x', AT, { cycles: async () => ({ cycles: [small], truncated: false }) });
    expect(await roundTripping.evaluate(complete, roundTripping.params.parse({}))).toEqual({ outcome: 'no_hit' });
  });
});

describe('noQualifyingReturn (ruling the cycle search out from the account\'s own movements)', () => {
  let made = 0;
  const m = (value: bigint | null, hour: number, account: string) => ({ movementId: `m${made++}`, account, value, occurredAt: new Date(Date.UTC(2026, 7, 1, hour)) });
  const defaults = { long: 20_000n, twoHop: 500_000n };

  it('finds a return no earlier than a large enough payment out, within the search\'s own amount bounds', () => {
    // 100,000 out to B: a longer cycle takes 90,000 to 110,000 back from another account.
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(90_000n, 5, 'C')], defaults, 0.1)).toBe(false);
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(110_000n, 9, 'C')], defaults, 0.1)).toBe(false);
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(89_999n, 9, 'C'), m(110_001n, 9, 'C')], defaults, 0.1)).toBe(true);
    // Back before it left, or two halves that only add up to it: no cycle can close.
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(100_000n, 4, 'C')], defaults, 0.1)).toBe(true);
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(50_000n, 6, 'C'), m(50_000n, 7, 'C')], defaults, 0.1)).toBe(true);
    // A payment out below the first hop's minimum, or unpriced, starts no cycle; an unpriced one
    // closes none.
    expect(noQualifyingReturn([m(19_999n, 5, 'B'), m(null, 5, 'B')], [m(19_999n, 6, 'C'), m(100_000n, 6, 'C')], defaults, 0.1)).toBe(true);
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(null, 6, 'C')], defaults, 0.1)).toBe(true);
  });

  it('takes a return from the first hop\'s own payee as a two-hop cycle, with its own minimum', () => {
    // B pays back what X paid it: a loan repaid below the two-hop minimum closes no qualifying cycle.
    expect(noQualifyingReturn([m(100_000n, 5, 'B')], [m(100_000n, 6, 'B')], defaults, 0.1)).toBe(true);
    expect(noQualifyingReturn([m(600_000n, 5, 'B')], [m(600_000n, 6, 'B')], defaults, 0.1)).toBe(false);
    // With two-hop cycles not asked for (minLength 3), even a large one; with only two-hop ones
    // asked for (maxLength 2), a return from another account closes nothing.
    expect(noQualifyingReturn([m(600_000n, 5, 'B')], [m(600_000n, 6, 'B')], { long: 20_000n, twoHop: null }, 0.1)).toBe(true);
    expect(noQualifyingReturn([m(600_000n, 5, 'B')], [m(600_000n, 6, 'C')], { long: null, twoHop: 500_000n }, 0.1)).toBe(true);
  });

  it('leaves the question to the flows when there are too many pairs to compare', () => {
    const many = Array.from({ length: 400 }, (_, i) => m(100_000n + BigInt(i) * 1_000_000n, 5, `B${i}`));
    expect(noQualifyingReturn(many, many.map((x) => ({ ...x, value: 1n })), defaults, 0.1)).toBeUndefined();
  });
});

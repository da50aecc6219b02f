// Round-tripping: money leaves the account and comes back to it through other accounts, hop
// after hop in time order, each hop close to the first one's amount, within a month. Cycles only
// among the party's own accounts are left out (moving savings around and back), and so are
// two-hop cycles below a material amount (a loan repaid: A pays B, B pays A back) and two-hop
// cycles whose return is a refund or a reversal of any amount (decision 0008 counts those as
// movements of their own; their types are read only for cycles that would qualify).
//
// Score: 0.5 for one qualifying cycle of three or more hops (medium), 0.35 when every cycle is a
// two-hop one (low); +0.1 per further distinct cycle (at most +0.2); +0.04 per hop over three
// (at most +0.12); +0.04 per doubling of the largest first hop over its minimum (at most +0.12).
// One long cycle of a large amount stays medium; several, long and large, reach high or critical.
import { z } from 'zod';
import type { Cycle } from '../../../../platform/graph/port.ts';
import type { AccountMovement, SubjectContext } from '../../framework/context.ts';
import { defineDetector, nonResult, noHit, type ThresholdCrossed } from '../../framework/detector.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { accountKey, graphSince, listed, moneyParam, percent, spanOfDays, windowOf } from './evidence.ts';
import { excess, finalScore, severityOf } from './scoring.ts';
import { TAKE_BACK_TYPES } from '../../framework/movement-types.ts';

const params = z.strictObject({
  windowDays: z.number().int().min(1).max(90).default(30),
  minLength: z.number().int().min(2).max(10).default(2),
  maxLength: z.number().int().min(2).max(10).default(6),
  // Every hop within this fraction of the first hop's amount.
  tolerance: z.number().min(0).max(0.5).default(0.1),
  // First-hop amount a cycle of three or more hops needs...
  minAmount: moneyParam('20000'),
  // ...and a two-hop one (A → B → A), far more common in ordinary life.
  minAmountTwoHop: moneyParam('500000'),
  // Cycles asked of the graph; the evidence lists the first ones.
  maxCycles: z.number().int().min(1).max(100).default(20),
});

const LISTED_CYCLES = 5;

export const roundTripping = defineDetector({
  id: 'round_tripping',
  typology: 'Round-tripping (cyclic flows)',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['30d'],
  params,
  async evaluate(ctx, p) {
    if (p.minLength > p.maxLength) return nonResult('not_applicable', `minLength ${p.minLength} is above maxLength ${p.maxLength}: no cycle can qualify`);
    const span = spanOfDays(ctx, p.windowDays);
    const since = graphSince(span);
    const minAmount = BigInt(p.minAmount);
    const minAmountTwoHop = BigInt(p.minAmountTwoHop);
    const minimum: FirstHopMinimum = { long: p.maxLength >= 3 ? minAmount : null, twoHop: p.minLength <= 2 ? minAmountTwoHop : null };
    if (await cannotClose(ctx, since, minimum, p.tolerance)) return noHit();
    const found = await ctx.cycles({ since, minLength: p.minLength, maxLength: p.maxLength, tolerance: p.tolerance, limit: p.maxCycles });
    const own = new Set(await ctx.accountsOfParty());
    own.add(ctx.subject.id);
    const material = found.cycles.filter((cycle) => {
      const first = cycle.movements[0]?.amount ?? null;
      if (first === null) return false;
      if (cycle.movements.every((m) => own.has(m.to))) return false;
      return first >= (cycle.movements.length === 2 ? minAmountTwoHop : minAmount);
    });
    const qualifying = await withoutTakeBacks(ctx, material);
    if (qualifying.length === 0) {
      // Cut short, the search may have stopped at cycles that do not count (own accounts, small
      // two-hop returns) before the longer ones it never reached.
      return found.truncated ? nonResult('insufficient_data', 'the cycle search over the network was cut short before it found a cycle that counts') : noHit();
    }
    // Longer cycles first (they are the stronger evidence), then larger, then earlier.
    const ranked = [...qualifying].sort((a, b) => b.movements.length - a.movements.length || Number(firstAmount(b) - firstAmount(a)) || 0);
    const longest = ranked[0]!.movements.length;
    const largest = ranked.reduce((max, c) => (firstAmount(c) > max ? firstAmount(c) : max), 0n);
    const allTwoHop = longest === 2;
    const thresholdFor = allTwoHop ? minAmountTwoHop : minAmount;
    const score = finalScore(
      (allTwoHop ? 0.35 : 0.5) +
        Math.min(0.2, (qualifying.length - 1) * 0.1) +
        Math.min(0.12, Math.max(0, longest - 3) * 0.04) +
        excess(Number(largest), Number(thresholdFor), 0.04, 0.12),
    );
    const thresholds: ThresholdCrossed[] = [
      { name: 'cycles', threshold: 1, observed: qualifying.length },
      { name: 'cycle_length', threshold: p.minLength, observed: longest },
      { name: allTwoHop ? 'first_hop_amount_two_hop' : 'first_hop_amount', threshold: thresholdFor.toString(), observed: largest.toString() },
      { name: 'hop_amount_tolerance', threshold: p.tolerance, observed: Math.round(maxDeviation(ranked) * 1000) / 1000 },
    ];
    const movements = ranked.flatMap((c) => c.movements);
    const total = movements.reduce((sum, m) => sum + (m.amount ?? 0n), 0n);
    const top = ranked[0]!;
    return {
      outcome: 'hit',
      score,
      severity: severityOf(score),
      summary:
        `${qualifying.length} cycle${qualifying.length === 1 ? '' : 's'} of money left the account and returned to it within ${p.windowDays} days, ` +
        `the longest through ${longest - 1} other account${longest === 2 ? '' : 's'} with ${formatMoney(firstAmount(top), ctx.baseAsset)} on its first hop ` +
        `and every hop within ${percent(p.tolerance)} of it.`,
      evidence: {
        movements: listed(movements.map((m) => m.movementId)),
        counterparties: listed(ranked.flatMap((c) => c.movements.map((m) => m.to)).filter((a) => a !== ctx.subject.id).map(accountKey)),
        amounts: {
          total: total.toString(),
          count: movements.length,
          asset: ctx.baseAsset,
          out: ranked.reduce((sum, c) => sum + firstAmount(c), 0n).toString(),
          in: ranked.reduce((sum, c) => sum + (c.movements[c.movements.length - 1]!.amount ?? 0n), 0n).toString(),
        },
        window: windowOf(span),
        thresholds,
        facts: {
          cycles: ranked.slice(0, LISTED_CYCLES).map((c) => ({
            accounts: [ctx.subject.id, ...c.movements.map((m) => m.to)],
            movements: c.movements.map((m) => m.movementId),
            amounts: c.movements.map((m) => (m.amount ?? 0n).toString()),
            from: c.movements[0]!.occurredAt.toISOString(),
            to: c.movements[c.movements.length - 1]!.occurredAt.toISOString(),
          })),
          cycles_found: qualifying.length,
          search_truncated: found.truncated,
        },
      },
    };
  },
});

// Whether the account's own movements rule out any qualifying cycle, sparing the cycle search on
// the many accounts that cannot have one. A cycle's first hop is a priced payment out of at least
// the minimum for its length, and its last hop a payment back in, no earlier, within the tolerance
// of the first hop's amount (the search's own bounds); in a two-hop cycle the payment back comes
// from the first hop's payee, in a longer one from another account (none is visited twice). From
// the snapshot, each such pair of movements is looked for; else, from the network's flows per
// counterparty, the weaker test that some counterparty paid in at least the lowest minimum less
// the tolerance no earlier than some payment out of at least that minimum (only a complete
// listing of the counterparties can rule a cycle out).
async function cannotClose(ctx: SubjectContext, since: Date, minimum: FirstHopMinimum, tolerance: number): Promise<boolean> {
  const from = new Date(since.getTime() - 1);
  const localIn = ctx.snapshotAccountMovements('in', from);
  const localOut = ctx.snapshotAccountMovements('out', from);
  if (localIn && localOut) {
    const verdict = noQualifyingReturn(localOut, localIn, minimum, tolerance);
    if (verdict !== undefined) return verdict;
  }
  let ins: Array<{ sum: bigint; firstAt: Date; lastAt: Date }>;
  let outs: Array<{ sum: bigint; firstAt: Date; lastAt: Date }>;
  const flowsIn = ctx.snapshotAccountFlows('in', from);
  const flowsOut = ctx.snapshotAccountFlows('out', from);
  if (flowsIn && flowsOut) {
    ins = [...flowsIn.values()];
    outs = [...flowsOut.values()];
  } else {
    const [flowIn, flowOut] = await Promise.all([ctx.fanIn(since), ctx.fanOut(since)]);
    if (flowIn.truncated || flowOut.truncated) return false;
    ins = flowIn.counterparties;
    outs = flowOut.counterparties;
  }
  const lowest = lowestOf(minimum);
  const lowestBack = lowest - (lowest * BigInt(Math.round(tolerance * Number(PPM)))) / PPM - 1n;
  const firstOut = Math.min(...outs.filter((c) => c.sum >= lowest).map((c) => c.firstAt.getTime()));
  const lastIn = Math.max(...ins.filter((c) => c.sum >= lowestBack).map((c) => c.lastAt.getTime()));
  // With no such payment out (or in), firstOut is Infinity (lastIn -Infinity).
  return lastIn < firstOut;
}

// The first hop a qualifying cycle needs: at least `long` in a cycle of three or more hops (null
// when the parameters allow none that long), at least `twoHop` in a two-hop one (null when they
// allow none that short).
export interface FirstHopMinimum {
  long: bigint | null;
  twoHop: bigint | null;
}

// minLength <= maxLength and maxLength >= 2: one of them is set.
const lowestOf = (minimum: FirstHopMinimum): bigint =>
  minimum.long === null ? minimum.twoHop! : minimum.twoHop === null || minimum.long < minimum.twoHop ? minimum.long : minimum.twoHop;

// Pairs of movements compared at most, per evaluation; past this the flows' test answers instead.
const PAIRS_COMPARED = 100_000;
const PPM = 1_000_000n;

// Whether no payment out large enough to start a qualifying cycle has a payment back in that could
// close it: no earlier, within the tolerance of its amount (bounds computed as the cycle search
// computes them), from its own payee for a two-hop cycle or from another account for a longer
// one. Undefined when that would take comparing more than PAIRS_COMPARED pairs.
export function noQualifyingReturn(outs: readonly AccountMovement[], ins: readonly AccountMovement[], minimum: FirstHopMinimum, tolerance: number): boolean | undefined {
  const lowest = lowestOf(minimum);
  const firstHops = outs.filter((m) => m.value !== null && m.value >= lowest);
  const returns = ins.filter((m) => m.value !== null);
  if (firstHops.length * returns.length > PAIRS_COMPARED) return undefined;
  const ppm = BigInt(Math.round(tolerance * Number(PPM)));
  for (const hop of firstHops) {
    const amount = hop.value!;
    const low = amount - (amount * ppm) / PPM;
    const high = amount + (amount * ppm) / PPM;
    const at = hop.occurredAt.getTime();
    const closes = (back: AccountMovement) =>
      back.occurredAt.getTime() >= at &&
      back.value! >= low &&
      back.value! <= high &&
      (back.account === hop.account ? minimum.twoHop !== null && amount >= minimum.twoHop : minimum.long !== null && amount >= minimum.long);
    if (returns.some(closes)) return false;
  }
  return true;
}

const firstAmount = (cycle: Cycle) => cycle.movements[0]?.amount ?? 0n;

// The largest relative gap between any hop and its cycle's first hop.
function maxDeviation(cycles: readonly Cycle[]): number {
  let max = 0;
  for (const cycle of cycles) {
    const first = Number(firstAmount(cycle));
    if (first <= 0) continue;
    for (const m of cycle.movements) max = Math.max(max, Math.abs(Number(m.amount ?? 0n) - first) / first);
  }
  return max;
}

// A two-hop cycle whose return is a refund or a reversal is a payment given back, not a round trip.
async function withoutTakeBacks(ctx: SubjectContext, cycles: Cycle[]): Promise<Cycle[]> {
  const returns = cycles.filter((c) => c.movements.length === 2).map((c) => c.movements[1]!.movementId);
  if (returns.length === 0) return cycles;
  const types = await ctx.movementTypes([...new Set(returns)]);
  return cycles.filter((c) => c.movements.length !== 2 || !TAKE_BACK_TYPES.has(types.get(c.movements[1]!.movementId) ?? ''));
}

// Fan-in and fan-out as the subject account sees them: the accounts of other parties it dealt
// with in one direction inside a window, which of them are new (never dealt with before the
// window: a regular payer or payee is not a smurf), the movements with the new ones, and how
// alike their amounts are. Shared by fan_in, fan_out and mule_network.
import type { ActivityRecord, WindowName } from '../../../../platform/aggregates/port.ts';
import type { FlowSet } from '../../../../platform/graph/port.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { accountKey, byRelevance, graphSince, spanOfDays, sumOf, type Span } from './evidence.ts';

type Counterparty = FlowSet['counterparties'][number];

// Activities read per direction and window; a window with more is judged on the latest ones.
const ACTIVITY_LIMIT = 1000;

export interface FanSide {
  span: Span;
  direction: 'in' | 'out';
  // Accounts of other parties dealt with in the window, largest sum first.
  counterparties: Counterparty[];
  // Of those, the ones never dealt with before the window.
  fresh: Counterparty[];
  // The graph listed only the largest counterparties: counts are lower bounds.
  truncated: boolean;
  // Every activity of the subject in this direction in the window (latest first).
  activities: ActivityRecord[];
  // The movements with the new counterparties, most relevant first.
  movements: ActivityRecord[];
  // Priced sum and count of those movements.
  sum: bigint;
  count: number;
  // Coefficient of variation (stddev / mean) of their priced amounts; null with fewer than two.
  amountCv: number | null;
}

export type FanRead =
  // The graph read was cut short before it returned anything: the subject cannot be judged.
  | { kind: 'unreadable' }
  // Fewer new counterparties than asked for: nothing more was read.
  | { kind: 'below' }
  | { kind: 'read'; side: FanSide };

// The smallest aggregate window covering `days`: its count of first-seen counterparties bounds
// the number of new ones in the window from above, and is far cheaper than asking about each.
function coveringWindow(days: number): WindowName | null {
  if (days <= 7) return '7d';
  if (days <= 30) return '30d';
  if (days <= 90) return '90d';
  return null;
}

// Enough room to list every counterparty up to twice the threshold.
export const flowLimit = (minFresh: number) => Math.min(1000, Math.max(100, minFresh * 2));

// `given` is the window's flow when the caller has already read it (gather-scatter reads both
// directions at once).
export async function readFan(
  ctx: SubjectContext,
  direction: 'in' | 'out',
  days: number,
  minFresh: number,
  given?: Pick<FlowSet, 'counterparties' | 'truncated'>,
): Promise<FanRead> {
  const span = spanOfDays(ctx, days);
  if (!given && ctx.counterpartyAccountsAtMost(direction, span.from) < minFresh) return { kind: 'below' };
  const limit = flowLimit(minFresh);
  const flow = given ?? (direction === 'in' ? await ctx.fanIn(graphSince(span), limit) : await ctx.fanOut(graphSince(span), limit));
  if (flow.truncated && flow.counterparties.length === 0) return { kind: 'unreadable' };
  const own = new Set(await ctx.accountsOfParty());
  // A party moving money between its own accounts deals with nobody.
  const counterparties = flow.counterparties.filter((c) => !own.has(c.account) && c.account !== ctx.subject.id);
  if (counterparties.length < minFresh) return { kind: 'below' };
  const covering = coveringWindow(days);
  if (covering) {
    const stats = await ctx.window(covering);
    if (stats.firstSeenCounterparties < minFresh) return { kind: 'below' };
  }
  const histories = await Promise.all(counterparties.map((c) => ctx.counterpartyHistory(accountKey(c.account), span.from)));
  const fresh = counterparties.filter((_, i) => histories[i] === null);
  if (fresh.length < minFresh) return { kind: 'below' };
  const activities = await ctx.activities(span.from, { direction, limit: ACTIVITY_LIMIT });
  const freshKeys = new Set(fresh.map((c) => accountKey(c.account)));
  const movements = activities.filter((a) => a.counterparty !== null && freshKeys.has(a.counterparty)).sort(byRelevance);
  return {
    kind: 'read',
    side: {
      span,
      direction,
      counterparties,
      fresh,
      truncated: flow.truncated,
      activities,
      movements,
      sum: sumOf(movements),
      count: movements.length,
      amountCv: coefficientOfVariation(movements),
    },
  };
}

function coefficientOfVariation(records: readonly ActivityRecord[]): number | null {
  const values = records.flatMap((r) => (r.baseValue === null ? [] : [Number(r.baseValue)]));
  if (values.length < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (mean <= 0) return null;
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
  return Math.sqrt(variance) / mean;
}

export interface AmountRule {
  maxAmountCv: number;
  minTotalSimilar: bigint;
  minTotal: bigint;
}

// Smurfing and its mirror split money into many like-sized pieces, or move a material total:
// varied small amounts from many new counterparties (a consumer selling second-hand goods) are
// neither.
export function amountsQualify(side: FanSide, rule: AmountRule): { similar: boolean; material: boolean } {
  const similar = side.amountCv !== null && side.amountCv <= rule.maxAmountCv && side.sum >= rule.minTotalSimilar;
  return { similar, material: side.sum >= rule.minTotal };
}

export interface FollowOn {
  // The opposite flow tied to the fan: outflow after the first new inflow (fan-in), inflow before
  // the last new outflow (fan-out); own-account transfers left out.
  sum: bigint;
  movements: ActivityRecord[];
}

export async function followOn(ctx: SubjectContext, side: FanSide): Promise<FollowOn> {
  const other = side.direction === 'in' ? 'out' : 'in';
  const times = side.movements.map((m) => m.occurredAt.getTime());
  if (times.length === 0) return { sum: 0n, movements: [] };
  const own = new Set((await ctx.accountsOfParty()).map(accountKey));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const activities = await ctx.activities(side.span.from, { direction: other, limit: ACTIVITY_LIMIT });
  const movements = activities
    .filter((a) => !(a.counterparty !== null && own.has(a.counterparty)))
    .filter((a) => (side.direction === 'in' ? a.occurredAt.getTime() >= first : a.occurredAt.getTime() <= last))
    .sort(byRelevance);
  return { sum: sumOf(movements), movements };
}

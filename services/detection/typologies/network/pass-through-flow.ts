// Money passing through an account: in a short window, the outflow after the first inflow is
// nearly all of the inflow (little is left behind), the inflow is material, and it is more than
// the account's normal inflow. Shared by pass_through and mule_network. Transfers between the
// party's own accounts are neither in nor out: moving savings around passes nothing through.
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { compareWithBaseline, type BaselineCheck } from './baseline.ts';
import { accountKey, byRelevance, moneyRatio, spanOfHours, sumOf, type Span } from './evidence.ts';

const HOUR_MS = 3_600_000;
// Activities read for the longest window (both directions); more and the latest are judged.
const ACTIVITY_LIMIT = 2000;

export interface PassThroughRule {
  // Windows tried shortest first: the shortest that qualifies is reported (the most rapid).
  windowHours: readonly number[];
  minRatio: number;
  // Far more out than in is an earlier balance being spent, not this money passing through.
  maxRatio: number;
  minInflow: bigint;
  baselineMultiple: number;
  baselineMinDays: number;
}

export interface PassThrough {
  hours: number;
  // Whether this is the shortest window asked for.
  shortest: boolean;
  span: Span;
  inflow: bigint;
  outflow: bigint;
  ratio: number;
  // Most relevant first.
  ins: ActivityRecord[];
  outs: ActivityRecord[];
  baseline: BaselineCheck;
  // More activities than were read: the sums are over the latest ones only.
  partial: boolean;
}

export async function findPassThrough(ctx: SubjectContext, rule: PassThroughRule): Promise<PassThrough | null> {
  const hours = [...new Set(rule.windowHours)].sort((a, b) => a - b);
  const longest = hours[hours.length - 1];
  if (longest === undefined) return null;
  const activities = await ctx.activities(spanOfHours(ctx, longest).from, { limit: ACTIVITY_LIMIT });
  const own = new Set((await ctx.accountsOfParty()).map(accountKey));
  const external = activities.filter((a) => !(a.counterparty !== null && own.has(a.counterparty)));
  for (const h of hours) {
    const span = spanOfHours(ctx, h);
    const inside = external.filter((a) => a.occurredAt > span.from);
    const ins = inside.filter((a) => a.direction === 'in');
    if (ins.length === 0) continue;
    const firstIn = Math.min(...ins.map((a) => a.occurredAt.getTime()));
    const outs = inside.filter((a) => a.direction === 'out' && a.occurredAt.getTime() >= firstIn);
    const inflow = sumOf(ins);
    const outflow = sumOf(outs);
    if (inflow < rule.minInflow || inflow === 0n) continue;
    const ratio = moneyRatio(outflow, inflow);
    if (ratio < rule.minRatio || ratio > rule.maxRatio) continue;
    const baseline = await compareWithBaseline(ctx, 'in', h * HOUR_MS, { sum: inflow }, { multiple: rule.baselineMultiple, minDays: rule.baselineMinDays });
    if (baseline.compared && baseline.usual) continue;
    return {
      hours: h,
      shortest: h === hours[0],
      span,
      inflow,
      outflow,
      ratio,
      ins: ins.sort(byRelevance),
      outs: outs.sort(byRelevance),
      baseline,
      partial: activities.length >= ACTIVITY_LIMIT,
    };
  }
  return null;
}

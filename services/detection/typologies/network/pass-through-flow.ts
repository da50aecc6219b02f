// Money passing through an account: in a short window, the outflow after the first inflow is
// nearly all of the inflow (little is left behind), the inflow is material, and it is more than
// the account's normal inflow. Shared by pass_through and mule_network. Transfers between the
// party's own accounts are neither in nor out: moving savings around passes nothing through. Nor
// are refunds and reversals (decision 0008 counts them as movements of their own): a payment the
// account received and then sent back, or that was taken back, has the shape of money passing
// through, and is the opposite. Their types are read only for a window that qualifies (the
// activity record carries none, decision 0057), and the windows are then judged again without them.
// Nor is cash paid in and taken out again with no counterparty on either side (decision 0074).
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { perParameters } from '../../framework/per-parameters.ts';
import { compareWithBaseline, type BaselineCheck } from './baseline.ts';
import { accountKey, byRelevance, moneyRatio, spanOfHours, type Span } from './evidence.ts';
import { TAKE_BACK_TYPES } from '../../framework/movement-types.ts';

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
  // The window it was found in (the shortest of the rule's that qualifies).
  hours: number;
  // From the first inflow to the last outflow counted, in whole hours rounded up: a fact of the
  // flow itself, the same however late it is judged (the window found grows as the flow ages, so
  // it is no fact: an alert closed on a flow would open again).
  flowHours: number;
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
  const hours = windowsOf(rule.windowHours);
  const longest = hours[hours.length - 1];
  if (longest === undefined) return null;
  const activities = await ctx.activities(spanOfHours(ctx, longest).from, { limit: ACTIVITY_LIMIT });
  const own = new Set((await ctx.accountsOfParty()).map(accountKey));
  const partial = activities.length >= ACTIVITY_LIMIT;
  const found = await judgeWindows(ctx, rule, hours, activities, own, partial);
  if (found === null) return null;
  const types = await ctx.movementTypes([...new Set([...found.ins, ...found.outs].map((a) => a.movementId))]);
  const takenBack = new Set([...types].filter(([, type]) => TAKE_BACK_TYPES.has(type)).map(([id]) => id));
  if (takenBack.size === 0) return found;
  return judgeWindows(ctx, rule, hours, activities.filter((a) => !takenBack.has(a.movementId)), own, partial);
}

async function judgeWindows(ctx: SubjectContext, rule: PassThroughRule, hours: readonly number[], activities: ActivityRecord[], own: ReadonlySet<string>, partial: boolean): Promise<PassThrough | null> {
  const external = (a: ActivityRecord) => !(a.counterparty !== null && own.has(a.counterparty));
  // Each window is judged by sums alone, in passes over the activities that copy none of them:
  // this runs for every account evaluated (pass_through and mule_network), and nearly every one
  // is judged without a hit. The lists are made for the window that is found.
  for (const h of hours) {
    const span = spanOfHours(ctx, h);
    const from = span.from.getTime();
    const isIn = (a: ActivityRecord) => a.direction === 'in' && a.occurredAt.getTime() > from && external(a);
    let ins = 0;
    let inflow = 0n;
    let firstIn = Infinity;
    for (const a of activities) {
      if (!isIn(a)) continue;
      ins += 1;
      inflow += a.baseValue ?? 0n;
      firstIn = Math.min(firstIn, a.occurredAt.getTime());
    }
    if (ins === 0) continue;
    if (inflow < rule.minInflow || inflow === 0n) continue;
    const isOut = (a: ActivityRecord) => a.direction === 'out' && a.occurredAt.getTime() > from && a.occurredAt.getTime() >= firstIn && external(a);
    let outflow = 0n;
    for (const a of activities) if (isOut(a)) outflow += a.baseValue ?? 0n;
    const ratio = moneyRatio(outflow, inflow);
    if (ratio < rule.minRatio || ratio > rule.maxRatio) continue;
    // Cash paid in and cash taken out, with no counterparty on either side, pass nothing from one
    // party to another that the data can show. Cash paid in and sent on (placement), or money
    // received and taken out in cash, still counts.
    if (!activities.some((a) => a.counterparty !== null && (isIn(a) || isOut(a)))) continue;
    const baseline = await compareWithBaseline(ctx, 'in', h * HOUR_MS, { sum: inflow }, { multiple: rule.baselineMultiple, minDays: rule.baselineMinDays });
    if (baseline.compared && baseline.usual) continue;
    const outs = activities.filter(isOut).sort(byRelevance);
    const lastOut = Math.max(firstIn, ...outs.map((a) => a.occurredAt.getTime()));
    return {
      hours: h,
      flowHours: Math.ceil((lastOut - firstIn) / HOUR_MS),
      shortest: h === hours[0],
      span,
      inflow,
      outflow,
      ratio,
      ins: activities.filter(isIn).sort(byRelevance),
      outs,
      baseline,
      partial,
    };
  }
  return null;
}

// The distinct windows of a rule, shortest first.
const windowsOf = perParameters((windowHours: readonly number[]): readonly number[] => [...new Set(windowHours)].sort((a, b) => a - b));

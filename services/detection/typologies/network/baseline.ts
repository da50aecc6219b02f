// Whether a window's flow is unusual for the subject: an account whose normal traffic already
// looks like the pattern (a merchant's steady stream of new payers, a busy business account
// turning its money over) must not fire on it every day. Accounts without enough history are
// judged on the window alone: young and dormant accounts are where mules and hubs are found.
import type { Evidence, ThresholdCrossed } from '../../framework/detector.ts';
import type { SubjectContext } from '../../framework/context.ts';

const BASELINE_DAYS = 90;
const DAY_MS = 86_400_000;

export interface BaselineRule {
  // The window must be at least this many times the subject's normal; 0 turns the check off.
  multiple: number;
  // With fewer days of history than this the window is judged alone.
  minDays: number;
}

export type BaselineCheck =
  // Not compared: the check is off or the history is too short.
  | { compared: false; days: number }
  // Compared: `usual` when the window is below `multiple` times normal (then no hit), with the
  // threshold crossed and the evidence to show otherwise.
  | { compared: true; usual: boolean; threshold: ThresholdCrossed; evidence: NonNullable<Evidence['baseline']> };

// Compares either the window's movement count or its priced sum in one direction with the
// subject's daily mean over its last 90 days, scaled to the window's length (for a sum, at least
// its largest day in the 90 before the window).
export async function compareWithBaseline(
  ctx: SubjectContext,
  direction: 'in' | 'out',
  windowMs: number,
  observed: { count: number } | { sum: bigint },
  rule: BaselineRule,
): Promise<BaselineCheck> {
  if (rule.multiple <= 0) return { compared: false, days: 0 };
  const baseline = await ctx.baseline(BASELINE_DAYS);
  if (baseline.days < rule.minDays) return { compared: false, days: baseline.days };
  const flow = baseline[direction];
  const windowDays = windowMs / DAY_MS;
  if ('count' in observed) {
    const limit = rule.multiple * flow.meanCount * windowDays;
    return {
      compared: true,
      usual: observed.count < limit,
      threshold: { name: `${direction}_count_vs_baseline`, threshold: Math.round(limit * 100) / 100, observed: observed.count },
      evidence: {
        days: baseline.days,
        mean: flow.meanCount.toFixed(2),
        stddev: flow.stddevCount.toFixed(2),
        observed: (observed.count / windowDays).toFixed(2),
        metric: `${direction} movements per day`,
      },
    };
  }
  // Normal for the window is the daily mean over its length, or the largest day before the window
  // began when that is more: a salary or a pension arrives in one day, so a window holding one
  // like it is not unusual however small the mean it makes. The window's own days are left out of
  // that day, or every lump would be its own normal. Money stays integral: the multiple in
  // thousandths, the window's length in milliseconds.
  const scaledMean = (flow.meanSum * BigInt(Math.round(windowMs))) / BigInt(DAY_MS);
  const largest = (await ctx.baselineBefore(new Date(ctx.at.getTime() - windowMs), BASELINE_DAYS))[direction].maxSum;
  const normal = largest > scaledMean ? largest : scaledMean;
  const limit = (normal * BigInt(Math.round(rule.multiple * 1000))) / 1000n;
  return {
    compared: true,
    usual: observed.sum < limit,
    threshold: { name: `${direction}_sum_vs_baseline`, threshold: limit.toString(), observed: observed.sum.toString() },
    evidence: {
      days: baseline.days,
      mean: flow.meanSum.toString(),
      stddev: flow.stddevSum.toString(),
      observed: ((observed.sum * BigInt(DAY_MS)) / BigInt(Math.max(1, Math.round(windowMs)))).toString(),
      metric: `${direction} sum per day`,
    },
  };
}

// Money that left the subject after a control event, and the subject's normal daily outflow:
// what kyc_downgrade_outflow and account_takeover_sequence both weigh.
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import type { SubjectContext } from '../../framework/context.ts';

// More activities than this after one control event and the list is cut (said in `truncated`):
// the sum is then a lower bound, which can only make a hit less likely, never a false one.
const ACTIVITY_LIMIT = 1000;

export interface Outflows {
  // Priced outgoing activities, largest first.
  priced: ActivityRecord[];
  sum: bigint;
  // Outgoing activities without a base-asset amount (no FX rate): counted, never summed.
  unpriced: number;
  truncated: boolean;
}

// Outgoing activities of the subject in (after, ctx.at]. A transfer between two accounts of the
// subject party is left out: money that stays with the customer has not left it (the party sees
// such a transfer as an out and an in of the same movement).
export async function outflowsAfter(ctx: SubjectContext, after: Date): Promise<Outflows> {
  const activities = await ctx.activities(after, { limit: ACTIVITY_LIMIT });
  const incoming = new Set(activities.filter((a) => a.direction === 'in').map((a) => a.movementId));
  const out = activities.filter((a) => a.direction === 'out' && !(a.counterparty === null && incoming.has(a.movementId)));
  const priced = out.filter((a) => a.baseValue !== null).sort((a, b) => (a.baseValue! > b.baseValue! ? -1 : a.baseValue! < b.baseValue! ? 1 : 0));
  return {
    priced,
    sum: priced.reduce((total, a) => total + a.baseValue!, 0n),
    unpriced: out.length - priced.length,
    truncated: activities.length >= ACTIVITY_LIMIT,
  };
}

export interface DailyOutflow {
  days: number;
  mean: bigint;
  stddev: bigint;
}

// The subject's mean daily outflow over the `days` before the day of ctx.at, or null when it has
// fewer than `minDays` days of history: without a normal there is nothing to compare with.
export async function baselineOutflow(ctx: SubjectContext, days: number, minDays: number): Promise<DailyOutflow | null> {
  const baseline = await ctx.baseline(days);
  if (baseline.days < minDays) return null;
  return { days: baseline.days, mean: baseline.out.meanSum, stddev: baseline.out.stddevSum };
}

// `multiple` × `amount` for a non-negative multiple given as a number (a ruleset parameter),
// kept in integer arithmetic to the hundredth.
export function timesMultiple(amount: bigint, multiple: number): bigint {
  return (amount * BigInt(Math.round(multiple * 100))) / 100n;
}

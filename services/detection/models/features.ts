// The learned detector's view of one account at one instant: about twenty numbers describing its
// own payments over the FEATURE_DAYS before the instant (counts, sums, means and maxima in and
// out, distinct counterparties, active days, the most payments with one counterparty in one day,
// the in/out balance) and, from the network, how concentrated its flows are on one counterparty.
// Causal by construction: everything is read through the subject's context, whose reads stop at
// the evaluation instant. Training and scoring both call subjectFeatures, so a model is always
// scored on exactly the numbers it was trained on.
import type { ActivityRecord } from '../../../platform/aggregates/port.ts';
import type { SubjectContext } from '../framework/context.ts';

// The span the features describe. The detection snapshot holds the 90 days before the day of
// the instant, so the whole span is read from it (no store read in the pipeline).
export const FEATURE_DAYS = 90;
const DAY_MS = 86_400_000;
// More activities than this in the span are not read one by one: the busiest accounts are judged
// on their latest ones (the snapshot's own cap is far higher).
const ACTIVITY_LIMIT = 5_000;

// How a value reads in an explanation: money in base minor units, a count, or a ratio.
type FeatureKind = 'money' | 'count' | 'ratio';
type Domain = readonly [number, number];
// A statistic of one flow's payments (its sum, mean, largest payment, top counterparty's share):
// without payments in that flow it describes nothing, and the model gives it no weight (model.ts).
type Flow = 'in' | 'out';

interface FeatureDefinition {
  name: string;
  kind: FeatureKind;
  text: string;
  domain?: Domain;
  flow?: Flow;
}

// Counts that are 0 whenever their flow's payment count is: an account that sent nothing had no
// payee, no busiest sending day and sent nothing in the last day. Four reasons saying one thing.
export const IMPLIED_BY_NONE: Readonly<Record<'in_count' | 'out_count', readonly string[]>> = {
  in_count: ['in_counterparties', 'max_in_day', 'last_day_in'],
  out_count: ['out_counterparties', 'max_out_day', 'last_day_out'],
};

export const FEATURES = [
  { name: 'in_count', kind: 'count', text: 'payments received' },
  { name: 'out_count', kind: 'count', text: 'payments sent' },
  { name: 'in_sum', kind: 'money', text: 'total received', flow: 'in' },
  { name: 'out_sum', kind: 'money', text: 'total sent', flow: 'out' },
  { name: 'in_mean', kind: 'money', text: 'mean payment received', flow: 'in' },
  { name: 'out_mean', kind: 'money', text: 'mean payment sent', flow: 'out' },
  { name: 'in_max', kind: 'money', text: 'largest payment received', flow: 'in' },
  { name: 'out_max', kind: 'money', text: 'largest payment sent', flow: 'out' },
  { name: 'in_counterparties', kind: 'count', text: 'distinct payers' },
  { name: 'out_counterparties', kind: 'count', text: 'distinct payees' },
  { name: 'active_days', kind: 'count', text: 'days with payments' },
  { name: 'max_same_counterparty_day', kind: 'count', text: 'most payments with one counterparty in one day' },
  { name: 'max_in_day', kind: 'count', text: 'most payments received in one day' },
  { name: 'max_out_day', kind: 'count', text: 'most payments sent in one day' },
  { name: 'last_day_in', kind: 'count', text: 'payments received in the last 24 hours' },
  { name: 'last_day_out', kind: 'count', text: 'payments sent in the last 24 hours' },
  { name: 'flow_balance', kind: 'ratio', text: 'in/out balance ((in - out) / (in + out))', domain: [-1, 1] },
  { name: 'pass_through', kind: 'ratio', text: 'share of the larger flow matched by the smaller', domain: [0, 1] },
  { name: 'in_top_share', kind: 'ratio', text: "top payer's share of the money received (network)", domain: [0, 1], flow: 'in' },
  { name: 'out_top_share', kind: 'ratio', text: "top payee's share of the money sent (network)", domain: [0, 1], flow: 'out' },
] as const satisfies ReadonlyArray<FeatureDefinition>;

export type FeatureName = (typeof FEATURES)[number]['name'];
export const FEATURE_NAMES: readonly FeatureName[] = FEATURES.map((f) => f.name);

// What an activity adds to the money features. A reversal leg carries negative money (the spec
// allows it); counted with its sign it would shrink a flow's sum below its top counterparty's and
// push the ratios out of their domain, so it adds nothing to sums and maxima (it still counts as
// a payment). On non-negative money this is the value itself.
const moneyOf = (value: bigint | null): bigint => (value !== null && value > 0n ? value : 0n);
// Money as a number is fine here: a feature is a statistic the model weighs, never an amount that
// is booked or shown as money (explanations print the money features as whole minor units).
const num = (value: bigint | null): number => Number(moneyOf(value));

// The activity features of the records (any order) that fall in (at - FEATURE_DAYS, at].
export function activityFeatures(records: readonly ActivityRecord[], at: Date): Record<Exclude<FeatureName, 'in_top_share' | 'out_top_share'>, number> {
  const end = at.getTime();
  const start = end - FEATURE_DAYS * DAY_MS;
  const side = () => ({ count: 0, sum: 0, max: 0, counterparties: new Set<string>(), perDay: new Map<number, number>(), lastDay: 0 });
  const flows = { in: side(), out: side() };
  const days = new Set<number>();
  const sameCounterpartyDay = new Map<string, number>();
  for (const r of records) {
    const t = r.occurredAt.getTime();
    if (t <= start || t > end) continue;
    const flow = flows[r.direction];
    const value = num(r.baseValue);
    const day = Math.floor(t / DAY_MS);
    flow.count += 1;
    flow.sum += value;
    if (value > flow.max) flow.max = value;
    flow.perDay.set(day, (flow.perDay.get(day) ?? 0) + 1);
    if (end - t < DAY_MS) flow.lastDay += 1;
    days.add(day);
    if (r.counterparty) {
      flow.counterparties.add(r.counterparty);
      const key = `${r.counterparty}\u0000${day}`;
      sameCounterpartyDay.set(key, (sameCounterpartyDay.get(key) ?? 0) + 1);
    }
  }
  const mostInADay = (perDay: Map<number, number>) => Math.max(0, ...perDay.values());
  const total = flows.in.sum + flows.out.sum;
  const larger = Math.max(flows.in.sum, flows.out.sum);
  return {
    in_count: flows.in.count,
    out_count: flows.out.count,
    in_sum: flows.in.sum,
    out_sum: flows.out.sum,
    in_mean: flows.in.count ? flows.in.sum / flows.in.count : 0,
    out_mean: flows.out.count ? flows.out.sum / flows.out.count : 0,
    in_max: flows.in.max,
    out_max: flows.out.max,
    in_counterparties: flows.in.counterparties.size,
    out_counterparties: flows.out.counterparties.size,
    active_days: days.size,
    max_same_counterparty_day: Math.max(0, ...sameCounterpartyDay.values()),
    max_in_day: mostInADay(flows.in.perDay),
    max_out_day: mostInADay(flows.out.perDay),
    last_day_in: flows.in.lastDay,
    last_day_out: flows.out.lastDay,
    flow_balance: total > 0 ? (flows.in.sum - flows.out.sum) / total : 0,
    pass_through: larger > 0 ? Math.min(flows.in.sum, flows.out.sum) / larger : 0,
  };
}

// The top counterparty's share of a flow set's money (0 without money).
function topShare(flow: { sum: bigint; counterparties: Array<{ sum: bigint }> }): number {
  const top = flow.counterparties[0];
  return top && flow.sum > 0n ? Number(top.sum) / Number(flow.sum) : 0;
}

export type FeatureValues = Record<FeatureName, number>;

// Every ratio held to its domain, where training and scoring (and the explanation's baseline) both
// take their values. Ratios enter the model untransformed, so one value out of its domain (a
// network share over a flow the graph nets negative legs out of, say) would move the score without
// bound. On non-negative money every ratio is already inside its domain: nothing changes.
function withinDomains(values: FeatureValues): FeatureValues {
  const out = { ...values };
  for (const f of FEATURES) if ('domain' in f) out[f.name] = Math.min(f.domain[1], Math.max(f.domain[0], values[f.name]));
  return out;
}

// The features of the context's subject (an account) at the context's instant, with the
// activities they were computed from (latest first).
export async function subjectFeatures(ctx: SubjectContext): Promise<{ values: FeatureValues; records: ActivityRecord[] }> {
  const since = new Date(ctx.at.getTime() - FEATURE_DAYS * DAY_MS);
  const [records, fanIn, fanOut] = await Promise.all([
    ctx.activities(since, { limit: ACTIVITY_LIMIT }),
    ctx.fanIn(new Date(since.getTime() + 1), 1),
    ctx.fanOut(new Date(since.getTime() + 1), 1),
  ]);
  return { values: withinDomains({ ...activityFeatures(records, ctx.at), in_top_share: topShare(fanIn), out_top_share: topShare(fanOut) }), records };
}

// The same activity features over the FEATURE_DAYS ending `lagDays` before the instant: the
// subject's own earlier behaviour, which an explanation sets each value against. Read from the
// aggregate store (older than the detection snapshot holds), only for a subject the model flagged.
export async function earlierFeatures(ctx: SubjectContext, lagDays: number): Promise<Partial<FeatureValues>> {
  const end = new Date(ctx.at.getTime() - lagDays * DAY_MS);
  const since = new Date(end.getTime() - FEATURE_DAYS * DAY_MS);
  const subject = { tenantId: ctx.tenantId, kind: ctx.subject.kind, id: ctx.subject.id };
  const records = await ctx.stores.aggregates.activities(subject, since, end, { limit: ACTIVITY_LIMIT });
  return withinDomains({ ...activityFeatures(records, end), in_top_share: topShareOf(records, 'in'), out_top_share: topShareOf(records, 'out') });
}

// The network's top-share features from the activities themselves: the flows with other
// accounts, as the graph counts them.
function topShareOf(records: readonly ActivityRecord[], direction: 'in' | 'out'): number {
  const sums = new Map<string, bigint>();
  let sum = 0n;
  for (const r of records) {
    if (r.direction !== direction || !r.counterparty?.startsWith('account:')) continue;
    sum += moneyOf(r.baseValue);
    sums.set(r.counterparty, (sums.get(r.counterparty) ?? 0n) + moneyOf(r.baseValue));
  }
  const top = [...sums.values()].reduce((max, v) => (v > max ? v : max), 0n);
  return topShare({ sum, counterparties: top > 0n ? [{ sum: top }] : [] });
}

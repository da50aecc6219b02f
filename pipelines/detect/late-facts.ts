// Facts of one subject can reach detection out of event-time order: change records are spread
// over the log's partitions by movement, and each partition is taken as soon as the graph and the
// aggregates have committed it, at its own pace. A fact evaluated after a later fact of the same
// subject was evaluated without it (the later one's windows did not hold it yet), and is itself
// judged at its own instant, whose windows end before the later fact: no evaluation would ever
// see both. A fan-in whose last payment is evaluated before an earlier one is never seen.
//
// So a subject whose snapshot already holds a later fact, within LATE_FACT_SPAN_MS, is evaluated
// once more at the latest such fact, as that movement was: every window of that evaluation holds
// both facts (the span is the shortest window), as with coalesced touches (subjects.ts).
import type { Prefetched } from './framework/context.ts';
import { COALESCE_SPAN_MS, type SubjectWork } from './subjects.ts';

export const LATE_FACT_SPAN_MS = COALESCE_SPAN_MS;

export interface LateFactWork {
  work: SubjectWork;
  // The item of the batch whose prefetched data it reads: its snapshot reaches the later fact.
  prefetchedFrom: number;
}

// The evaluations to add to a batch's work, given what was prefetched for each item (snapshots
// loaded LATE_FACT_SPAN_MS past their latest instant). None where the batch already evaluates the
// subject at or after the later fact and within the span of the late one, none for scheduled work.
export function lateFactWork(work: readonly SubjectWork[], prefetched: readonly Prefetched[]): LateFactWork[] {
  const instants = new Map<string, number[]>();
  const keyOf = (item: SubjectWork) => `${item.tenantId}\u0000${item.subject.kind}\u0000${item.subject.id}`;
  for (const item of work) {
    if (item.trigger !== 'movement') continue;
    const list = instants.get(keyOf(item)) ?? [];
    list.push(item.at.getTime());
    instants.set(keyOf(item), list);
  }
  const added: LateFactWork[] = [];
  work.forEach((item, index) => {
    if (item.change === null) return;
    const upTo = item.at.getTime() + LATE_FACT_SPAN_MS;
    const later = prefetched[index]?.snapshot?.latestWithin(item.at, new Date(upTo));
    if (!later) return;
    const key = keyOf(item);
    const evaluated = instants.get(key) ?? [];
    if (evaluated.some((t) => t >= later.getTime() && t <= upTo)) return;
    evaluated.push(later.getTime());
    instants.set(key, evaluated);
    added.push({ work: { tenantId: item.tenantId, subject: item.subject, trigger: 'movement', at: later, change: item.change }, prefetchedFrom: index });
  });
  return added;
}

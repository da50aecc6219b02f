// Facts of one subject can reach detection out of event-time order: change records are spread
// over the log's partitions by movement, and each partition is taken as soon as the graph and the
// aggregates have committed it, at its own pace (or the customer sends a fact late). A fact
// judged after a later fact of the same subject was judged without it (the later one's windows
// did not hold it yet), and is itself judged at its own instant, whose windows end before the
// later fact: no evaluation would ever see both. A fan-in whose last payment is judged before an
// earlier one would never be seen.
//
// So when a subject's snapshot already holds a later fact less than LATE_FACT_SPAN_MS after the
// triggering one (the shortest window), the subject is judged at the latest such fact instead, as
// if the two had been touched in one batch (services/detection/subjects.ts coalesces such touches the same way):
// every window of that evaluation holds both. A control event moves no activity, and detectors
// triggered by movements read control events too (an account takeover is judged on the large
// transfer that follows it): a late control event keeps its own evaluation and adds one, as a
// movement, at the later fact.
import type { Prefetched } from '../../services/detection/framework/context.ts';
import { COALESCE_SPAN_MS, type SubjectWork } from '../../services/detection/subjects.ts';

export const LATE_FACT_SPAN_MS = COALESCE_SPAN_MS;

export interface PlacedWork {
  work: SubjectWork;
  // The item of the batch whose prefetched data it reads: its snapshot reaches the later fact.
  prefetchedFrom: number;
}

// The batch's work with late facts placed, given what was prefetched for each item (snapshots
// loaded LATE_FACT_SPAN_MS past their latest instant). Scheduled work stays as it is; an
// evaluation that would repeat another of the batch (same subject, trigger and instant) is left
// out.
export function placeLateFacts(work: readonly SubjectWork[], prefetched: readonly Prefetched[]): PlacedWork[] {
  const placed: PlacedWork[] = [];
  const seen = new Set<string>();
  const add = (item: SubjectWork, prefetchedFrom: number) => {
    const key = `${item.tenantId}\u0000${item.subject.kind}\u0000${item.subject.id}\u0000${item.trigger}\u0000${item.at.getTime()}`;
    if (seen.has(key)) return;
    seen.add(key);
    placed.push({ work: item, prefetchedFrom });
  };
  work.forEach((item, index) => {
    // Less than a span later (latestWithin is inclusive): the (at - 1h, at] window of an evaluation
    // exactly a span later would not hold the late fact.
    const later = item.change === null ? undefined : prefetched[index]?.snapshot?.latestWithin(item.at, new Date(item.at.getTime() + LATE_FACT_SPAN_MS - 1));
    if (!later) return add(item, index);
    if (item.trigger === 'movement') return add({ ...item, at: later }, index);
    add(item, index);
    add({ ...item, trigger: 'movement', at: later }, index);
  });
  return placed;
}

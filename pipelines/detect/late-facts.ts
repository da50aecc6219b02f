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
//
// A later fact further ahead is out of reach of the short windows but not of the long ones (three
// payments of a week's structuring, the first sent a day late): for each longer window, the
// subject is also judged at its latest fact less than that window after the late one, whose
// window of that length holds both, if that fact may have been judged already (judged.ts). The
// store is asked (AggregateStore.latestWithin) only about subjects judged beyond the span of the
// late fact, for every window in one read, before the batch's snapshots are loaded (so what those
// loads allocate is not kept alive while it answers).
import { WINDOWS, type AggregateStore, type LatestRequest } from '../../platform/aggregates/port.ts';
import type { DetectionStores, Prefetched } from '../../services/detection/framework/context.ts';
import { loadSnapshots, prefetch } from '../../services/detection/framework/prefetch.ts';
import { COALESCE_SPAN_MS, type SubjectWork } from '../../services/detection/subjects.ts';
import { markJudged, subjectKey } from './judged.ts';

export const LATE_FACT_SPAN_MS = COALESCE_SPAN_MS;

// The window lengths past the span, longest first.
const LONGER_WINDOWS_MS = [...new Set(Object.values(WINDOWS))].filter((ms) => ms > LATE_FACT_SPAN_MS).sort((a, b) => b - a);

export interface PlacedWork {
  work: SubjectWork;
  // What was prefetched for it: its snapshot reaches the later fact.
  data: Prefetched;
}

// The batch's work prefetched, with late facts placed: judged at the later facts too, those
// further than the span only where a later fact may have been judged without the late one
// (judged.ts). The batch's subjects are marked as judged, up to the latest instant placeLateFacts
// may move each to, before the stores are read for them.
export async function placeAllLateFacts(stores: DetectionStores, work: readonly SubjectWork[]): Promise<PlacedWork[]> {
  const judgedTo = await markJudged(
    stores.pool,
    work.filter((item) => item.change !== null),
    LATE_FACT_SPAN_MS - 1,
  );
  const again = await factsAhead(stores.aggregates, work, judgedTo);
  // What the batch loads for the subject serves the later instant too, as for a fact moved within
  // the span (its entities, its party's accounts, the batch's loaders, whose statements the added
  // evaluations then share), but the snapshot: it must reach the later fact.
  const [prefetched, snapshots] = await Promise.all([prefetch(stores, work, LATE_FACT_SPAN_MS), loadSnapshots(stores, again, 0)]);
  const placed = placeLateFacts(work, prefetched).map(({ work: item, prefetchedFrom }) => ({ work: item, data: prefetched[prefetchedFrom]! }));
  if (again.length === 0) return placed;
  const inBatch = new Set(placed.map(({ work: item }) => keyOf(item)));
  const first = new Map<string, number>();
  work.forEach((item, i) => {
    if (!first.has(subjectKey(item))) first.set(subjectKey(item), i);
  });
  again.forEach((item, i) => {
    if (!inBatch.has(keyOf(item))) placed.push({ work: item, data: { ...prefetched[first.get(subjectKey(item))!]!, snapshot: snapshots[i]! } });
  });
  return placed;
}

// The batch's work with late facts placed within the span, given what was prefetched for each
// item (snapshots loaded LATE_FACT_SPAN_MS past their latest instant). Scheduled work stays as it
// is; an evaluation that would repeat another of the batch (same subject, trigger and instant) is
// left out.
export function placeLateFacts(work: readonly SubjectWork[], prefetched: readonly Prefetched[]): Array<{ work: SubjectWork; prefetchedFrom: number }> {
  const placed: Array<{ work: SubjectWork; prefetchedFrom: number }> = [];
  const seen = new Set<string>();
  const add = (item: SubjectWork, prefetchedFrom: number) => {
    const key = keyOf(item);
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

// Evaluations, as movements, at each latest fact less than a longer window after a triggering
// fact and at least a span after it (what placeLateFacts does not reach), each instant once per
// subject. Every window's latest counts, not only the longest one's: with facts 5 hours and 2 days
// after a late one, the 7-day window's latest is day 2, but only an evaluation at the 5-hour fact
// holds both in a 24-hour window (two split transfers, say). Only facts the subject was judged at
// or beyond (`judgedTo`, by subject key, markJudged): a later fact not judged yet will be, with
// the late one in its windows. The store is asked only about subjects judged beyond the span: in order, none.
export async function factsAhead(
  store: Pick<AggregateStore, 'latestWithin'>,
  work: readonly SubjectWork[],
  judgedTo: ReadonlyMap<string, Date>,
): Promise<SubjectWork[]> {
  // One question per subject and instant, whatever the trigger.
  const asked = new Map<string, { item: SubjectWork; judgedTo: number }>();
  for (const item of work) {
    const judged = item.change === null ? undefined : judgedTo.get(subjectKey(item));
    if (judged && judged.getTime() > item.at.getTime() + LATE_FACT_SPAN_MS - 1) asked.set(`${subjectKey(item)}\u0000${item.at.getTime()}`, { item, judgedTo: judged.getTime() });
  }
  if (asked.size === 0) return [];
  const items = [...asked.values()];
  // Every window's question in one read: a store read per window would be a round trip each (the
  // snapshot cache brings itself up to date with every read).
  const requests: LatestRequest[] = [];
  for (const { item } of items) {
    const subject = { tenantId: item.tenantId, kind: item.subject.kind, id: item.subject.id };
    const after = new Date(item.at.getTime() + LATE_FACT_SPAN_MS - 1);
    for (const windowMs of LONGER_WINDOWS_MS) requests.push({ subject, after, upTo: new Date(item.at.getTime() + windowMs - 1) });
  }
  const latest = await store.latestWithin(requests);
  const ahead = new Map<string, SubjectWork>();
  items.forEach(({ item, judgedTo: judged }, i) => {
    for (let w = 0; w < LONGER_WINDOWS_MS.length; w++) {
      const at = latest[i * LONGER_WINDOWS_MS.length + w];
      // Nothing ahead within this window: nor within a shorter one.
      if (!at) return;
      // A shorter window whose latest is the same fact adds the same instant: kept once by its key.
      const found: SubjectWork = { ...item, trigger: 'movement', at };
      if (at.getTime() <= judged) ahead.set(keyOf(found), found);
    }
  });
  return [...ahead.values()];
}

function keyOf(item: SubjectWork): string {
  return `${subjectKey(item)}\u0000${item.trigger}\u0000${item.at.getTime()}`;
}

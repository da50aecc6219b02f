// Activity snapshots kept from one call to the next, in front of an aggregate store that can tell
// what it recorded since an earlier read (AggregateStore.recordedSince). Detection loads every
// subject's last 90 days before evaluating it, and an active subject is evaluated in batch after
// batch: loading its whole range each time read each row many times over (bench:detect read 1.3
// million rows for 60,000 movements, and the two statements took a quarter of the database's
// time). Here each call first reads what the store recorded since the previous call, adds it to
// the subjects held, and loads from the store only the subjects it does not hold.
//
// An entry is exact: every activity of its subject after `from` that the last read saw, and the
// all-time facts a snapshot carries; a snapshot built from it equals the one the store builds at
// that read (the tests compare them). A subject is loaded again when a request reaches before its
// entry, and dropped when a new counterparty appears while its history reaches before the entry
// (that counterparty may have been met there), or when its rows outgrow the cap. At most maxRows
// rows are held, the subjects asked for least recently dropped first.
import type { ActivityQuery, ActivityRecord, AggregateStore, Baseline, CounterpartyHistory, LatestRequest, RecordedSince, Retraction, Subject, WindowOptions, WindowStats, Activity } from './port.ts';
import { compareActivities, firstAtOrBefore, latestIn, snapshotRange, type SnapshotRequest, type SubjectSnapshot } from './snapshot.ts';

// About 300 bytes each with their first sightings, the rows of one read sharing their repeated
// values (shared-values.ts; measured: the detect process's heap after a full collection): some
// 75 MB at most.
const DEFAULT_CACHED_ROWS = 250_000;
// A load reaches this far ahead, so an entry holds everything after its start (what a later
// instant asks for) and not only up to the instant it was loaded for.
const OPEN_END = new Date('9999-12-31T23:59:59.999Z');
// Subjects found to have more rows than the cap are remembered (with that cap) for this many
// calls, so that their requests go straight to the store instead of loading twice; then they are
// tried again (old rows leave the range).
const TOO_LARGE_CALLS = 1_000;
// Past maxRows, entries are dropped down to this share of it: a cache kept full would sort its
// entries on every call.
const EVICT_TO = 0.9;
// An entry reaches this far before the earliest range asked of it (loaded so, and kept so as
// later instants are asked for): facts reach detection out of event-time order (the log's
// partitions are taken at their own pace, and a backlog's batches span days of event time), and
// a request starting before its entry loaded the subject's whole range again. In bench:detect a
// day of event time passes in about a second of ingest, so nearly every active subject was
// loaded again whenever the day of its latest instant moved on.
const RETAINED_MS = 7 * 86_400_000;

type JournalingStore = AggregateStore & Required<Pick<AggregateStore, 'recordedSince'>>;

interface Entry {
  subject: Subject;
  // Every activity after `from` (epoch ms) that the last read saw, latest first (compareActivities).
  from: number;
  rows: ActivityRecord[];
  firstActivityAt: Date | null;
  lastAtOrBeforeFrom: Date | null;
  // The first sighting (all time) of every counterparty of `rows`, and perhaps of others.
  firstSeen: Map<string, Date>;
  // When it last answered (a count of answers): the least recently used are dropped first.
  used: number;
}

// The store itself when it cannot say what it recorded since a read (nothing could be kept
// exact), or when no row may be kept.
export function withSnapshotCache(store: AggregateStore, maxRows = DEFAULT_CACHED_ROWS): AggregateStore {
  return store.recordedSince && maxRows > 0 ? new SnapshotCache(store as JournalingStore, maxRows) : store;
}

export class SnapshotCache implements AggregateStore {
  private readonly entries = new Entries();
  // Subjects found to have more rows than a cap, with that cap (keyOf).
  private readonly tooLarge = new Map<string, number>();
  private calls = 0;
  // Counts answers: an entry's `used`.
  private answerCount = 0;
  private cursor: string | null = null;
  // Snapshots answered from entries held, from entries just loaded, and by the store alone.
  private readonly answered = { held: 0, loaded: 0, store: 0 };
  // Calls run one at a time: each reads what is new since the one before.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: JournalingStore,
    private readonly maxRows = DEFAULT_CACHED_ROWS,
  ) {}

  snapshots(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    const run = this.queue.then(() => this.serve(requests, cap));
    this.queue = run.catch(() => undefined);
    return run;
  }

  // How many subjects and rows are held, and how snapshots were answered (tests, diagnostics).
  held(): { subjects: number; rows: number } {
    return { subjects: this.entries.size, rows: this.entries.rows };
  }
  counts(): { held: number; loaded: number; store: number } {
    return { ...this.answered };
  }

  // The latest activities from the entries held (each holds everything after its start), brought
  // up to date first; the store answers for subjects not held from before `after`.
  latestWithin(requests: LatestRequest[]): Promise<Array<Date | null>> {
    const run = this.queue.then(() => this.latestHeld(requests));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async latestHeld(requests: LatestRequest[]): Promise<Array<Date | null>> {
    if (requests.length === 0) return [];
    await this.refresh();
    const latest: Array<Date | null> = new Array(requests.length);
    const asked: number[] = [];
    requests.forEach((request, i) => {
      const entry = this.entries.get(request.subject);
      if (!entry || request.after.getTime() < entry.from) return asked.push(i);
      latest[i] = latestIn(entry.rows, request.after.getTime(), request.upTo.getTime());
    });
    if (asked.length > 0) {
      const found = await this.store.latestWithin(asked.map((i) => requests[i]!));
      asked.forEach((i, j) => (latest[i] = found[j]!));
    }
    return latest;
  }

  // Brings the entries up to what the store recorded since the last read. After a long pause
  // (detection waiting on a store, a process stopped) more may be new than the cache holds at all:
  // rather than read it all into memory, the entries go, and subjects are loaded again from the
  // store, which holds everything.
  private async refresh(): Promise<void> {
    const news = await this.store.recordedSince(this.entries.tenants(), this.cursor, this.maxRows);
    this.cursor = news.cursor;
    if (news.truncated) this.entries.clear();
    else this.absorbAll(news);
  }

  private async serve(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    if (requests.length === 0) return [];
    if (++this.calls % TOO_LARGE_CALLS === 0) this.tooLarge.clear();
    await this.refresh();
    const answers: SubjectSnapshot[] = new Array(requests.length);
    const toLoad: number[] = [];
    const direct: number[] = [];
    requests.forEach((request, i) => {
      if (this.tooLarge.size > 0 && cap <= (this.tooLarge.get(keyOf(request.subject)) ?? -1)) return direct.push(i);
      const entry = this.entries.get(request.subject);
      const answer = entry ? this.answer(entry, request, cap) : undefined;
      if (answer) {
        answers[i] = answer;
        this.answered.held++;
      } else toLoad.push(i);
    });
    if (toLoad.length > 0) {
      const loaded = await this.store.snapshots(
        toLoad.map((i) => ({ subject: requests[i]!.subject, at: OPEN_END, since: new Date((requests[i]!.since ?? requests[i]!.at).getTime() - RETAINED_MS) })),
        cap,
      );
      toLoad.forEach((i, j) => {
        const snapshot = loaded[j]!;
        this.entries.delete(snapshot.subject);
        if (!snapshot.complete) return this.markTooLarge(snapshot.subject, cap, direct, i);
        const entry: Entry = {
          subject: snapshot.subject,
          from: snapshot.from.getTime(),
          // The snapshot is not handed out: its rows become the entry's own.
          rows: snapshot.rows,
          firstActivityAt: snapshot.firstActivityAt,
          lastAtOrBeforeFrom: snapshot.lastActivityAtOrBeforeFrom,
          firstSeen: snapshot.counterpartyFirstSeen,
          used: 0,
        };
        this.entries.add(entry);
        // A complete load holds every row of the request's range: this answers (kept for safety).
        const answer = this.answer(entry, requests[i]!, cap);
        if (!answer) {
          this.entries.delete(snapshot.subject);
          return this.markTooLarge(snapshot.subject, cap, direct, i);
        }
        answers[i] = answer;
        this.answered.loaded++;
      });
    }
    if (direct.length > 0) {
      const exact = await this.store.snapshots(direct.map((i) => requests[i]!), cap);
      direct.forEach((i, j) => (answers[i] = exact[j]!));
      this.answered.store += direct.length;
    }
    if (this.entries.rows > this.maxRows) this.entries.evictTo(this.maxRows * EVICT_TO);
    return answers;
  }

  private absorbAll(news: RecordedSince): void {
    // A retracted activity may have been any of the entry's all-time facts (its first activity, a
    // counterparty's first sighting), not only one of its rows: the subject is loaded again.
    for (const { subject } of news.retracted) this.entries.delete(subject);
    for (const { subject, activity } of news.activities) {
      const entry = this.entries.get(subject);
      if (!entry) continue;
      const before = entry.rows.length;
      if (absorb(entry, activity)) this.entries.rows += entry.rows.length - before;
      else this.entries.delete(subject);
    }
  }

  // The request's snapshot from the entry, or undefined when the entry cannot answer it exactly
  // (it starts after the request's range, or the range holds more rows than the cap). The entry
  // then drops what lies more than RETAINED_MS before the request's start: later instants
  // reach that far back only with facts that late.
  private answer(entry: Entry, request: SnapshotRequest, cap: number): SubjectSnapshot | undefined {
    const range = snapshotRange(request.at, request.since);
    const from = range.from.getTime();
    const to = range.to.getTime();
    if (from < entry.from) return undefined;
    const rows = entry.rows;
    const start = firstAtOrBefore(rows, to);
    const end = firstAtOrBefore(rows, from);
    if (end - start > cap) return undefined;
    const listed = rows.slice(start, end);
    const lastAtOrBeforeFrom = end < rows.length ? rows[end]!.occurredAt : entry.lastAtOrBeforeFrom;
    const firstSeen = new Map<string, Date>();
    for (const row of listed) if (row.counterparty !== null && !firstSeen.has(row.counterparty)) firstSeen.set(row.counterparty, entry.firstSeen.get(row.counterparty)!);
    const keepFrom = from - RETAINED_MS;
    if (keepFrom > entry.from) {
      const keep = firstAtOrBefore(rows, keepFrom);
      const lastKept = keep < rows.length ? rows[keep]!.occurredAt : entry.lastAtOrBeforeFrom;
      this.entries.rows -= rows.length - keep;
      rows.length = keep;
      entry.from = keepFrom;
      entry.lastAtOrBeforeFrom = lastKept;
    }
    entry.used = ++this.answerCount;
    // Already in the store's order (compareActivities) and within the cap.
    return {
      subject: request.subject,
      from: range.from,
      to: range.to,
      rows: listed,
      complete: true,
      firstActivityAt: entry.firstActivityAt,
      lastActivityAtOrBeforeFrom: lastAtOrBeforeFrom,
      counterpartyFirstSeen: firstSeen,
    };
  }

  private markTooLarge(subject: Subject, cap: number, direct: number[], index: number): void {
    this.tooLarge.set(keyOf(subject), cap);
    direct.push(index);
  }

  // Everything else is the store's.
  record(activities: Activity[], retractions?: Retraction[]): Promise<number> {
    return this.store.record(activities, retractions);
  }
  windows(subject: Subject, at: Date, options?: WindowOptions): Promise<WindowStats[]> {
    return this.store.windows(subject, at, options);
  }
  baseline(subject: Subject, at: Date, days?: number): Promise<Baseline> {
    return this.store.baseline(subject, at, days);
  }
  lastActivity(subject: Subject, before?: Date): Promise<Date | null> {
    return this.store.lastActivity(subject, before);
  }
  counterparty(subject: Subject, counterparty: string, at?: Date): Promise<CounterpartyHistory | null> {
    return this.store.counterparty(subject, counterparty, at);
  }
  activities(subject: Subject, from: Date, to: Date, query?: ActivityQuery): Promise<ActivityRecord[]> {
    return this.store.activities(subject, from, to, query);
  }
  recordedSince(tenants: readonly string[], cursor: string | null): Promise<RecordedSince> {
    return this.store.recordedSince(tenants, cursor);
  }
}

// The entries by tenant, kind and id: an activity's entry is found without building a key (the
// store reports every activity of the tenants held, thousands per call), and the rows held are
// counted.
class Entries {
  private readonly byTenant = new Map<string, Record<Subject['kind'], Map<string, Entry>>>();
  size = 0;
  rows = 0;

  get(subject: Subject): Entry | undefined {
    return this.byTenant.get(subject.tenantId)?.[subject.kind].get(subject.id);
  }

  add(entry: Entry): void {
    let tenant = this.byTenant.get(entry.subject.tenantId);
    if (!tenant) this.byTenant.set(entry.subject.tenantId, (tenant = { account: new Map(), party: new Map() }));
    tenant[entry.subject.kind].set(entry.subject.id, entry);
    this.size++;
    this.rows += entry.rows.length;
  }

  delete(subject: Subject): void {
    const tenant = this.byTenant.get(subject.tenantId);
    const entry = tenant?.[subject.kind].get(subject.id);
    if (!tenant || !entry) return;
    tenant[subject.kind].delete(subject.id);
    this.size--;
    this.rows -= entry.rows.length;
    if (tenant.account.size === 0 && tenant.party.size === 0) this.byTenant.delete(subject.tenantId);
  }

  tenants(): string[] {
    return [...this.byTenant.keys()];
  }

  clear(): void {
    this.byTenant.clear();
    this.size = 0;
    this.rows = 0;
  }

  // Drops the entries used least recently until at most `rows` rows are held.
  evictTo(rows: number): void {
    const all: Entry[] = [];
    for (const tenant of this.byTenant.values()) for (const kind of [tenant.account, tenant.party]) for (const entry of kind.values()) all.push(entry);
    all.sort((a, b) => a.used - b.used);
    for (const entry of all) {
      if (this.rows <= rows) return;
      this.delete(entry.subject);
    }
  }
}

function keyOf(subject: Subject): string {
  return `${subject.tenantId}\u0000${subject.kind}\u0000${subject.id}`;
}

// Adds an activity recorded since the entry was read; false when the entry can no longer be kept
// exact. An activity already held (loaded after the read that reported it) changes nothing.
function absorb(entry: Entry, activity: ActivityRecord): boolean {
  const t = activity.occurredAt.getTime();
  const counterparty = activity.counterparty;
  if (entry.firstActivityAt === null || t < entry.firstActivityAt.getTime()) entry.firstActivityAt = activity.occurredAt;
  if (t <= entry.from) {
    // Before the entry's rows: only the facts move. A counterparty not held is one none of the
    // rows has; if one later does, the history before the entry makes the entry drop.
    if (entry.lastAtOrBeforeFrom === null || t > entry.lastAtOrBeforeFrom.getTime()) entry.lastAtOrBeforeFrom = activity.occurredAt;
    const seen = counterparty === null ? undefined : entry.firstSeen.get(counterparty);
    if (seen && t < seen.getTime()) entry.firstSeen.set(counterparty!, activity.occurredAt);
    return true;
  }
  const at = insertionPoint(entry.rows, activity);
  if (at < 0) return true;
  if (counterparty !== null) {
    const seen = entry.firstSeen.get(counterparty);
    if (seen === undefined) {
      // Met before the entry's start, perhaps: only the store can tell.
      if (entry.lastAtOrBeforeFrom !== null) return false;
      entry.firstSeen.set(counterparty, activity.occurredAt);
    } else if (t < seen.getTime()) entry.firstSeen.set(counterparty, activity.occurredAt);
  }
  entry.rows.splice(at, 0, activity);
  return true;
}

// Where the activity goes in rows listed latest first; -1 when an equal one is there.
function insertionPoint(rows: readonly ActivityRecord[], activity: ActivityRecord): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const order = compareActivities(rows[mid]!, activity);
    if (order === 0) return -1;
    if (order < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

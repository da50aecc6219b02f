// A subject's recent activity, loaded once (AggregateStore.snapshots) and read many times: every
// statistic of the port is computed here, in memory, from the rows, exactly as the store computes
// it (with the stores' own rules and arithmetic, stats.ts). Detection evaluates a batch of
// subjects with a dozen detectors each; one snapshot per subject replaces a dozen round trips per
// subject. A read the snapshot cannot answer exactly (before its range, after its instant, or a
// subject whose rows were capped) returns undefined, and the caller asks the store itself.
import type { ActivityQuery, ActivityRecord, Baseline, GroupStats, Subject, WindowName, WindowOptions, WindowStats } from './port.ts';
import {
  ALL_WINDOWS,
  DAY_MS,
  DEFAULT_BASELINE_DAYS,
  DEFAULT_ROUND_MAJOR_UNITS,
  activityLimit,
  bandsOf,
  baselineOf,
  baselineSpan,
  baselineStart,
  emptyFlow,
  noBaseline,
  ranked,
  roundTest,
  roundUnitsOf,
  windowStart,
  windowStats,
  type Band,
  type DayFigures,
  type WindowCounts,
} from './stats.ts';

export interface SnapshotRequest {
  subject: Subject;
  // The latest instant the snapshot answers for (inclusive).
  at: Date;
  // The earliest instant it answers for (default: at): its range then reaches back far enough for
  // every window and baseline of that instant too. Several evaluations of one subject at nearby
  // instants share one snapshot this way.
  since?: Date;
}

export interface SubjectSnapshot {
  subject: Subject;
  // The activities in (from, to], latest first (occurred_at, then movement id descending, then
  // direction), as ActivityQuery lists them. from is one millisecond before the start of the day
  // of the earliest instant asked for (`since`, else `to`) minus the default baseline length, so
  // every window and the default baseline of each instant fit.
  from: Date;
  to: Date;
  rows: ActivityRecord[];
  // False when the subject had more activities in the range than the store loads: then the rows
  // are not all of them, and no read is answered from the snapshot.
  complete: boolean;
  // All time: the subject's first activity, and its latest activity at or before `from`.
  firstActivityAt: Date | null;
  lastActivityAtOrBeforeFrom: Date | null;
  // All time: when each counterparty of the rows was first seen with the subject.
  counterpartyFirstSeen: Map<string, Date>;
}

// The range a snapshot answering for every instant in [since, at] covers. A snapshot holds (from,
// to], and the default baseline of the earliest instant counts its first midnight itself: the
// range starts one millisecond before it.
export function snapshotRange(at: Date, since: Date = at): { from: Date; to: Date } {
  const earliest = Math.min(since.getTime(), at.getTime());
  return { from: new Date(baselineSpan(earliest, DEFAULT_BASELINE_DAYS).earliest - 1), to: new Date(at.getTime()) };
}

// The order activities are listed in: occurred_at, then movement id descending, then direction
// ('in' before 'out'). Ids compare by code unit, as the database's C collation does for them.
export function compareActivities(a: ActivityRecord, b: ActivityRecord): number {
  const t = b.occurredAt.getTime() - a.occurredAt.getTime();
  if (t !== 0) return t;
  if (a.movementId !== b.movementId) return a.movementId < b.movementId ? 1 : -1;
  return a.direction === b.direction ? 0 : a.direction === 'in' ? -1 : 1;
}

// What a snapshot holds besides its rows: the all-time facts a store loads for it.
export type SnapshotFacts = Pick<SubjectSnapshot, 'firstActivityAt' | 'lastActivityAtOrBeforeFrom' | 'counterpartyFirstSeen'>;

// Whether the rows a store listed for a request are all of them: it lists at most cap + 1 (one
// more than the cap tells an incomplete snapshot).
export function completeWithin(rows: readonly ActivityRecord[], cap: number): boolean {
  return rows.length <= cap;
}

// The distinct counterparties of rows, in the order they first appear: those whose first sightings
// a complete snapshot holds.
export function counterpartiesOf(rows: readonly ActivityRecord[]): Set<string> {
  const found = new Set<string>();
  for (const row of rows) if (row.counterparty !== null) found.add(row.counterparty);
  return found;
}

// The snapshot of a request from what a store loaded for it: its range, the rows it listed in that
// range (at most cap + 1, in any order: a store need not keep each request's order; sorted in
// place) and its all-time facts.
export function snapshotOf(request: SnapshotRequest, range: { from: Date; to: Date }, rows: ActivityRecord[], cap: number, facts: SnapshotFacts): SubjectSnapshot {
  return {
    subject: request.subject,
    from: range.from,
    to: range.to,
    rows: rows.sort(compareActivities).slice(0, cap),
    complete: completeWithin(rows, cap),
    ...facts,
  };
}

// One of the subject's movements with another account: that account, the base value (null when
// unpriced) and when.
export interface AccountMovement {
  movementId: string;
  account: string;
  value: bigint | null;
  occurredAt: Date;
}

export class SnapshotReader {
  // What a window counts whatever the options, per instant (epoch ms) and window: a dozen
  // detectors read the same few windows of one instant with different options (threshold bands,
  // round units), and each counted every row of its window again.
  private readonly counted = new Map<number, Map<WindowName, WindowBase>>();
  // A baseline depends on the days it spans, not on the instant inside the last one: the
  // evaluations of one subject in a day share it.
  private readonly baselines = new Map<string, Baseline>();
  // The first sightings of the counterparties, in time order (epoch ms), made when first counted.
  private firstSeenTimes: Float64Array | undefined;
  // The movements with other accounts per direction, latest first, made when first asked for.
  private readonly withAccounts: { in?: AccountMovement[]; out?: AccountMovement[] } = {};

  constructor(readonly snapshot: SubjectSnapshot) {}

  // Whether (from, to] lies inside the snapshot's range, with every row of it loaded.
  private covers(from: number, to: number): boolean {
    return this.snapshot.complete && from >= this.snapshot.from.getTime() && to <= this.snapshot.to.getTime();
  }

  windows(at: Date, options: WindowOptions = {}): WindowStats[] | undefined {
    const asked = options.windows ?? ALL_WINDOWS;
    if (asked.length === 0) return [];
    const end = at.getTime();
    let earliest = end;
    for (const name of asked) earliest = Math.min(earliest, windowStart(end, name));
    if (!this.covers(earliest, end)) return undefined;
    // The options that shape the counts, checked as the stores check them.
    const thresholds = options.thresholds ?? [];
    const roundUnits = roundUnitsOf(options);
    // Bands and round amounts of other units than the default are counted apart, over the
    // window's rows again (only what those need).
    const isRound = roundUnits === DEFAULT_ROUND_MAJOR_UNITS ? null : roundTest(roundUnits);
    const bands = bandsOf(thresholds);
    const lastActivityAt = this.lastAtOrBefore(end);
    return asked.map((name) => {
      const from = windowStart(end, name);
      const base = this.base(name, from, end);
      const extra = bands.length > 0 || isRound ? extrasOf(this.snapshot.rows, from, end, bands, isRound) : NO_EXTRAS;
      // Written out, not spread: this runs for every read of every evaluation, and a spread
      // copies the counts into a new object property by property.
      const counts: WindowCounts = {
        in: base.in,
        out: base.out,
        distinctCounterparties: base.distinctCounterparties,
        firstSeenCounterparties: base.firstSeenCounterparties,
        countries: base.countries,
        corridors: base.corridors,
        bands: extra.bands,
        roundAmounts: extra.round ?? base.roundAmounts,
      };
      return windowStats(name, end, thresholds, counts, lastActivityAt);
    });
  }

  private base(name: WindowName, from: number, end: number): WindowBase {
    let atEnd = this.counted.get(end);
    if (!atEnd) {
      atEnd = new Map();
      this.counted.set(end, atEnd);
    }
    let base = atEnd.get(name);
    if (!base) {
      this.firstSeenTimes ??= sortedTimes(this.snapshot.counterpartyFirstSeen.values(), this.snapshot.counterpartyFirstSeen.size);
      const firstSeen = countAtOrBefore(this.firstSeenTimes, end) - countAtOrBefore(this.firstSeenTimes, from);
      base = countsOf(this.snapshot.rows, from, end, firstSeen);
      atEnd.set(name, base);
    }
    return base;
  }

  baseline(at: Date, days = DEFAULT_BASELINE_DAYS): Baseline | undefined {
    const span = baselineSpan(at.getTime(), days);
    const to = span.to;
    if (!this.covers(span.earliest, to) || at.getTime() > this.snapshot.to.getTime()) return undefined;
    const from = baselineStart(span, this.snapshot.firstActivityAt?.getTime());
    if (from === undefined) return noBaseline(to);
    const key = `${from}:${to}`;
    const known = this.baselines.get(key);
    if (known) return known;
    const daily = { in: new Map<number, DayFigures>(), out: new Map<number, DayFigures>() };
    const rows = this.snapshot.rows;
    for (let i = firstAtOrBefore(rows, to - 1); i < rows.length; i++) {
      const row = rows[i]!;
      const t = row.occurredAt.getTime();
      if (t < from) break;
      const day = Math.floor(t / DAY_MS);
      const entry = daily[row.direction].get(day);
      if (entry) {
        entry.sum += row.baseValue ?? 0n;
        entry.count += 1;
      } else {
        daily[row.direction].set(day, { sum: row.baseValue ?? 0n, count: 1 });
      }
    }
    const baseline = baselineOf(from, to, daily.in.values(), daily.out.values());
    this.baselines.set(key, baseline);
    return baseline;
  }

  // The latest activity in (after, upTo], when the snapshot holds that range; else undefined.
  latestWithin(after: Date, upTo: Date): Date | undefined {
    if (!this.covers(after.getTime(), upTo.getTime())) return undefined;
    return latestIn(this.snapshot.rows, after.getTime(), upTo.getTime()) ?? undefined;
  }

  // The latest activity strictly before `before`.
  lastActivity(before: Date): Date | undefined | null {
    const limit = before.getTime();
    if (!this.snapshot.complete || limit > this.snapshot.to.getTime() || limit <= this.snapshot.from.getTime()) return undefined;
    return this.snapshot.rows[firstAtOrBefore(this.snapshot.rows, limit - 1)]?.occurredAt ?? this.snapshot.lastActivityAtOrBeforeFrom;
  }

  activities(from: Date, to: Date, query: ActivityQuery = {}): ActivityRecord[] | undefined {
    const limit = activityLimit(query);
    if (!this.covers(from.getTime(), to.getTime())) return undefined;
    const found: ActivityRecord[] = [];
    const rows = this.snapshot.rows;
    for (let i = firstAtOrBefore(rows, to.getTime()); i < rows.length; i++) {
      const row = rows[i]!;
      const t = row.occurredAt.getTime();
      if (t <= from.getTime()) break;
      if (query.direction && row.direction !== query.direction) continue;
      found.push(row);
      if (found.length === limit) break;
    }
    return found;
  }

  // The subject's movements with other accounts in one direction in (from, to], latest first;
  // undefined when the snapshot does not hold that range. Made once per snapshot and sliced for
  // each instant: every evaluation of a subject in a batch asked for them, and a hub's were
  // thousands of new objects per evaluation.
  accountMovements(direction: 'in' | 'out', from: Date, to: Date): AccountMovement[] | undefined {
    if (!this.covers(from.getTime(), to.getTime())) return undefined;
    const all = (this.withAccounts[direction] ??= accountMovementsOf(this.snapshot.rows, direction));
    return all.slice(firstAtOrBefore(all, to.getTime()), firstAtOrBefore(all, from.getTime()));
  }

  // Whether the subject had nothing with this counterparty up to and including `at`, when the
  // snapshot can tell (a counterparty of its rows first seen after `at`); undefined otherwise.
  noHistoryWith(counterparty: string, at: Date): true | undefined {
    const first = this.snapshot.complete ? this.snapshot.counterpartyFirstSeen.get(counterparty) : undefined;
    return first && first.getTime() > at.getTime() ? true : undefined;
  }

  private lastAtOrBefore(end: number): Date | null {
    return this.snapshot.rows[firstAtOrBefore(this.snapshot.rows, end)]?.occurredAt ?? this.snapshot.lastActivityAtOrBeforeFrom;
  }
}

// The index of the first of rows (listed latest first) that happened at or before `to` (epoch
// ms; rows.length when none did): a busy subject's snapshot reaches past the instant evaluated
// (the rest of its batch, and late facts), and walking those rows for every read of every
// evaluation made a hub's evaluations cost its whole snapshot each.
// The latest activity in (after, upTo] of rows listed latest first; null when none.
export function latestIn(rows: ReadonlyArray<{ occurredAt: Date }>, after: number, upTo: number): Date | null {
  const row = rows[firstAtOrBefore(rows, upTo)];
  return row && row.occurredAt.getTime() > after ? row.occurredAt : null;
}

export function firstAtOrBefore(rows: ReadonlyArray<{ occurredAt: Date }>, to: number): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (rows[middle]!.occurredAt.getTime() > to) low = middle + 1;
    else high = middle;
  }
  return low;
}

function accountMovementsOf(rows: readonly ActivityRecord[], direction: 'in' | 'out'): AccountMovement[] {
  const movements: AccountMovement[] = [];
  for (const row of rows) {
    if (row.direction !== direction || !row.counterparty?.startsWith('account:')) continue;
    movements.push({ movementId: row.movementId, account: row.counterparty.slice('account:'.length), value: row.baseValue, occurredAt: row.occurredAt });
  }
  return movements;
}

// The instants in ascending order, as epoch ms, filled by hand: Float64Array.from over an
// iterator with a mapping function takes a slow, generic path.
function sortedTimes(instants: Iterable<Date>, size: number): Float64Array {
  const times = new Float64Array(size);
  let i = 0;
  for (const instant of instants) times[i++] = instant.getTime();
  return times.sort();
}

// How many of the times (ascending) are at or before `at`.
function countAtOrBefore(times: Float64Array, at: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (times[middle]! <= at) low = middle + 1;
    else high = middle;
  }
  return low;
}

// What a window counts whatever the options: round amounts at the default units.
type WindowBase = Omit<WindowCounts, 'bands'>;

// Bands and round amounts of other units, for one read (round null: the default units').
interface Extras {
  bands: Array<{ count: number; sum: bigint }>;
  round: { count: number; sum: bigint } | null;
}
const NO_EXTRAS: Extras = { bands: [], round: null };

// The distinct counterparties of one count, per direction and in all. Each counterparty is
// stamped with the count it was last seen in and the directions it was seen in there, so nothing
// is emptied between counts: new sets per count made much of the detect process's garbage, and
// emptying three sets per count allocated as much (a clear makes a new table).
export class DistinctCounterparties {
  private readonly stamps = new Map<string, number>();
  private generation = 0;
  in = 0;
  out = 0;
  total = 0;

  // The bounds: the map holds an entry per counterparty seen since the last reset, kept small so
  // that its table stays in the processor's caches (a large one made every lookup a miss), and the
  // stamps stay small integers.
  constructor(
    private readonly generations = 1 << 28,
    private readonly kept = 512,
  ) {}

  // Begins a count: every counterparty is unseen again.
  start(): void {
    this.generation += 1;
    if (this.generation >= this.generations || this.stamps.size >= this.kept) {
      this.stamps.clear();
      this.generation = 1;
    }
    this.in = 0;
    this.out = 0;
    this.total = 0;
  }

  add(counterparty: string, direction: 'in' | 'out'): void {
    const bit = direction === 'in' ? 1 : 2;
    const current = this.generation * 4;
    const stamp = this.stamps.get(counterparty);
    if (stamp === undefined || stamp < current) {
      this.stamps.set(counterparty, current | bit);
      this.total += 1;
    } else if ((stamp & bit) === 0) {
      this.stamps.set(counterparty, stamp | bit);
    } else {
      return;
    }
    if (bit === 1) this.in += 1;
    else this.out += 1;
  }
}

// What a window collects while it counts: countsOf runs to the end without yielding.
const counterparties = new DistinctCounterparties();
const countries = new Map<string, GroupStats>();
const corridors = new Map<string, GroupStats>();
const isDefaultRound = roundTest(DEFAULT_ROUND_MAJOR_UNITS);

// Clearing allocates a new table: an empty collection is left as it is.
function empty(collection: Map<string, GroupStats>): void {
  if (collection.size > 0) collection.clear();
}

// Everything a window counts from its rows (those in (from, to] of rows listed latest first)
// whatever the options, in one pass over them, copying none, with the first sightings counted
// apart. Sums skip unpriced activities.
function countsOf(rows: readonly ActivityRecord[], from: number, to: number, firstSeenCounterparties: number): WindowBase {
  const flows = { in: emptyFlow(), out: emptyFlow() };
  counterparties.start();
  empty(countries);
  empty(corridors);
  const round = { count: 0, sum: 0n };
  for (let i = firstAtOrBefore(rows, to); i < rows.length; i++) {
    const row = rows[i]!;
    const t = row.occurredAt.getTime();
    if (t <= from) break;
    const value = row.baseValue;
    const flow = flows[row.direction];
    flow.count += 1;
    if (value === null) flow.unpriced += 1;
    else flow.sum += value;
    if (row.cash) {
      flow.cashCount += 1;
      flow.cashSum += value ?? 0n;
    }
    if (row.counterparty !== null) counterparties.add(row.counterparty, row.direction);
    if (row.counterpartyCountry !== null) addTo(countries, row.counterpartyCountry, value);
    if (row.corridor !== null) addTo(corridors, row.corridor, value);
    if (isDefaultRound(row.amount.value, row.amount.scale)) {
      round.count += 1;
      round.sum += value ?? 0n;
    }
  }
  return {
    in: flows.in,
    out: flows.out,
    distinctCounterparties: { in: counterparties.in, out: counterparties.out, total: counterparties.total },
    firstSeenCounterparties,
    countries: ranked([...countries.values()]),
    corridors: ranked([...corridors.values()]),
    roundAmounts: round,
  };
}

// The threshold bands and the round amounts of other units of a window's rows. Bands compare base
// amounts, so an unpriced activity is never "just below" a threshold.
function extrasOf(rows: readonly ActivityRecord[], from: number, to: number, bands: readonly Band[], isRound: ((value: bigint, scale: number) => boolean) | null): Extras {
  const below = bands.map(() => ({ count: 0, sum: 0n }));
  const round = isRound ? { count: 0, sum: 0n } : null;
  for (let i = firstAtOrBefore(rows, to); i < rows.length; i++) {
    const row = rows[i]!;
    const t = row.occurredAt.getTime();
    if (t <= from) break;
    const value = row.baseValue;
    if (value !== null) {
      for (let i = 0; i < bands.length; i++) {
        const band = bands[i]!;
        if (value >= band.low && value < band.high) {
          below[i]!.count += 1;
          below[i]!.sum += value;
        }
      }
    }
    if (round && isRound!(row.amount.value, row.amount.scale)) {
      round.count += 1;
      round.sum += value ?? 0n;
    }
  }
  return { bands: below, round };
}

function addTo(groups: Map<string, GroupStats>, key: string, value: bigint | null): void {
  const group = groups.get(key) ?? { key, count: 0, sum: 0n };
  group.count += 1;
  group.sum += value ?? 0n;
  groups.set(key, group);
}

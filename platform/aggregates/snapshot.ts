// A subject's recent activity, loaded once (AggregateStore.snapshots) and read many times: every
// statistic of the port is computed here, in memory, from the rows, exactly as the store computes
// it. Detection evaluates a batch of subjects with a dozen detectors each; one snapshot per
// subject replaces a dozen round trips per subject. A read the snapshot cannot answer exactly
// (before its range, after its instant, or a subject whose rows were capped) returns undefined,
// and the caller asks the store itself.
import {
  WINDOWS,
  type ActivityQuery,
  type ActivityRecord,
  type Baseline,
  type FlowBaseline,
  type FlowStats,
  type GroupStats,
  type Subject,
  type ThresholdBand,
  type WindowName,
  type WindowOptions,
  type WindowStats,
} from './port.ts';

export const DAY_MS = 86_400_000;
export const DEFAULT_ROUND_MAJOR_UNITS = 100;
export const DEFAULT_BASELINE_DAYS = 90;
export const DEFAULT_ACTIVITY_LIMIT = 200;
export const ALL_WINDOWS = Object.keys(WINDOWS) as WindowName[];

export interface SnapshotRequest {
  subject: Subject;
  // The latest instant the snapshot answers for (inclusive).
  at: Date;
}

export interface SubjectSnapshot {
  subject: Subject;
  // The activities in (from, to], latest first (occurred_at, then movement id descending, then
  // direction), as ActivityQuery lists them. from is the start of the day of `to` minus the
  // default baseline length, so every window and the default baseline fit.
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

// The range a snapshot of `at` covers.
export function snapshotRange(at: Date): { from: Date; to: Date } {
  const dayStart = Math.floor(at.getTime() / DAY_MS) * DAY_MS;
  return { from: new Date(dayStart - DEFAULT_BASELINE_DAYS * DAY_MS), to: new Date(at.getTime()) };
}

// The order activities are listed in: occurred_at, then movement id descending, then direction
// ('in' before 'out'). Ids compare by code unit, as the database's C collation does for them.
export function compareActivities(a: ActivityRecord, b: ActivityRecord): number {
  const t = b.occurredAt.getTime() - a.occurredAt.getTime();
  if (t !== 0) return t;
  if (a.movementId !== b.movementId) return a.movementId < b.movementId ? 1 : -1;
  return a.direction === b.direction ? 0 : a.direction === 'in' ? -1 : 1;
}

export class SnapshotReader {
  constructor(readonly snapshot: SubjectSnapshot) {}

  // Whether (from, to] lies inside the snapshot's range, with every row of it loaded.
  private covers(from: number, to: number): boolean {
    return this.snapshot.complete && from >= this.snapshot.from.getTime() && to <= this.snapshot.to.getTime();
  }

  windows(at: Date, options: WindowOptions = {}): WindowStats[] | undefined {
    const asked = options.windows ?? ALL_WINDOWS;
    if (asked.length === 0) return [];
    const end = at.getTime();
    const longest = Math.max(...asked.map((name) => WINDOWS[name]));
    if (!this.covers(end - longest, end)) return undefined;
    const roundUnits = options.roundMajorUnits ?? DEFAULT_ROUND_MAJOR_UNITS;
    if (!Number.isFinite(roundUnits) || roundUnits <= 0) throw new RangeError(`roundMajorUnits must be a positive number, got ${roundUnits}`);
    const isRound = roundTest(roundUnits);
    const thresholds = options.thresholds ?? [];
    const lastActivityAt = this.lastAtOrBefore(end);
    return asked.map((name) => {
      const from = end - WINDOWS[name];
      let firstSeen = 0;
      for (const seenAt of this.snapshot.counterpartyFirstSeen.values()) if (seenAt.getTime() > from && seenAt.getTime() <= end) firstSeen++;
      return {
        window: name,
        from: new Date(from),
        to: new Date(end),
        ...statsOf(this.rowsIn(from, end), thresholds, isRound),
        firstSeenCounterparties: firstSeen,
        lastActivityAt,
      };
    });
  }

  // The rows in (from, to], latest first (the rows are sorted so).
  private rowsIn(from: number, to: number): ActivityRecord[] {
    const inside: ActivityRecord[] = [];
    for (const row of this.snapshot.rows) {
      const t = row.occurredAt.getTime();
      if (t > to) continue;
      if (t <= from) break;
      inside.push(row);
    }
    return inside;
  }

  baseline(at: Date, days = DEFAULT_BASELINE_DAYS): Baseline | undefined {
    if (!Number.isInteger(days) || days < 0) throw new RangeError(`days must be a whole number >= 0, got ${days}`);
    const to = Math.floor(at.getTime() / DAY_MS) * DAY_MS;
    const earliest = to - days * DAY_MS;
    if (!this.covers(earliest, to) || at.getTime() > this.snapshot.to.getTime()) return undefined;
    const first = this.snapshot.firstActivityAt?.getTime();
    const none = { days: 0, from: new Date(to), to: new Date(to), in: NO_FLOW, out: NO_FLOW };
    if (first === undefined || first >= to) return none;
    const from = Math.max(earliest, Math.floor(first / DAY_MS) * DAY_MS);
    const count = (to - from) / DAY_MS;
    if (count <= 0) return none;
    const daily = { in: new Map<number, { sum: bigint; count: number }>(), out: new Map<number, { sum: bigint; count: number }>() };
    for (const row of this.snapshot.rows) {
      const t = row.occurredAt.getTime();
      if (t < from || t >= to) continue;
      const day = Math.floor(t / DAY_MS);
      const entry = daily[row.direction].get(day) ?? { sum: 0n, count: 0 };
      entry.sum += row.baseValue ?? 0n;
      entry.count += 1;
      daily[row.direction].set(day, entry);
    }
    return { days: count, from: new Date(from), to: new Date(to), in: flowBaseline([...daily.in.values()], count), out: flowBaseline([...daily.out.values()], count) };
  }

  // The latest activity strictly before `before`.
  lastActivity(before: Date): Date | undefined | null {
    const limit = before.getTime();
    if (!this.snapshot.complete || limit > this.snapshot.to.getTime() || limit <= this.snapshot.from.getTime()) return undefined;
    for (const row of this.snapshot.rows) if (row.occurredAt.getTime() < limit) return row.occurredAt;
    return this.snapshot.lastActivityAtOrBeforeFrom;
  }

  activities(from: Date, to: Date, query: ActivityQuery = {}): ActivityRecord[] | undefined {
    const limit = query.limit ?? DEFAULT_ACTIVITY_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number >= 1, got ${limit}`);
    if (!this.covers(from.getTime(), to.getTime())) return undefined;
    const found: ActivityRecord[] = [];
    for (const row of this.snapshot.rows) {
      const t = row.occurredAt.getTime();
      if (t > to.getTime() || (query.direction && row.direction !== query.direction)) continue;
      if (t <= from.getTime()) break;
      found.push(row);
      if (found.length === limit) break;
    }
    return found;
  }

  // Whether the subject had nothing with this counterparty up to and including `at`, when the
  // snapshot can tell (a counterparty of its rows first seen after `at`); undefined otherwise.
  noHistoryWith(counterparty: string, at: Date): true | undefined {
    const first = this.snapshot.complete ? this.snapshot.counterpartyFirstSeen.get(counterparty) : undefined;
    return first && first.getTime() > at.getTime() ? true : undefined;
  }

  private lastAtOrBefore(end: number): Date | null {
    for (const row of this.snapshot.rows) if (row.occurredAt.getTime() <= end) return row.occurredAt;
    return this.snapshot.lastActivityAtOrBeforeFrom;
  }
}

const NO_FLOW: FlowBaseline = { meanSum: 0n, stddevSum: 0n, meanCount: 0, stddevCount: 0 };

type CountedStats = Pick<WindowStats, 'in' | 'out' | 'distinctCounterparties' | 'countries' | 'corridors' | 'belowThreshold' | 'roundAmounts'>;

// Everything a window counts, in one pass over its rows. Sums skip unpriced activities; bands
// compare base amounts, so an unpriced activity is never "just below" a threshold.
function statsOf(rows: readonly ActivityRecord[], thresholds: readonly ThresholdBand[], isRound: (value: bigint, scale: number) => boolean): CountedStats {
  const flows = { in: emptyFlow(), out: emptyFlow() };
  const counterparties = { in: new Set<string>(), out: new Set<string>(), total: new Set<string>() };
  const countries = new Map<string, GroupStats>();
  const corridors = new Map<string, GroupStats>();
  const bands = thresholds.map((band) => ({ threshold: band.threshold, count: 0, sum: 0n }));
  const round = { count: 0, sum: 0n };
  for (const row of rows) {
    const value = row.baseValue;
    const flow = flows[row.direction];
    flow.count += 1;
    if (value === null) flow.unpriced += 1;
    else flow.sum += value;
    if (row.cash) {
      flow.cashCount += 1;
      flow.cashSum += value ?? 0n;
    }
    if (row.counterparty !== null) {
      counterparties[row.direction].add(row.counterparty);
      counterparties.total.add(row.counterparty);
    }
    if (row.counterpartyCountry !== null) addTo(countries, row.counterpartyCountry, value);
    if (row.corridor !== null) addTo(corridors, row.corridor, value);
    if (value !== null) {
      thresholds.forEach((band, i) => {
        if (value >= band.threshold - band.margin && value < band.threshold) {
          bands[i]!.count += 1;
          bands[i]!.sum += value;
        }
      });
    }
    if (isRound(row.amount.value, row.amount.scale)) {
      round.count += 1;
      round.sum += value ?? 0n;
    }
  }
  return {
    in: flows.in,
    out: flows.out,
    distinctCounterparties: { in: counterparties.in.size, out: counterparties.out.size, total: counterparties.total.size },
    countries: ranked(countries),
    corridors: ranked(corridors),
    belowThreshold: bands,
    roundAmounts: round,
  };
}

const emptyFlow = (): FlowStats => ({ count: 0, sum: 0n, unpriced: 0, cashCount: 0, cashSum: 0n });

function addTo(groups: Map<string, GroupStats>, key: string, value: bigint | null): void {
  const group = groups.get(key) ?? { key, count: 0, sum: 0n };
  group.count += 1;
  group.sum += value ?? 0n;
  groups.set(key, group);
}

// Largest count first, then key.
function ranked(groups: Map<string, GroupStats>): GroupStats[] {
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// Round on the amount as sent: a whole multiple of `units` major units of its own asset. units
// is a decimal (0.5 is allowed), so the test is done on integers: value * 10^d is a multiple of
// units * 10^d * 10^scale, d being units' decimal places.
function roundTest(units: number): (value: bigint, scale: number) => boolean {
  const [whole, fraction = ''] = units.toFixed(12).replace(/0+$/, '').split('.');
  const decimals = BigInt(fraction.length);
  const unitsScaled = BigInt(`${whole}${fraction}`);
  return (value, scale) => {
    const divisor = unitsScaled * 10n ** BigInt(scale);
    return divisor !== 0n && (value * 10n ** decimals) % divisor === 0n;
  };
}

// Mean and population standard deviation of the daily sums (days without activity are zero),
// rounded half away from zero on exact integers; counts as floating point.
function flowBaseline(days: Array<{ sum: bigint; count: number }>, n: number): FlowBaseline {
  let sum = 0n;
  let squares = 0n;
  let count = 0;
  let countSquares = 0;
  for (const day of days) {
    sum += day.sum;
    squares += day.sum * day.sum;
    count += day.count;
    countSquares += day.count * day.count;
  }
  const N = BigInt(n);
  const variance = N * squares - sum * sum; // n² times the population variance
  const countVariance = n * countSquares - count * count;
  return {
    meanSum: roundedDivision(sum, N),
    // round(sqrt(variance) / n) = floor((2·sqrt(variance) + n) / 2n), exact with an integer root.
    stddevSum: (isqrt(4n * variance) + N) / (2n * N),
    meanCount: count / n,
    stddevCount: Math.sqrt(Math.max(0, countVariance)) / n,
  };
}

function roundedDivision(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const rounded = (2n * magnitude + denominator) / (2n * denominator);
  return negative ? -rounded : rounded;
}

function isqrt(value: bigint): bigint {
  if (value < 2n) return value;
  let x = BigInt(Math.floor(Math.sqrt(Number(value))));
  // Newton steps from the floating-point estimate, then settle on the floor.
  for (;;) {
    const next = (x + value / x) >> 1n;
    if (next >= x - 1n && next <= x + 1n) {
      x = next;
      break;
    }
    x = next;
  }
  while (x * x > value) x -= 1n;
  while ((x + 1n) * (x + 1n) <= value) x += 1n;
  return x;
}

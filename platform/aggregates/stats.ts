// The rules of the AggregateStore port that hold whatever engine answers: defaults and input
// checks, window and baseline bounds, the threshold and round-amount rules, the assembly of a
// window's statistics and the baseline arithmetic. Shared by the adapters (postgres.ts,
// clickhouse.ts) and the snapshot reader (snapshot.ts), so all three read the same options the
// same way and agree to the unit; each adapter keeps only its queries and the decoding of its rows.
import {
  WINDOWS,
  type ActivityQuery,
  type Baseline,
  type FlowBaseline,
  type FlowStats,
  type GroupStats,
  type ThresholdBand,
  type WindowName,
  type WindowOptions,
  type WindowStats,
} from './port.ts';

export const DAY_MS = 86_400_000;
export const DEFAULT_ROUND_MAJOR_UNITS = 100;
export const DEFAULT_BASELINE_DAYS = 90;
const DEFAULT_ACTIVITY_LIMIT = 200;
export const ALL_WINDOWS = Object.keys(WINDOWS) as WindowName[];

// --- input checks ------------------------------------------------------------------------------

// The limit of an activity listing: the default, or a whole number >= 1.
export function activityLimit(query: ActivityQuery): number {
  const limit = query.limit ?? DEFAULT_ACTIVITY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number >= 1, got ${limit}`);
  return limit;
}

// The cap of a snapshot load: a whole number >= 1.
export function checkSnapshotCap(cap: number): void {
  if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a whole number >= 1, got ${cap}`);
}

// Money an engine returns as the text of an integer; anything else is a bug upstream, and is
// refused rather than truncated.
export function integerAmount(text: string): bigint {
  if (!/^-?\d+$/.test(text)) throw new Error(`expected an integer amount, got ${JSON.stringify(text)}`);
  return BigInt(text);
}

// --- windows -----------------------------------------------------------------------------------

export interface WindowRequest {
  // As asked (a name may repeat; the answer has one entry per name asked, in this order).
  asked: WindowName[];
  // Each name once, in the order first asked.
  names: WindowName[];
  thresholds: ThresholdBand[];
  roundUnits: number;
}

// The windows asked and the options that shape them, with their defaults; null when no window is
// asked (the answer is then empty, whatever the other options say).
export function windowRequest(options: WindowOptions): WindowRequest | null {
  const asked = options.windows ?? ALL_WINDOWS;
  if (asked.length === 0) return null;
  return { asked, names: [...new Set(asked)], thresholds: options.thresholds ?? [], roundUnits: roundUnitsOf(options) };
}

// The round-amount units asked for, or the default; a positive number.
export function roundUnitsOf(options: WindowOptions): number {
  const roundUnits = options.roundMajorUnits ?? DEFAULT_ROUND_MAJOR_UNITS;
  if (!Number.isFinite(roundUnits) || roundUnits <= 0) throw new RangeError(`roundMajorUnits must be a positive number, got ${roundUnits}`);
  return roundUnits;
}

// A window is (start, end]: end is the instant asked for (ms).
export function windowStart(end: number, name: WindowName): number {
  return end - WINDOWS[name];
}

// Bounds of "just below" a threshold, in base minor units: low <= amount < high.
export interface Band {
  low: bigint;
  high: bigint;
}

export function bandsOf(thresholds: readonly ThresholdBand[]): Band[] {
  return thresholds.map((band) => ({ low: band.threshold - band.margin, high: band.threshold }));
}

// What one window counts, as an engine reads it: everything of its WindowStats but the window's
// bounds, the thresholds (bands holds one entry per band asked, in the same order) and the
// subject's last activity.
export interface WindowCounts extends Omit<WindowStats, 'window' | 'from' | 'to' | 'belowThreshold' | 'lastActivityAt'> {
  bands: Array<{ count: number; sum: bigint }>;
}

export const emptyFlow = (): FlowStats => ({ count: 0, sum: 0n, unpriced: 0, cashCount: 0, cashSum: 0n });

// The counts of a window that come from its own rows (not the first sightings, nor the groups,
// which some engines read apart).
export type ActivityCounts = Pick<WindowCounts, 'in' | 'out' | 'distinctCounterparties' | 'bands' | 'roundAmounts'>;

// The counts of a window without activity.
export function noActivityCounts(bands: number): ActivityCounts {
  return {
    in: emptyFlow(),
    out: emptyFlow(),
    distinctCounterparties: { in: 0, out: 0, total: 0 },
    bands: Array.from({ length: bands }, () => ({ count: 0, sum: 0n })),
    roundAmounts: { count: 0, sum: 0n },
  };
}

// The statistics of window `name` ending at `end` (ms).
export function windowStats(name: WindowName, end: number, thresholds: readonly ThresholdBand[], counts: WindowCounts, lastActivityAt: Date | null): WindowStats {
  return {
    window: name,
    from: new Date(windowStart(end, name)),
    to: new Date(end),
    in: counts.in,
    out: counts.out,
    distinctCounterparties: counts.distinctCounterparties,
    firstSeenCounterparties: counts.firstSeenCounterparties,
    countries: counts.countries,
    corridors: counts.corridors,
    belowThreshold: thresholds.map((band, i) => ({ threshold: band.threshold, count: counts.bands[i]!.count, sum: counts.bands[i]!.sum })),
    roundAmounts: counts.roundAmounts,
    lastActivityAt,
  };
}

// Groups by country or corridor in the order a window lists them: largest count first, then key
// (by code unit, as PostgreSQL's C collation orders them). Sorts in place.
export function ranked(groups: GroupStats[]): GroupStats[] {
  return groups.sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// --- round amounts -----------------------------------------------------------------------------

// An amount is round when its value as sent is a whole multiple of `units` major units of its own
// asset. units is a decimal (0.5 is allowed; 12 places at most): units = scaled / 10^decimals.
export function roundUnitsFraction(units: number): { scaled: bigint; decimals: bigint } {
  const [whole, fraction = ''] = units.toFixed(12).replace(/0+$/, '').split('.');
  return { scaled: BigInt(`${whole}${fraction}`), decimals: BigInt(fraction.length) };
}

// The round test on integers: value * 10^decimals is a multiple of scaled * 10^scale. Made once
// per units value (a snapshot answers a dozen windows per evaluation, nearly all with the default
// units), each with its divisor per scale.
export function roundTest(units: number): (value: bigint, scale: number) => boolean {
  let test = roundTests.get(units);
  if (!test) {
    test = makeRoundTest(units);
    // Units come from ruleset parameters: a handful of values. The bound only keeps a stream of
    // odd ones from growing the map without end.
    if (roundTests.size >= ROUND_TESTS_KEPT) roundTests.clear();
    roundTests.set(units, test);
  }
  return test;
}

const ROUND_TESTS_KEPT = 64;
const roundTests = new Map<number, (value: bigint, scale: number) => boolean>();

function makeRoundTest(units: number): (value: bigint, scale: number) => boolean {
  const { scaled, decimals } = roundUnitsFraction(units);
  const tens = 10n ** decimals;
  const divisors: bigint[] = [];
  return (value, scale) => {
    const divisor = (divisors[scale] ??= scaled * 10n ** BigInt(scale));
    return divisor !== 0n && (value * tens) % divisor === 0n;
  };
}

// --- baselines ---------------------------------------------------------------------------------

// The days a baseline of `days` days before the UTC day of `at` may cover: [earliest, to), as UTC
// day numbers (days since 1970) and as instants (ms).
export interface BaselineSpan {
  earliestDay: number;
  toDay: number;
  earliest: number;
  to: number;
}

export function baselineSpan(at: number, days: number): BaselineSpan {
  if (!Number.isInteger(days) || days < 0) throw new RangeError(`days must be a whole number >= 0, got ${days}`);
  const toDay = Math.floor(at / DAY_MS);
  const to = toDay * DAY_MS;
  return { earliestDay: toDay - days, toDay, earliest: to - days * DAY_MS, to };
}

// Where the baseline starts: the later of the earliest day allowed and the UTC day of the
// subject's first activity (ms; undefined: none). Undefined when no whole day is left.
export function baselineStart(span: BaselineSpan, firstActivity: number | undefined): number | undefined {
  if (firstActivity === undefined || firstActivity >= span.to) return undefined;
  const from = Math.max(span.earliest, Math.floor(firstActivity / DAY_MS) * DAY_MS);
  return from < span.to ? from : undefined;
}

const NO_FLOW: FlowBaseline = { meanSum: 0n, stddevSum: 0n, maxSum: 0n, meanCount: 0, stddevCount: 0 };

// The baseline of a subject without activity before the day of `at`.
export function noBaseline(to: number): Baseline {
  return { days: 0, from: new Date(to), to: new Date(to), in: NO_FLOW, out: NO_FLOW };
}

export interface DayFigures {
  sum: bigint;
  count: number;
}

// The baseline over the whole days [from, to) (ms), from the figures of the days with activity in
// each direction (the others are zero).
export function baselineOf(from: number, to: number, inDays: Iterable<DayFigures>, outDays: Iterable<DayFigures>): Baseline {
  const days = (to - from) / DAY_MS;
  return { days, from: new Date(from), to: new Date(to), in: flowBaseline(inDays, days), out: flowBaseline(outDays, days) };
}

// Mean and population standard deviation of the daily sums over n days (days without activity are
// zero), rounded half away from zero on exact integers, as PostgreSQL's round(numeric) does; counts
// as floating point. The largest daily sum counts the days without activity as zero too.
function flowBaseline(days: Iterable<DayFigures>, n: number): FlowBaseline {
  let sum = 0n;
  let squares = 0n;
  let count = 0;
  let countSquares = 0;
  let active = 0;
  let maxSum: bigint | undefined;
  for (const day of days) {
    sum += day.sum;
    squares += day.sum * day.sum;
    count += day.count;
    countSquares += day.count * day.count;
    active += 1;
    if (maxSum === undefined || day.sum > maxSum) maxSum = day.sum;
  }
  if (maxSum === undefined || (active < n && maxSum < 0n)) maxSum = 0n;
  const N = BigInt(n);
  const variance = N * squares - sum * sum; // n² times the population variance
  const countVariance = n * countSquares - count * count;
  return {
    meanSum: roundedDivision(sum, N),
    // round(sqrt(variance) / n) = floor((2·sqrt(variance) + n) / 2n), exact with an integer root.
    stddevSum: (isqrt(4n * variance) + N) / (2n * N),
    maxSum,
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

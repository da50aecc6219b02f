// The behavioural view of the canonical model: per account and per party, in event time. A port
// (detectors never know which engine answers): the embedded adapter is PostgreSQL; a ClickHouse
// adapter fits behind the same interface and passes the same contract suite (contract.ts).
// Money is integer minor units (bigint): sums are in the tenant's base asset.
import type { SnapshotRequest, SubjectSnapshot } from './snapshot.ts';

type SubjectKind = 'account' | 'party';

export interface Subject {
  tenantId: string;
  kind: SubjectKind;
  id: string;
}

// One side of one movement as seen by one subject: a movement between two accounts of two
// parties is four activities (each account and each party sees it). Recording is idempotent on
// (subject, movement, direction) (a movement is a fact: its occurred_at never changes), so a
// redelivered activity changes nothing.
export interface Activity {
  subject: Subject;
  movementId: string;
  eventId: string;
  direction: 'in' | 'out';
  occurredAt: Date;
  // As the customer sent it (roundness is judged on this).
  amount: { value: bigint; scale: number; asset: string };
  // In the tenant's base asset; null when no FX rate was available (counted, never summed).
  baseValue: bigint | null;
  cash: boolean;
  // Who is on the other side, as a stable key (`account:A1`, `party:P1`, `external:…`); null
  // when the other side is not identifiable.
  counterparty: string | null;
  counterpartyCountry: string | null;
  // `<debit country>><credit country>` (for example `GB>NG`) when both are known.
  corridor: string | null;
}

// A movement that another supersedes (its correction: links.correction_of): from then on it is
// no activity of anyone, as though it had never been recorded, whichever of the two arrives first.
// A chain of corrections keeps only its last link.
export interface Retraction {
  tenantId: string;
  movementId: string;
  // The correction's movement id.
  by: string;
}

export type WindowName = '1h' | '24h' | '7d' | '30d' | '90d';

export const WINDOWS: Record<WindowName, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};

export interface ThresholdBand {
  // In base-asset minor units. An amount is "just below" when threshold - margin <= amount < threshold.
  threshold: bigint;
  margin: bigint;
}

export interface WindowOptions {
  windows?: WindowName[];
  thresholds?: ThresholdBand[];
  // An amount is round when its value as sent is a whole multiple of this many major units of
  // its own asset (default 100).
  roundMajorUnits?: number;
}

export interface FlowStats {
  count: number;
  // Sum of the priced activities; `unpriced` counts those without a base amount.
  sum: bigint;
  unpriced: number;
  cashCount: number;
  cashSum: bigint;
}

export interface GroupStats {
  key: string;
  count: number;
  sum: bigint;
}

export interface WindowStats {
  window: WindowName;
  // The window is (from, to]: to is the `at` asked for.
  from: Date;
  to: Date;
  in: FlowStats;
  out: FlowStats;
  distinctCounterparties: { in: number; out: number; total: number };
  // Counterparties whose first activity with this subject (ever) falls in the window.
  firstSeenCounterparties: number;
  // By counterparty country and by corridor, largest count first.
  countries: GroupStats[];
  corridors: GroupStats[];
  // One entry per ThresholdBand asked for, in the same order.
  belowThreshold: Array<{ threshold: bigint; count: number; sum: bigint }>;
  roundAmounts: { count: number; sum: bigint };
  lastActivityAt: Date | null;
}

export interface FlowBaseline {
  // Mean and population standard deviation of daily sums (base minor units, rounded half away
  // from zero) and counts.
  meanSum: bigint;
  stddevSum: bigint;
  // The largest daily sum (0 when every day had none): income that arrives in lumps, a salary
  // or a pension, is normal on its day however small the mean it makes.
  maxSum: bigint;
  meanCount: number;
  stddevCount: number;
}

export interface Baseline {
  // Whole UTC days before the day of `at`, at most `days`, none before the subject's first
  // activity; days without activity count as zero. 0 when the subject had no earlier activity.
  days: number;
  from: Date;
  to: Date;
  in: FlowBaseline;
  out: FlowBaseline;
}

export interface CounterpartyHistory {
  firstSeenAt: Date;
  lastSeenAt: Date;
  count: number;
  sum: bigint;
}

// One activity as listed for its subject (evidence: which movements, with whom, how much).
export type ActivityRecord = Omit<Activity, 'subject' | 'eventId'>;

export interface ActivityQuery {
  direction?: 'in' | 'out';
  // At most this many, latest first (default 200).
  limit?: number;
}

export interface LatestRequest {
  subject: Subject;
  after: Date;
  upTo: Date;
}

// What a store recorded since an earlier read (AggregateStore.recordedSince).
export interface RecordedSince {
  activities: Array<{ subject: Subject; activity: ActivityRecord }>;
  // Where the next read starts: this read saw everything up to it.
  cursor: string;
  // More activities were new than the read's limit: `activities` holds only some of them.
  truncated: boolean;
  // Activities the store held at the earlier read and has since dropped (Retraction): their
  // subjects' all-time facts may have changed too.
  retracted: Array<{ subject: Subject; movementId: string }>;
}

export interface AggregateStore {
  // Returns how many activities were new. The retractions are recorded in the same step: an
  // activity of a movement retracted now or before is not recorded, and one held is dropped.
  record(activities: Activity[], retractions?: Retraction[]): Promise<number>;
  // Stats of each window ending at `at` (inclusive), in event time; default all five windows.
  windows(subject: Subject, at: Date, options?: WindowOptions): Promise<WindowStats[]>;
  // Daily baseline over the `days` (default 90) whole days before the day of `at`.
  baseline(subject: Subject, at: Date, days?: number): Promise<Baseline>;
  // The latest activity strictly before `before` (default: any time).
  lastActivity(subject: Subject, before?: Date): Promise<Date | null>;
  // For each request, in the same order, the subject's latest activity in (after, upTo]; null
  // when it has none there. Asked for many subjects at once.
  latestWithin(requests: LatestRequest[]): Promise<Array<Date | null>>;
  // The subject's history with one counterparty, up to and including `at` (default: all).
  counterparty(subject: Subject, counterparty: string, at?: Date): Promise<CounterpartyHistory | null>;
  // The subject's activities in (from, to], latest first.
  activities(subject: Subject, from: Date, to: Date, query?: ActivityQuery): Promise<ActivityRecord[]>;
  // One snapshot per request, in the same order (see snapshot.ts): the subject's activities in
  // snapshotRange(at, since), at most `cap` of them (more marks the snapshot incomplete), with the
  // all-time facts that make its reads exact. Loaded for many subjects at once.
  snapshots(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]>;
  // Optional, for adapters that can tell which activities an earlier read did not see: the
  // activities of these tenants that this read sees and the read that returned `cursor` did not
  // (none with a null cursor: only one to start from), in no particular order. A cache of
  // snapshots (snapshot-cache.ts) then reads each activity once, not with every snapshot of its
  // subject; without it, every snapshot is read from the store. At most `limit` activities
  // (default: all), more saying `truncated`.
  recordedSince?(tenants: readonly string[], cursor: string | null, limit?: number): Promise<RecordedSince>;
}

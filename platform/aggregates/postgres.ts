import { AnalyzeOnGrowth } from '../postgres/analyze-on-growth.ts';
import type { Pool } from '../postgres/pool.ts';
import {
  ACTIVITIES_SQL,
  BASELINE_SQL,
  COUNTERPARTY_SQL,
  LAST_ACTIVITY_SQL,
  RECORD_SQL,
  SNAPSHOT_FACTS_SQL,
  SNAPSHOT_ROWS_SQL,
  WINDOWS_SQL,
  type ActivityRow,
  type BaselineRow,
  type CounterpartyRow,
  type GroupJson,
  type RecordRow,
  type SnapshotFactsRow,
  type SnapshotRowsRow,
  type WindowRow,
} from './postgres-sql.ts';
import {
  WINDOWS,
  type Activity,
  type ActivityQuery,
  type ActivityRecord,
  type AggregateStore,
  type Baseline,
  type CounterpartyHistory,
  type FlowBaseline,
  type GroupStats,
  type Subject,
  type WindowName,
  type WindowOptions,
  type WindowStats,
} from './port.ts';

import {
  ALL_WINDOWS,
  DAY_MS,
  DEFAULT_ACTIVITY_LIMIT,
  DEFAULT_BASELINE_DAYS,
  DEFAULT_ROUND_MAJOR_UNITS,
  compareActivities,
  snapshotRange,
  type SnapshotRequest,
  type SubjectSnapshot,
} from './snapshot.ts';

// The embedded adapter of the aggregate store: activities are rows of agg_activity, and every
// statistic is computed at read time over one index range of one subject (see
// infra/postgres/0006_aggregates.up.sql). No FK to tenants: the store trusts its callers' tenant
// ids, exactly like the bus records it is fed from.
export class PostgresAggregateStore implements AggregateStore {
  private readonly growth: AnalyzeOnGrowth;

  constructor(private readonly pool: Pool) {
    this.growth = new AnalyzeOnGrowth(pool, ['agg_activity']);
  }

  // One statement, hence one transaction, for the whole batch.
  async record(activities: Activity[]): Promise<number> {
    if (activities.length === 0) return 0;
    const result = await this.pool.query({ name: 'agg-record', text: RECORD_SQL, values: [JSON.stringify(activities.map(rowOf))] });
    const added = result.rowCount ?? 0;
    this.growth.note(added);
    return added;
  }

  async windows(subject: Subject, at: Date, options: WindowOptions = {}): Promise<WindowStats[]> {
    const asked = options.windows ?? ALL_WINDOWS;
    if (asked.length === 0) return [];
    const names = [...new Set(asked)];
    const thresholds = options.thresholds ?? [];
    const roundUnits = options.roundMajorUnits ?? DEFAULT_ROUND_MAJOR_UNITS;
    if (!Number.isFinite(roundUnits) || roundUnits <= 0) throw new RangeError(`roundMajorUnits must be a positive number, got ${roundUnits}`);
    const { rows } = await this.pool.query<WindowRow>({
      name: 'agg-windows',
      text: WINDOWS_SQL,
      values: [
        subject.tenantId,
        subject.kind,
        subject.id,
        names,
        names.map((name) => new Date(at.getTime() - WINDOWS[name])),
        at,
        String(roundUnits),
        thresholds.map((band) => band.threshold.toString()),
        thresholds.map((band) => band.margin.toString()),
      ],
    });
    const byName = new Map(rows.map((row) => [row.name, row]));
    return asked.map((name) => {
      const row = byName.get(name);
      if (!row) throw new Error(`window ${name} missing from the result`);
      const bands = new Map(row.bands.map((band) => [band.band, band]));
      return {
        window: name,
        from: new Date(at.getTime() - WINDOWS[name]),
        to: new Date(at.getTime()),
        in: { count: row.in_count, sum: integer(row.in_sum), unpriced: row.in_unpriced, cashCount: row.in_cash_count, cashSum: integer(row.in_cash_sum) },
        out: { count: row.out_count, sum: integer(row.out_sum), unpriced: row.out_unpriced, cashCount: row.out_cash_count, cashSum: integer(row.out_cash_sum) },
        distinctCounterparties: { in: row.counterparties_in, out: row.counterparties_out, total: row.counterparties_total },
        firstSeenCounterparties: row.first_seen,
        countries: row.countries.map(groupOf),
        corridors: row.corridors.map(groupOf),
        // Bands are numbered from 1 in the query (WITH ORDINALITY); a band without activity is zero.
        belowThreshold: thresholds.map((band, i) => {
          const found = bands.get(i + 1);
          return { threshold: band.threshold, count: found?.count ?? 0, sum: found ? integer(found.sum) : 0n };
        }),
        roundAmounts: { count: row.round_count, sum: integer(row.round_sum) },
        lastActivityAt: row.last_activity_at,
      };
    });
  }

  async baseline(subject: Subject, at: Date, days = DEFAULT_BASELINE_DAYS): Promise<Baseline> {
    if (!Number.isInteger(days) || days < 0) throw new RangeError(`days must be a whole number >= 0, got ${days}`);
    const to = new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
    const earliest = new Date(to.getTime() - days * DAY_MS);
    const { rows } = await this.pool.query<BaselineRow>({
      name: 'agg-baseline',
      text: BASELINE_SQL,
      values: [subject.tenantId, subject.kind, subject.id, earliest, to],
    });
    const row = rows[0]!;
    if (row.days === 0 || row.from_at === null) return { days: 0, from: to, to, in: NO_FLOW, out: NO_FLOW };
    return {
      days: row.days,
      from: row.from_at,
      to,
      in: flowBaseline(row.in_mean_sum, row.in_stddev_sum, row.in_mean_count, row.in_stddev_count),
      out: flowBaseline(row.out_mean_sum, row.out_stddev_sum, row.out_mean_count, row.out_stddev_count),
    };
  }

  async lastActivity(subject: Subject, before?: Date): Promise<Date | null> {
    const { rows } = await this.pool.query<{ last_at: Date | null }>({
      name: 'agg-last-activity',
      text: LAST_ACTIVITY_SQL,
      values: [subject.tenantId, subject.kind, subject.id, before ?? 'infinity'],
    });
    return rows[0]?.last_at ?? null;
  }

  async counterparty(subject: Subject, counterparty: string, at?: Date): Promise<CounterpartyHistory | null> {
    const { rows } = await this.pool.query<CounterpartyRow>({
      name: 'agg-counterparty',
      text: COUNTERPARTY_SQL,
      values: [subject.tenantId, subject.kind, subject.id, counterparty, at ?? 'infinity'],
    });
    const row = rows[0];
    if (!row || row.n === 0 || !row.first_at || !row.last_at) return null;
    return { firstSeenAt: row.first_at, lastSeenAt: row.last_at, count: row.n, sum: integer(row.total) };
  }

  async activities(subject: Subject, from: Date, to: Date, query: ActivityQuery = {}): Promise<ActivityRecord[]> {
    const limit = query.limit ?? DEFAULT_ACTIVITY_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number >= 1, got ${limit}`);
    const { rows } = await this.pool.query<ActivityRow>({
      name: 'agg-activities',
      text: ACTIVITIES_SQL,
      values: [subject.tenantId, subject.kind, subject.id, from, to, query.direction ?? null, limit],
    });
    return rows.map(activityOf);
  }

  async snapshots(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`cap must be a whole number >= 1, got ${cap}`);
    if (requests.length === 0) return [];
    const ranges = requests.map((request) => snapshotRange(request.at));
    const document = JSON.stringify(
      requests.map((request, i) => ({ i, t: request.subject.tenantId, k: request.subject.kind, s: request.subject.id, f: ranges[i]!.from, a: ranges[i]!.to })),
    );
    const { rows } = await this.pool.query<SnapshotRowsRow>({ name: 'agg-snapshot-rows', text: SNAPSHOT_ROWS_SQL, values: [document, cap] });
    const listed: ActivityRecord[][] = requests.map(() => []);
    for (const row of rows) listed[row.i]!.push(activityOf(row));
    const complete = listed.map((list) => list.length <= cap);
    // The counterparties of each complete snapshot's rows, for their first sightings.
    const pairs = listed.flatMap((list, i) =>
      complete[i] ? [...new Set(list.flatMap((row) => (row.counterparty === null ? [] : [row.counterparty])))].map((c) => ({ i, c })) : [],
    );
    const facts = await this.pool.query<SnapshotFactsRow>({ name: 'agg-snapshot-facts', text: SNAPSHOT_FACTS_SQL, values: [document, JSON.stringify(pairs)] });
    const own = new Map<number, SnapshotFactsRow>();
    const firstSeen = requests.map(() => new Map<string, Date>());
    for (const row of facts.rows) {
      if (row.c === null) own.set(row.i, row);
      else if (row.first_at) firstSeen[row.i]!.set(row.c, row.first_at);
    }
    return requests.map((request, i) => ({
      subject: request.subject,
      from: ranges[i]!.from,
      to: ranges[i]!.to,
      // LATERAL keeps each request's ORDER BY, but the order of the joined rows is not promised.
      rows: listed[i]!.sort(compareActivities).slice(0, cap),
      complete: complete[i]!,
      firstActivityAt: own.get(i)?.first_at ?? null,
      lastActivityAtOrBeforeFrom: own.get(i)?.last_before ?? null,
      counterpartyFirstSeen: firstSeen[i]!,
    }));
  }
}

function activityOf(row: ActivityRow): ActivityRecord {
  return {
    movementId: row.movement_id,
    direction: row.direction,
    occurredAt: row.occurred_at,
    amount: { value: integer(row.amount_value), scale: row.amount_scale, asset: row.amount_asset },
    baseValue: row.base_value === null ? null : integer(row.base_value),
    cash: row.cash,
    counterparty: row.counterparty,
    counterpartyCountry: row.counterparty_country,
    corridor: row.corridor,
  };
}

const NO_FLOW: FlowBaseline = { meanSum: 0n, stddevSum: 0n, meanCount: 0, stddevCount: 0 };

function rowOf(activity: Activity): RecordRow {
  return {
    t: activity.subject.tenantId,
    k: activity.subject.kind,
    s: activity.subject.id,
    o: activity.occurredAt.toISOString(),
    m: activity.movementId,
    d: activity.direction,
    e: activity.eventId,
    v: activity.amount.value.toString(),
    sc: activity.amount.scale,
    a: activity.amount.asset,
    b: activity.baseValue === null ? null : activity.baseValue.toString(),
    c: activity.cash,
    cp: activity.counterparty,
    cc: activity.counterpartyCountry,
    co: activity.corridor,
  };
}

function groupOf(group: GroupJson): GroupStats {
  return { key: group.key, count: group.count, sum: integer(group.sum) };
}

function flowBaseline(meanSum: string | null, stddevSum: string | null, meanCount: number | null, stddevCount: number | null): FlowBaseline {
  return { meanSum: integer(meanSum ?? '0'), stddevSum: integer(stddevSum ?? '0'), meanCount: meanCount ?? 0, stddevCount: stddevCount ?? 0 };
}

// Money comes back as the text of an integral numeric; anything else is a bug upstream, and is
// refused rather than truncated.
function integer(text: string): bigint {
  if (!/^-?\d+$/.test(text)) throw new Error(`expected an integer amount, got ${JSON.stringify(text)}`);
  return BigInt(text);
}

import { AnalyzeOnGrowth } from '../postgres/analyze-on-growth.ts';
import { withTransaction, type Pool } from '../postgres/pool.ts';
import { lockTenants } from '../postgres/tenant-locks.ts';
import {
  ACTIVITIES_SQL,
  BASELINE_SQL,
  COUNTERPARTY_SQL,
  LAST_ACTIVITY_SQL,
  LATEST_WITHIN_SQL,
  RECORDING_LOCK_NAMESPACE,
  RECORD_RETRACTING_SQL,
  RECORD_SQL,
  RECORDED_SINCE_SQL,
  SNAPSHOT_FACTS_SQL,
  SNAPSHOT_ROWS_SQL,
  WINDOWS_SQL,
  type ActivityRow,
  type BaselineRow,
  type CounterpartyRow,
  type GroupJson,
  type RecordRow,
  type RecordedSinceRow,
  type RetractionRow,
  type SnapshotFactsRow,
  type SnapshotRowsRow,
  type WindowRow,
} from './postgres-sql.ts';
import type { Activity, ActivityQuery, ActivityRecord, AggregateStore, Baseline, LatestRequest, RecordedSince, Retraction, CounterpartyHistory, FlowBaseline, GroupStats, Subject, WindowOptions, WindowStats } from './port.ts';
import { SharedValues } from './shared-values.ts';
import { completeWithin, counterpartiesOf, snapshotOf, snapshotRange, type SnapshotRequest, type SubjectSnapshot } from './snapshot.ts';
import { DEFAULT_BASELINE_DAYS, activityLimit, baselineSpan, checkSnapshotCap, integerAmount as integer, noBaseline, windowRequest, windowStart, windowStats } from './stats.ts';

// The embedded adapter of the aggregate store: activities are rows of agg_activity, and every
// statistic is computed at read time over one index range of one subject (see
// infra/postgres/0006_aggregates.up.sql). No FK to tenants: the store trusts its callers' tenant
// ids, exactly like the bus records it is fed from.
export class PostgresAggregateStore implements AggregateStore {
  private readonly growth: AnalyzeOnGrowth;

  constructor(private readonly pool: Pool) {
    this.growth = new AnalyzeOnGrowth(pool, ['agg_activity']);
  }

  // One transaction for the whole batch: its tenants locked (postgres-sql.ts), then one statement.
  async record(activities: Activity[], retractions: Retraction[] = []): Promise<number> {
    if (activities.length === 0 && retractions.length === 0) return 0;
    const retracting = new Set(retractions.map((retraction) => retraction.tenantId));
    const tenants = [...new Set([...activities.map((activity) => activity.subject.tenantId), ...retracting])];
    const rows = JSON.stringify(activities.map(rowOf));
    const added = await withTransaction(this.pool, async (client) => {
      await lockTenants(client, 'agg-lock-tenants', RECORDING_LOCK_NAMESPACE, tenants, retracting);
      const result =
        retractions.length === 0
          ? await client.query({ name: 'agg-record', text: RECORD_SQL, values: [rows] })
          : await client.query({ name: 'agg-record-retracting', text: RECORD_RETRACTING_SQL, values: [rows, JSON.stringify(retractions.map(retractionRowOf))] });
      return result.rowCount ?? 0;
    });
    this.growth.note(added);
    return added;
  }

  async windows(subject: Subject, at: Date, options: WindowOptions = {}): Promise<WindowStats[]> {
    const request = windowRequest(options);
    if (!request) return [];
    const { asked, names, thresholds, roundUnits } = request;
    const end = at.getTime();
    const { rows } = await this.pool.query<WindowRow>({
      name: 'agg-windows',
      text: WINDOWS_SQL,
      values: [
        subject.tenantId,
        subject.kind,
        subject.id,
        names,
        names.map((name) => new Date(windowStart(end, name))),
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
      const counts = {
        in: { count: row.in_count, sum: integer(row.in_sum), unpriced: row.in_unpriced, cashCount: row.in_cash_count, cashSum: integer(row.in_cash_sum) },
        out: { count: row.out_count, sum: integer(row.out_sum), unpriced: row.out_unpriced, cashCount: row.out_cash_count, cashSum: integer(row.out_cash_sum) },
        distinctCounterparties: { in: row.counterparties_in, out: row.counterparties_out, total: row.counterparties_total },
        firstSeenCounterparties: row.first_seen,
        // Ordered by the query (count, then key).
        countries: row.countries.map(groupOf),
        corridors: row.corridors.map(groupOf),
        // Bands are numbered from 1 in the query (WITH ORDINALITY); a band without activity is zero.
        bands: thresholds.map((_, i) => {
          const found = bands.get(i + 1);
          return { count: found?.count ?? 0, sum: found ? integer(found.sum) : 0n };
        }),
        roundAmounts: { count: row.round_count, sum: integer(row.round_sum) },
      };
      return windowStats(name, end, thresholds, counts, row.last_activity_at);
    });
  }

  async baseline(subject: Subject, at: Date, days = DEFAULT_BASELINE_DAYS): Promise<Baseline> {
    const span = baselineSpan(at.getTime(), days);
    const to = new Date(span.to);
    const { rows } = await this.pool.query<BaselineRow>({
      name: 'agg-baseline',
      text: BASELINE_SQL,
      values: [subject.tenantId, subject.kind, subject.id, new Date(span.earliest), to],
    });
    const row = rows[0]!;
    if (row.days === 0 || row.from_at === null) return noBaseline(span.to);
    return {
      days: row.days,
      from: row.from_at,
      to,
      in: flowBaselineOf(row.in_mean_sum, row.in_stddev_sum, row.in_max_sum, row.in_mean_count, row.in_stddev_count),
      out: flowBaselineOf(row.out_mean_sum, row.out_stddev_sum, row.out_max_sum, row.out_mean_count, row.out_stddev_count),
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

  async latestWithin(requests: LatestRequest[]): Promise<Array<Date | null>> {
    if (requests.length === 0) return [];
    const document = JSON.stringify(requests.map((r, i) => ({ i, t: r.subject.tenantId, k: r.subject.kind, s: r.subject.id, f: r.after, u: r.upTo })));
    const { rows } = await this.pool.query<{ i: number; latest_at: Date }>({ name: 'agg-latest-within', text: LATEST_WITHIN_SQL, values: [document] });
    const latest: Array<Date | null> = requests.map(() => null);
    for (const row of rows) latest[row.i] = row.latest_at;
    return latest;
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
    const limit = activityLimit(query);
    const { rows } = await this.pool.query<ActivityRow>({
      name: 'agg-activities',
      text: ACTIVITIES_SQL,
      values: [subject.tenantId, subject.kind, subject.id, from, to, query.direction ?? null, limit],
    });
    const shared = new SharedValues();
    return rows.map((row) => activityOf(row, shared));
  }

  async snapshots(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    checkSnapshotCap(cap);
    if (requests.length === 0) return [];
    const ranges = requests.map((request) => snapshotRange(request.at, request.since));
    const document = JSON.stringify(
      requests.map((request, i) => ({ i, t: request.subject.tenantId, k: request.subject.kind, s: request.subject.id, f: ranges[i]!.from, a: ranges[i]!.to })),
    );
    const { rows } = await this.pool.query<SnapshotRowsRow>({ name: 'agg-snapshot-rows', text: SNAPSHOT_ROWS_SQL, values: [document, cap] });
    const listed: ActivityRecord[][] = requests.map(() => []);
    const shared = new SharedValues();
    for (const row of rows) listed[row.i]!.push(activityOf(row, shared));
    // The counterparties of each complete snapshot's rows, for their first sightings.
    const pairs = listed.flatMap((list, i) => (completeWithin(list, cap) ? [...counterpartiesOf(list)].map((c) => ({ i, c })) : []));
    const facts = await this.pool.query<SnapshotFactsRow>({ name: 'agg-snapshot-facts', text: SNAPSHOT_FACTS_SQL, values: [document, JSON.stringify(pairs)] });
    const own = new Map<number, SnapshotFactsRow>();
    const firstSeen = requests.map(() => new Map<string, Date>());
    for (const row of facts.rows) {
      if (row.c === null) own.set(row.i, row);
      else if (row.first_at) firstSeen[row.i]!.set(row.c, row.first_at);
    }
    // A subject with nothing at or before the range's start met each counterparty first in its
    // rows (the statement looked up only the others).
    listed.forEach((list, i) => {
      if (!completeWithin(list, cap) || own.get(i)?.last_before) return;
      for (const row of list) {
        if (row.counterparty === null) continue;
        const seen = firstSeen[i]!.get(row.counterparty);
        if (!seen || row.occurredAt < seen) firstSeen[i]!.set(row.counterparty, row.occurredAt);
      }
    });
    // LATERAL keeps each request's ORDER BY, but the order of the joined rows is not promised:
    // snapshotOf sorts them.
    return requests.map((request, i) =>
      snapshotOf(request, ranges[i]!, listed[i]!, cap, {
        firstActivityAt: own.get(i)?.first_at ?? null,
        lastActivityAtOrBeforeFrom: own.get(i)?.last_before ?? null,
        counterpartyFirstSeen: firstSeen[i]!,
      }),
    );
  }

  // Rows carry the transaction that recorded them (recorded_xid): see RECORDED_SINCE_SQL.
  async recordedSince(tenants: readonly string[], cursor: string | null, limit?: number): Promise<RecordedSince> {
    const { rows } = await this.pool.query<RecordedSinceRow>({ name: 'agg-recorded-since', text: RECORDED_SINCE_SQL, values: [tenants, cursor, limit === undefined ? null : limit + 1] });
    const activities: RecordedSince['activities'] = [];
    const retracted: RecordedSince['retracted'] = [];
    const shared = new SharedValues();
    let next: string | null = null;
    for (const row of rows) {
      if (row.tenant_id === null) next = row.cursor;
      else if (row.retracted) retracted.push({ subject: { tenantId: row.tenant_id, kind: row.subject_kind, id: row.subject_id }, movementId: row.movement_id });
      else activities.push({ subject: { tenantId: row.tenant_id, kind: row.subject_kind, id: row.subject_id }, activity: activityOf(row, shared) });
    }
    if (next === null) throw new Error('agg-recorded-since returned no cursor');
    const truncated = limit !== undefined && activities.length > limit;
    if (truncated) activities.length = limit;
    return { activities, cursor: next, truncated, retracted };
  }
}

// The rows of one read share their repeated values (shared-values.ts).
function activityOf(row: ActivityRow, shared: SharedValues): ActivityRecord {
  const movementId = shared.text(row.movement_id);
  const amount = shared.amount(movementId, integer(row.amount_value), row.amount_scale, shared.text(row.amount_asset));
  return {
    movementId,
    direction: row.direction === 'in' ? 'in' : 'out',
    occurredAt: shared.instant(row.occurred_at),
    amount,
    // In the base asset already (the usual case), the base value is the amount itself.
    baseValue: row.base_value === null ? null : row.base_value === row.amount_value ? amount.value : integer(row.base_value),
    cash: row.cash,
    counterparty: shared.text(row.counterparty),
    counterpartyCountry: shared.text(row.counterparty_country),
    corridor: shared.text(row.corridor),
  };
}

function retractionRowOf(retraction: Retraction): RetractionRow {
  return { t: retraction.tenantId, m: retraction.movementId, b: retraction.by };
}

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

// The baseline statistics of one direction, computed by BASELINE_SQL (null: no days).
function flowBaselineOf(meanSum: string | null, stddevSum: string | null, maxSum: string | null, meanCount: number | null, stddevCount: number | null): FlowBaseline {
  return { meanSum: integer(meanSum ?? '0'), stddevSum: integer(stddevSum ?? '0'), maxSum: integer(maxSum ?? '0'), meanCount: meanCount ?? 0, stddevCount: stddevCount ?? 0 };
}

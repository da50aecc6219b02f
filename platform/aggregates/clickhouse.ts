import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Config } from '../config.ts';
import { identifier, parseTabSeparated, sql, stored, type Sql, type TsvRow } from './clickhouse-escape.ts';
import { migrateClickHouse } from './clickhouse-migrate.ts';
import {
  DECIMAL_LIMIT,
  activitiesSql,
  baselineSql,
  counterpartySql,
  existingSql,
  firstSightingsSql,
  insertRetractionsSql,
  retractedSql,
  insertSql,
  lastActivitySql,
  latestWithinSql,
  roundModuli,
  snapshotFactsSql,
  snapshotRowsSql,
  windowFlowsSql,
  windowGroupsSql,
  windowSightingsSql,
  type InsertRow,
  type SnapshotAsk,
  type Tables,
} from './clickhouse-sql.ts';
import type { Activity, ActivityQuery, ActivityRecord, AggregateStore, Baseline, CounterpartyHistory, LatestRequest, FlowStats, GroupStats, Retraction, Subject, WindowOptions, WindowStats } from './port.ts';
import { completeWithin, counterpartiesOf, snapshotOf, snapshotRange, type SnapshotRequest, type SubjectSnapshot } from './snapshot.ts';
import { DAY_MS, DEFAULT_BASELINE_DAYS, activityLimit, bandsOf, baselineOf, baselineSpan, baselineStart, checkSnapshotCap } from './stats.ts';
import { integerAmount, noActivityCounts, noBaseline, ranked, windowRequest, windowStart, windowStats, type ActivityCounts } from './stats.ts';

// The ClickHouse adapter of the aggregate store: activities are rows of agg_activity
// (infra/clickhouse), and every statistic is computed at read time in ClickHouse over the
// subject's rows, as the PostgreSQL adapter does (see clickhouse-sql.ts for the statements and
// clickhouse-escape.ts for how values get into them). Only the last steps over a handful of
// numbers happen in TypeScript, with the engine-neutral code of stats.ts: a baseline's mean and
// deviation of at most `days` daily sums (exact bigint arithmetic, the snapshot reader's, so both
// adapters round alike), and the ordering of a window's groups.
//
// Recording: ClickHouse has no unique constraint and no ON CONFLICT, so record() looks up which
// activities of the batch are already stored, and inserts the others in one INSERT (one part:
// all or nothing). record() calls of one store run one at a time, so within a process the count
// of new activities is exact even for overlapping batches written at once. Two processes writing
// the same activity at the same instant can both count it as new; the table may then hold two rows
// of it until ReplacingMergeTree merges them, but every counting read keeps one row per identity
// (clickhouse-sql.ts), so no statistic changes, only that return value. Retractions are rows of
// agg_retraction, which every read consults; a retracted activity is never deleted.
export class ClickHouseAggregateStore implements AggregateStore {
  private readonly tables: Tables;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: ClickHouseClient,
    readonly database: string,
  ) {
    this.tables = { activity: sql`${identifier(database)}.agg_activity`, retraction: sql`${identifier(database)}.agg_retraction` };
  }

  // Creates the database and tables (infra/clickhouse) where they are missing.
  migrate(): Promise<number[]> {
    return migrateClickHouse(this.client, this.database);
  }

  async record(activities: Activity[], retractions: Retraction[] = []): Promise<number> {
    if (activities.length === 0 && retractions.length === 0) return 0;
    const batch = new Map<string, InsertRow>();
    for (const activity of activities) {
      const row = insertRowOf(activity);
      const key = keyOf([row.tenantId, row.kind, row.subjectId, row.movementId, row.direction]);
      if (!batch.has(key)) batch.set(key, row);
    }
    return this.serially(async () => {
      // First, so that a batch holding a movement and its correction never shows the movement.
      if (retractions.length > 0) await this.command(insertRetractionsSql(this.tables.retraction, retractions));
      const present = new Set<string>();
      // Movements retracted, now or before: their activities are not recorded.
      const retracted = new Set<string>();
      const rows = [...batch.values()];
      for (let i = 0; i < rows.length; i += EXISTING_CHUNK) {
        const chunk = rows.slice(i, i + EXISTING_CHUNK);
        const subjects = chunk.map((row): Subject => ({ tenantId: row.tenantId, kind: row.kind as Subject['kind'], id: row.subjectId }));
        const movementIds = chunk.map((r) => r.movementId);
        const [stored, taken] = await Promise.all([
          this.rows(existingSql(this.tables.activity, subjects, movementIds)),
          this.rows(retractedSql(this.tables.retraction, chunk.map((row) => row.tenantId), movementIds)),
        ]);
        for (const row of stored) present.add(keyOf([text(row.t), text(row.k), text(row.s), text(row.m), text(row.d)]));
        for (const row of taken) retracted.add(keyOf([text(row.t), text(row.m)]));
      }
      const fresh = [...batch].filter(([key, row]) => !present.has(key) && !retracted.has(keyOf([row.tenantId, row.movementId]))).map(([, row]) => row);
      if (fresh.length > 0) await this.command(insertSql(this.tables.activity, fresh));
      return fresh.length;
    });
  }

  async windows(subject: Subject, at: Date, options: WindowOptions = {}): Promise<WindowStats[]> {
    checkSubject(subject);
    const request = windowRequest(options);
    if (!request) return [];
    const { asked, names, thresholds, roundUnits } = request;
    const end = msOf(at);
    const froms = names.map((name) => windowStart(end, name));
    const [flows, groups, sightings] = await Promise.all([
      this.rows(windowFlowsSql(this.tables, subject, froms, end, bandsOf(thresholds), roundModuli(roundUnits))),
      this.rows(windowGroupsSql(this.tables, subject, froms, end)),
      this.rows(windowSightingsSql(this.tables, subject, Math.min(...froms), end)),
    ]);
    const flowOf = new Map(flows.map((row) => [Number(text(row.w)), row]));
    const firstSeen: number[] = [];
    let lastActivityAt: Date | null = null;
    for (const row of sightings) {
      if (text(row.part) === '1') firstSeen.push(count(row.t));
      else lastActivityAt = new Date(count(row.t));
    }
    const grouped = names.map(() => ({ countries: [] as GroupStats[], corridors: [] as GroupStats[] }));
    for (const row of groups) {
      const target = grouped[count(row.w) - 1]!;
      (text(row.dimension) === '1' ? target.countries : target.corridors).push({ key: text(row.key), count: count(row.n), sum: money(row.total) });
    }
    const byName = new Map(
      names.map((name, i) => {
        const row = flowOf.get(i + 1);
        const counts = {
          ...(row ? flowCounts(row, thresholds.length) : noActivityCounts(thresholds.length)),
          firstSeenCounterparties: firstSeen.filter((t) => t > froms[i]!).length,
          countries: ranked(grouped[i]!.countries),
          corridors: ranked(grouped[i]!.corridors),
        };
        return [name, windowStats(name, end, thresholds, counts, lastActivityAt)] as const;
      }),
    );
    // Each window asked gets its own object, also when a name is asked twice.
    return asked.map((name) => structuredClone(byName.get(name)!));
  }

  async baseline(subject: Subject, at: Date, days = DEFAULT_BASELINE_DAYS): Promise<Baseline> {
    checkSubject(subject);
    const span = baselineSpan(msOf(at), days);
    const rows = await this.rows(baselineSql(this.tables, subject, span.earliestDay, span.to));
    const daily = rows.map((row) => ({
      day: count(row.d),
      in: { sum: money(row.in_sum), count: count(row.in_count) },
      out: { sum: money(row.out_sum), count: count(row.out_count) },
    }));
    // Activity before the earliest day allowed is folded into the day before it, so the first day
    // of the rows stands for the subject's first activity as far as the span is concerned.
    const from = baselineStart(span, daily.length === 0 ? undefined : Math.min(...daily.map((d) => d.day)) * DAY_MS);
    if (from === undefined) return noBaseline(span.to);
    const inSpan = daily.filter((d) => d.day * DAY_MS >= from);
    return baselineOf(from, span.to, inSpan.map((d) => d.in), inSpan.map((d) => d.out));
  }

  async lastActivity(subject: Subject, before?: Date): Promise<Date | null> {
    checkSubject(subject);
    const [row] = await this.rows(lastActivitySql(this.tables, subject, before === undefined ? undefined : msOf(before)));
    return !row || count(row.n) === 0 ? null : new Date(count(row.t));
  }

  async latestWithin(requests: LatestRequest[]): Promise<Array<Date | null>> {
    const latest: Array<Date | null> = requests.map(() => null);
    // Bounded statements, as snapshots are.
    for (let start = 0; start < requests.length; start += SNAPSHOT_CHUNK) {
      const asks: SnapshotAsk[] = requests.slice(start, start + SNAPSHOT_CHUNK).map((request, i) => {
        checkSubject(request.subject);
        return { i, subject: request.subject, from: msOf(request.after), to: msOf(request.upTo) };
      });
      for (const row of await this.rows(latestWithinSql(this.tables, asks))) latest[start + count(row.i)] = new Date(count(row.latest));
    }
    return latest;
  }

  async counterparty(subject: Subject, counterparty: string, at?: Date): Promise<CounterpartyHistory | null> {
    checkSubject(subject);
    const [row] = await this.rows(counterpartySql(this.tables, subject, counterparty, at === undefined ? undefined : msOf(at)));
    if (!row || count(row.n) === 0) return null;
    return { firstSeenAt: new Date(count(row.first_at)), lastSeenAt: new Date(count(row.last_at)), count: count(row.n), sum: money(row.total) };
  }

  async activities(subject: Subject, from: Date, to: Date, query: ActivityQuery = {}): Promise<ActivityRecord[]> {
    checkSubject(subject);
    const limit = activityLimit(query);
    if (query.direction !== undefined && query.direction !== 'in' && query.direction !== 'out') throw new RangeError(`unknown direction ${String(query.direction)}`);
    const rows = await this.rows(activitiesSql(this.tables, subject, msOf(from), msOf(to), query.direction, limit));
    return rows.map(activityOf);
  }

  async snapshots(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    checkSnapshotCap(cap);
    const out: SubjectSnapshot[] = [];
    // Bounded statements: a detection batch of thousands of subjects is asked in slices.
    for (let i = 0; i < requests.length; i += SNAPSHOT_CHUNK) out.push(...(await this.snapshotSlice(requests.slice(i, i + SNAPSHOT_CHUNK), cap)));
    return out;
  }

  private async snapshotSlice(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    for (const request of requests) checkSubject(request.subject);
    const ranges = requests.map((request) => snapshotRange(request.at, request.since));
    const asks: SnapshotAsk[] = requests.map((request, i) => ({ i, subject: request.subject, from: msOf(ranges[i]!.from), to: msOf(ranges[i]!.to) }));
    const [rows, facts, sightings] = await Promise.all([
      this.rows(snapshotRowsSql(this.tables, asks, cap + 1)),
      this.rows(snapshotFactsSql(this.tables, asks)),
      this.rows(firstSightingsSql(this.tables, asks)),
    ]);
    const listed: ActivityRecord[][] = requests.map(() => []);
    for (const row of rows) listed[count(row.i)]!.push(activityOf(row));
    const own = new Map(facts.map((row) => [count(row.i), row]));
    const sighted = new Map<string, Date>();
    for (const row of sightings) sighted.set(keyOf([text(row.t), text(row.k), text(row.s), text(row.c)]), new Date(count(row.first_at)));
    return requests.map((request, i) => {
      const subjectKey = [stored(request.subject.tenantId), request.subject.kind, stored(request.subject.id)];
      const counterpartyFirstSeen = new Map<string, Date>();
      if (completeWithin(listed[i]!, cap)) {
        for (const counterparty of counterpartiesOf(listed[i]!)) {
          const seen = sighted.get(keyOf([...subjectKey, counterparty]));
          if (seen) counterpartyFirstSeen.set(counterparty, seen);
        }
      }
      const fact = own.get(i);
      return snapshotOf(request, ranges[i]!, listed[i]!, cap, {
        firstActivityAt: fact ? new Date(count(fact.first_at)) : null,
        lastActivityAtOrBeforeFrom: fact && count(fact.n_before) > 0 ? new Date(count(fact.last_before)) : null,
        counterpartyFirstSeen,
      });
    });
  }

  // Runs one record() at a time (see the class comment); a failed one does not stop the next.
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writing.then(work, work);
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async rows(query: Sql): Promise<TsvRow[]> {
    const result = await this.client.query({ query: query.text, format: 'TabSeparatedWithNames', clickhouse_settings: settingsFor(query) });
    return parseTabSeparated(await result.text());
  }

  private async command(statement: Sql): Promise<void> {
    await this.client.command({ query: statement.text, clickhouse_settings: settingsFor(statement) });
  }
}

const EXISTING_CHUNK = 5_000;
const SNAPSHOT_CHUNK = 1_000;

// Statements that may pass the server's default limits (256 KiB of query text, 50 000 syntax-tree
// nodes; a node takes at least 4 characters): the existence check of a large batch, the requests
// of a large snapshot slice, a very long id. INSERT data is not parsed as SQL and has no limit.
function settingsFor(statement: Sql): ClickHouseSettings {
  const size = statement.text.length;
  if (size < 50_000) return {};
  return { max_query_size: String(size + 1024), max_ast_elements: String(size), max_expanded_ast_elements: String(size * 4) };
}

export interface ClickHouseConnection {
  url: string;
  username?: string;
  password?: string;
  database: string;
}

// An HTTP client for the store. Nothing beyond plain HTTP is asked of the server (no compression,
// no session, no settings of newer releases), so it talks to 18.16 as to a current server.
export function createClickHouseClient(connection: Omit<ClickHouseConnection, 'database'>): ClickHouseClient {
  return createClient({
    url: connection.url,
    username: connection.username ?? 'default',
    password: connection.password ?? '',
    request_timeout: 60_000,
    max_open_connections: 16,
    compression: { request: false, response: false },
    // Failures reach the caller as errors; the client's own log would print each one again.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

// The store of the service's configuration (SVC_AGGREGATE_STORE=clickhouse), migrated.
export async function openClickHouseAggregateStore(
  config: Pick<Config, 'CLICKHOUSE_URL' | 'CLICKHOUSE_USER' | 'CLICKHOUSE_PASSWORD' | 'CLICKHOUSE_DATABASE'>,
): Promise<{ store: ClickHouseAggregateStore; close: () => Promise<void> }> {
  if (!config.CLICKHOUSE_URL) throw new Error('CLICKHOUSE_URL is required for the ClickHouse aggregate store');
  const client = createClickHouseClient({ url: config.CLICKHOUSE_URL, username: config.CLICKHOUSE_USER, password: config.CLICKHOUSE_PASSWORD });
  try {
    const store = new ClickHouseAggregateStore(client, config.CLICKHOUSE_DATABASE);
    await store.migrate();
    return { store, close: () => client.close() };
  } catch (error) {
    await client.close();
    throw error;
  }
}

// --- rows in and out ---------------------------------------------------------------------------

function insertRowOf(activity: Activity): InsertRow {
  const { subject, amount } = activity;
  checkSubject(subject);
  if (activity.direction !== 'in' && activity.direction !== 'out') throw new RangeError(`unknown direction ${String(activity.direction)}`);
  for (const [name, value] of [['movementId', activity.movementId], ['eventId', activity.eventId], ['amount.asset', amount.asset]] as const) {
    if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
  }
  if (!Number.isInteger(amount.scale) || amount.scale < 0 || amount.scale > 255) throw new RangeError(`amount scale must be a whole number 0-255, got ${amount.scale}`);
  checkMoney('amount.value', amount.value);
  if (activity.baseValue !== null) checkMoney('baseValue', activity.baseValue);
  for (const [name, value] of [['counterparty', activity.counterparty], ['counterpartyCountry', activity.counterpartyCountry], ['corridor', activity.corridor]] as const) {
    if (value !== null && typeof value !== 'string') throw new TypeError(`${name} must be a string or null`);
  }
  return {
    tenantId: subject.tenantId,
    kind: subject.kind,
    subjectId: subject.id,
    movementId: activity.movementId,
    direction: activity.direction,
    occurredMs: msOf(activity.occurredAt),
    eventId: activity.eventId,
    amountValue: amount.value,
    amountScale: amount.scale,
    amountAsset: amount.asset,
    baseValue: activity.baseValue,
    cash: activity.cash === true,
    counterparty: activity.counterparty,
    country: activity.counterpartyCountry,
    corridor: activity.corridor,
  };
}

function checkSubject(subject: Subject): void {
  if (subject.kind !== 'account' && subject.kind !== 'party') throw new RangeError(`unknown subject kind ${String(subject.kind)}`);
  if (typeof subject.tenantId !== 'string' || typeof subject.id !== 'string') throw new TypeError('a subject has a string tenant id and id');
}

function checkMoney(name: string, value: bigint): void {
  if (typeof value !== 'bigint') throw new TypeError(`${name} must be a bigint`);
  if (value > DECIMAL_LIMIT || value < -DECIMAL_LIMIT) throw new RangeError(`${name} does not fit 38 digits: ${value}`);
}

function msOf(date: Date): number {
  const ms = date instanceof Date ? date.getTime() : NaN;
  if (!Number.isSafeInteger(ms)) throw new RangeError(`not a valid date: ${String(date)}`);
  return ms;
}

// The identity of an activity (or a subject and counterparty) as ClickHouse stores its strings.
function keyOf(parts: string[]): string {
  return JSON.stringify(parts.map(stored));
}

function activityOf(row: TsvRow): ActivityRecord {
  const direction = text(row.dir);
  if (direction !== 'in' && direction !== 'out') throw new Error(`unexpected direction ${direction}`);
  return {
    movementId: text(row.movement_id),
    direction,
    occurredAt: new Date(count(row.occurred_ms)),
    amount: { value: money(row.amount_value), scale: count(row.amount_scale), asset: text(row.amount_asset) },
    baseValue: text(row.priced) === '1' ? money(row.base_value) : null,
    cash: text(row.cash) === '1',
    counterparty: row.counterparty ?? null,
    counterpartyCountry: row.counterparty_country ?? null,
    corridor: row.corridor ?? null,
  };
}

// The counts of a window's row of windowFlowsSql.
function flowCounts(row: TsvRow, bands: number): ActivityCounts {
  return {
    in: flowStats(row, 'in'),
    out: flowStats(row, 'out'),
    distinctCounterparties: { in: tally(row.counterparties_in), out: tally(row.counterparties_out), total: tally(row.counterparties_total) },
    bands: Array.from({ length: bands }, (_, b) => ({ count: count(row[`b${b}_count`]), sum: money(row[`b${b}_sum`]) })),
    roundAmounts: { count: count(row.round_count), sum: money(row.round_sum) },
  };
}

function flowStats(row: TsvRow, side: 'in' | 'out'): FlowStats {
  return {
    count: count(row[`${side}_count`]),
    sum: money(row[`${side}_sum`]),
    unpriced: count(row[`${side}_unpriced`]),
    cashCount: count(row[`${side}_cash_count`]),
    cashSum: money(row[`${side}_cash_sum`]),
  };
}

function text(field: string | null | undefined): string {
  if (field === null || field === undefined) throw new Error('unexpected NULL in a ClickHouse result');
  return field;
}

// An integer column (a count, milliseconds, a scale): exact in a double.
function count(field: string | null | undefined): number {
  const value = text(field);
  if (!/^-?\d+$/.test(value)) throw new Error(`expected an integer, got ${JSON.stringify(value)}`);
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new Error(`integer out of range: ${value}`);
  return number;
}

// A distinct count over a Nullable column: 18.16 answers NULL, not 0, when every value is NULL.
function tally(field: string | null | undefined): number {
  return field === null ? 0 : count(field);
}

// Money comes back as the decimal text of a Decimal(38, 0); a sum over no rows is 0.
function money(field: string | null | undefined): bigint {
  return field === null || field === undefined ? 0n : integerAmount(field);
}

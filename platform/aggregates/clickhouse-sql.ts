// The SQL of the ClickHouse aggregate store (clickhouse.ts). Every statement is built with the
// `sql` tag of clickhouse-escape.ts: customer strings enter only as quoted literals, numbers only
// as checked integers. Every statement runs on ClickHouse 18.16 (Debian's package: no query
// parameters, no DateTime64, no window functions) and on current releases: event time is Int64
// milliseconds, money Decimal(38, 0) read back as text (TabSeparated), and "per window" is an
// ARRAY JOIN of each row onto the windows that contain it.
//
// Dedup: every read that counts, sums or lists reads the subject's rows through `activityRows`,
// which keeps one row per activity identity (LIMIT 1 BY the sorting key), so two rows of one
// activity (a redelivery another process wrote before the parts merged) are one at query time.
// This is the collapse FINAL would apply, at a fraction of its cost on 18.16 (FINAL merges the
// whole key range in one stream: 4 to 10 times slower on these reads). Reads of min, max and
// distinct counts, which a duplicate cannot change, read the table directly.
//
// Subjects are always filtered column by column (tenant_id, subject_kind, subject_id, each = or
// IN): that is what 18.16 turns into ranges of the primary index; a tuple IN is not, and scans the
// table. With several tenants or kinds the filter is a superset, which the join with the requests
// (or the caller's lookup by exact key) narrows.
import { decimal, identifier, sql, type Sql } from './clickhouse-escape.ts';
import type { Retraction, Subject } from './port.ts';
import { DAY_MS, roundUnitsFraction, type Band } from './stats.ts';

// The largest magnitude a Decimal(38, 0) holds.
export const DECIMAL_LIMIT = 10n ** 38n - 1n;

// The columns of one activity, in the order INSERT_COLUMNS lists them.
const INSERT_COLUMNS = sql`(tenant_id, subject_kind, subject_id, movement_id, direction, occurred_ms, event_id,
  amount_value, amount_scale, amount_asset, priced, base_value, cash, counterparty, counterparty_country, corridor)`;

// The sorting key of agg_activity: the identity of an activity.
const IDENTITY = sql`tenant_id, subject_kind, subject_id, movement_id, direction`;

export interface InsertRow {
  tenantId: string;
  kind: string;
  subjectId: string;
  movementId: string;
  direction: string;
  occurredMs: number;
  eventId: string;
  amountValue: bigint;
  amountScale: number;
  amountAsset: string;
  baseValue: bigint | null;
  cash: boolean;
  counterparty: string | null;
  country: string | null;
  corridor: string | null;
}

// Values of the VALUES list are read by each column's own text parser (not as SQL expressions),
// so money is written as its plain digits and read as a Decimal, never through a Float64.
export function insertSql(table: Sql, rows: InsertRow[]): Sql {
  const values = rows.map(
    (r) =>
      sql`(${r.tenantId}, ${r.kind}, ${r.subjectId}, ${r.movementId}, ${r.direction}, ${r.occurredMs}, ${r.eventId}, ${r.amountValue}, ${r.amountScale}, ${r.amountAsset}, ${r.baseValue !== null}, ${r.baseValue ?? 0n}, ${r.cash}, ${r.counterparty}, ${r.country}, ${r.corridor})`,
  );
  return sql`INSERT INTO ${table} ${INSERT_COLUMNS} VALUES ${values}`;
}

// The stored identities among those of these subjects and movement ids: a superset of the
// batch's identities that are stored (the caller matches exact keys). Any copy will do: no dedup.
export function existingSql(table: Sql, subjects: Subject[], movementIds: string[]): Sql {
  return sql`SELECT tenant_id AS t, toString(subject_kind) AS k, subject_id AS s, movement_id AS m, toString(direction) AS d
  FROM ${table}
 WHERE ${subjectsFilter(subjects)} AND movement_id IN (${unique(movementIds)})`;
}

// The store's tables: activities, and the movements whose activities are retracted (port.ts,
// Retraction). A retracted activity may still be a row of agg_activity (recorded before its
// retraction, or after it by another process): every read leaves it out (kept, keptOf).
export interface Tables {
  activity: Sql;
  retraction: Sql;
}

function subjectFilter(subject: Subject): Sql {
  return sql`tenant_id = ${subject.tenantId} AND subject_kind = ${subject.kind} AND subject_id = ${subject.id}`;
}

// Every row of these subjects (exactly, with one tenant and one kind; else a superset).
function subjectsFilter(subjects: Subject[]): Sql {
  const tenants = unique(subjects.map((subject) => subject.tenantId));
  const kinds = unique(subjects.map((subject) => subject.kind));
  const ids = unique(subjects.map((subject) => subject.id));
  return sql`tenant_id IN (${tenants}) AND subject_kind IN (${kinds}) AND subject_id IN (${ids})`;
}

// The subject's rows that are not retracted. The retractions are read by tenant, a range of their
// table's key; a tuple NOT IN is a set lookup per row.
function kept(tables: Tables, subject: Subject): Sql {
  return sql`${subjectFilter(subject)} AND ${notRetracted(tables, [subject.tenantId])}`;
}

function keptOf(tables: Tables, subjects: Subject[]): Sql {
  return sql`${subjectsFilter(subjects)} AND ${notRetracted(tables, subjects.map((subject) => subject.tenantId))}`;
}

function notRetracted(tables: Tables, tenants: string[]): Sql {
  return sql`(tenant_id, movement_id) NOT IN (SELECT tenant_id, movement_id FROM ${tables.retraction} WHERE tenant_id IN (${unique(tenants)}))`;
}

// The retractions as rows of agg_retraction.
export function insertRetractionsSql(table: Sql, retractions: Retraction[]): Sql {
  const values = retractions.map((r) => sql`(${r.tenantId}, ${r.movementId}, ${r.by})`);
  return sql`INSERT INTO ${table} (tenant_id, movement_id, retracted_by) VALUES ${values}`;
}

// Which of these movements of these tenants are retracted (a superset: the caller matches pairs).
export function retractedSql(table: Sql, tenants: string[], movementIds: string[]): Sql {
  return sql`SELECT DISTINCT tenant_id AS t, movement_id AS m FROM ${table} WHERE tenant_id IN (${unique(tenants)}) AND movement_id IN (${unique(movementIds)})`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

// The rows matching `where`, one per activity identity, with the identity columns and `columns`
// (which must not repeat them).
function activityRows(tables: Tables, where: Sql, columns: Sql): Sql {
  return sql`(
    SELECT ${IDENTITY}, ${columns}
      FROM ${tables.activity}
     WHERE ${where}
     LIMIT 1 BY ${IDENTITY}
  )`;
}

// The round test of the windows (stats.ts, roundTest): an amount is round when value * 10^d is a
// multiple of U * 10^scale (units = U / 10^d major units), that is when value is a multiple of
// M(scale) = U * 10^scale / gcd(U * 10^scale, 10^d). moduli[s] is M(s) for each scale whose
// M(s) fits a Decimal(38, 0); past them only 0 is round (no stored amount reaches M).
export interface RoundModuli {
  moduli: bigint[];
}

export function roundModuli(units: number): RoundModuli {
  const { scaled, decimals } = roundUnitsFraction(units);
  const tens = 10n ** decimals;
  const moduli: bigint[] = [];
  for (let scale = 0; scale < 256; scale++) {
    const m = scaled * 10n ** BigInt(scale);
    const modulus = m / gcd(m, tens);
    if (modulus > DECIMAL_LIMIT) break;
    moduli.push(modulus);
  }
  return { moduli };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

// Whether the row's amount is round, as a column of the inner select (computed once per row).
// Both branches of if() are evaluated on every row, so the modulus is looked up with the scale
// clamped into the list (never 0, never out of range). The moduli travel as one array of digit
// strings (one literal: cheap to parse), each made a Decimal(38, 0) on use.
function roundColumn(round: RoundModuli): Sql {
  if (round.moduli.length === 0) return sql`amount_value = ${decimal(0n)} AS is_round`;
  const digits = round.moduli.map((modulus) => modulus.toString());
  return sql`toDecimal128(arrayElement([${digits}], least(amount_scale, ${round.moduli.length - 1}) + 1), 0) AS round_modulus,
           if(amount_scale >= ${round.moduli.length}, amount_value = ${decimal(0n)}, (amount_value / round_modulus) * round_modulus = amount_value) AS is_round`;
}

// The subject's activities in (min from, at], each repeated once per window that contains it (w
// is the 1-based position of the window in `froms`).
function placed(tables: Tables, subject: Subject, froms: number[], at: number, columns: Sql): Sql {
  const min = Math.min(...froms);
  const memberships = froms.map((from, i) => sql`if(occurred_ms > ${from}, ${i + 1}, 0)`);
  const where = sql`${kept(tables, subject)} AND occurred_ms > ${min} AND occurred_ms <= ${at}`;
  return sql`${activityRows(tables, where, sql`occurred_ms, ${columns}`)} ARRAY JOIN arrayFilter(x -> x != 0, [${memberships}]) AS w`;
}

// One row per window with any activity: flows, distinct counterparties, round amounts and the
// threshold bands (b<i>_count, b<i>_sum for the i-th band asked, from 0). Bands compare base
// amounts, so unpriced activities are never "just below" a threshold.
export function windowFlowsSql(tables: Tables, subject: Subject, froms: number[], at: number, bands: Band[], round: RoundModuli): Sql {
  const bandFlags = bands.map((band, i) => sql`priced = 1 AND base_value >= ${decimal(band.low)} AND base_value < ${decimal(band.high)} AS ${identifier(`in_b${i}`)}`);
  const bandColumns = bands.map((_, i) => {
    const flag = identifier(`in_b${i}`);
    return sql`countIf(${flag}) AS ${identifier(`b${i}_count`)}, sumIf(base_value, ${flag}) AS ${identifier(`b${i}_sum`)}`;
  });
  const columns = sql`priced, base_value, cash, counterparty, amount_value, amount_scale,
           ${roundColumn(round)}${bands.length > 0 ? sql`, ${bandFlags}` : sql``}`;
  return sql`SELECT w,
       countIf(direction = 'in') AS in_count, sumIf(base_value, direction = 'in') AS in_sum,
       countIf(direction = 'in' AND priced = 0) AS in_unpriced,
       countIf(direction = 'in' AND cash = 1) AS in_cash_count, sumIf(base_value, direction = 'in' AND cash = 1) AS in_cash_sum,
       countIf(direction = 'out') AS out_count, sumIf(base_value, direction = 'out') AS out_sum,
       countIf(direction = 'out' AND priced = 0) AS out_unpriced,
       countIf(direction = 'out' AND cash = 1) AS out_cash_count, sumIf(base_value, direction = 'out' AND cash = 1) AS out_cash_sum,
       uniqExactIf(counterparty, direction = 'in') AS counterparties_in,
       uniqExactIf(counterparty, direction = 'out') AS counterparties_out,
       uniqExact(counterparty) AS counterparties_total,
       countIf(is_round) AS round_count, sumIf(base_value, is_round) AS round_sum${bands.length > 0 ? sql`, ${bandColumns}` : sql``}
  FROM ${placed(tables, subject, froms, at, columns)}
 GROUP BY w`;
}

// Per window, activity by counterparty country (dimension 1) and by corridor (dimension 2).
export function windowGroupsSql(tables: Tables, subject: Subject, froms: number[], at: number): Sql {
  const columns = sql`base_value, counterparty_country, corridor`;
  return sql`SELECT w, 1 AS dimension, assumeNotNull(counterparty_country) AS key, count() AS n, sum(base_value) AS total
  FROM ${placed(tables, subject, froms, at, columns)}
 WHERE counterparty_country IS NOT NULL
 GROUP BY w, key
UNION ALL
SELECT w, 2 AS dimension, assumeNotNull(corridor) AS key, count() AS n, sum(base_value) AS total
  FROM ${placed(tables, subject, froms, at, columns)}
 WHERE corridor IS NOT NULL
 GROUP BY w, key`;
}

// part 1: the first sighting (all time, up to at) of each counterparty first seen after `after`;
// part 2 (absent without activity): the latest activity up to at.
export function windowSightingsSql(tables: Tables, subject: Subject, after: number, at: number): Sql {
  return sql`SELECT 1 AS part, min(occurred_ms) AS t
  FROM ${tables.activity}
 WHERE ${kept(tables, subject)} AND occurred_ms <= ${at} AND counterparty IS NOT NULL
 GROUP BY counterparty
HAVING t > ${after}
UNION ALL
SELECT 2 AS part, max(occurred_ms) AS t
  FROM ${tables.activity}
 WHERE ${kept(tables, subject)} AND occurred_ms <= ${at}
HAVING count() > 0`;
}

// Daily sums and counts per UTC day before `to` (ms, a day start). Days before `earliestDay` are
// folded into one bucket, earliestDay - 1, which only tells that there was earlier activity.
export function baselineSql(tables: Tables, subject: Subject, earliestDay: number, to: number): Sql {
  const rows = activityRows(tables, sql`${kept(tables, subject)} AND occurred_ms < ${to}`, sql`occurred_ms, base_value`);
  return sql`SELECT greatest(intDiv(occurred_ms, ${DAY_MS}) - (occurred_ms % ${DAY_MS} < 0), ${earliestDay - 1}) AS d,
       countIf(direction = 'in') AS in_count, sumIf(base_value, direction = 'in') AS in_sum,
       countIf(direction = 'out') AS out_count, sumIf(base_value, direction = 'out') AS out_sum
  FROM ${rows}
 GROUP BY d`;
}

export function lastActivitySql(tables: Tables, subject: Subject, before: number | undefined): Sql {
  const bound = before === undefined ? sql`` : sql` AND occurred_ms < ${before}`;
  return sql`SELECT max(occurred_ms) AS t, count() AS n FROM ${tables.activity} WHERE ${kept(tables, subject)}${bound}`;
}

export function counterpartySql(tables: Tables, subject: Subject, counterparty: string, at: number | undefined): Sql {
  const bound = at === undefined ? sql`` : sql` AND occurred_ms <= ${at}`;
  const rows = activityRows(tables, sql`${kept(tables, subject)} AND counterparty = ${counterparty}${bound}`, sql`occurred_ms, base_value`);
  return sql`SELECT count() AS n, min(occurred_ms) AS first_at, max(occurred_ms) AS last_at, sum(base_value) AS total FROM ${rows}`;
}

// An activity as listed (besides movement_id and direction, which are identity columns).
const LISTED_COLUMNS = sql`occurred_ms, amount_value, amount_scale, amount_asset, priced, base_value, cash, counterparty, counterparty_country, corridor`;
const LISTED = sql`occurred_ms, movement_id, toString(direction) AS dir, amount_value, amount_scale, amount_asset, priced, base_value,
       cash, counterparty, counterparty_country, corridor`;

// Latest first: occurred_ms, then movement id descending (bytes, as PostgreSQL's C collation),
// then direction ('in' before 'out', the enum's order).
export function activitiesSql(tables: Tables, subject: Subject, from: number, to: number, direction: 'in' | 'out' | undefined, limit: number): Sql {
  const only = direction === undefined ? sql`` : sql` AND direction = ${direction}`;
  const rows = activityRows(tables, sql`${kept(tables, subject)} AND occurred_ms > ${from} AND occurred_ms <= ${to}${only}`, LISTED_COLUMNS);
  return sql`SELECT ${LISTED}
  FROM ${rows}
 ORDER BY occurred_ms DESC, movement_id DESC, direction
 LIMIT ${limit}`;
}

export interface SnapshotAsk {
  i: number;
  subject: Subject;
  from: number;
  to: number;
}

// The requests as a table (i, t, k, s, f, a), typed explicitly (an array of tuple literals would
// take its element types from the literals, and a negative next to a large time has no common type).
function askTable(asks: SnapshotAsk[]): Sql {
  const tuples = asks.map(
    (ask) => sql`(toUInt32(${ask.i}), ${ask.subject.tenantId}, ${ask.subject.kind}, ${ask.subject.id}, toInt64(${ask.from}), toInt64(${ask.to}))`,
  );
  return sql`(
    SELECT tupleElement(r, 1) AS i, tupleElement(r, 2) AS t, tupleElement(r, 3) AS k, tupleElement(r, 4) AS s,
           tupleElement(r, 5) AS f, tupleElement(r, 6) AS a
      FROM (SELECT arrayJoin([${tuples}]) AS r)
  )`;
}

function span(asks: SnapshotAsk[]): { from: number; to: number } {
  return { from: Math.min(...asks.map((ask) => ask.from)), to: Math.max(...asks.map((ask) => ask.to)) };
}

// At most `limit` rows of each request in (f, a], latest first, each with its request's position.
export function snapshotRowsSql(tables: Tables, asks: SnapshotAsk[], limit: number): Sql {
  const { from, to } = span(asks);
  const where = sql`${keptOf(tables, asks.map((ask) => ask.subject))} AND occurred_ms > ${from} AND occurred_ms <= ${to}`;
  return sql`SELECT i, ${LISTED}
  FROM (
    SELECT tenant_id AS t, toString(subject_kind) AS k, subject_id AS s, movement_id, direction, ${LISTED_COLUMNS}
      FROM ${activityRows(tables, where, LISTED_COLUMNS)}
  ) ALL INNER JOIN ${askTable(asks)} USING (t, k, s)
 WHERE occurred_ms > f AND occurred_ms <= a
 ORDER BY i, occurred_ms DESC, movement_id DESC, direction
 LIMIT ${limit} BY i`;
}

// Per request with any activity in (f, a]: the latest there (asked as SnapshotAsk ranges).
export function latestWithinSql(tables: Tables, asks: SnapshotAsk[]): Sql {
  const { from, to } = span(asks);
  return sql`SELECT i, max(occurred_ms) AS latest
  FROM (
    SELECT tenant_id AS t, toString(subject_kind) AS k, subject_id AS s, occurred_ms
      FROM ${tables.activity}
     WHERE ${keptOf(tables, asks.map((ask) => ask.subject))} AND occurred_ms > ${from} AND occurred_ms <= ${to}
  ) ALL INNER JOIN ${askTable(asks)} USING (t, k, s)
 WHERE occurred_ms > f AND occurred_ms <= a
 GROUP BY i`;
}

// Per request with any activity: its first activity (all time) and its latest at or before f
// (n_before = 0: none). No dedup: min and max do not change with a duplicate.
export function snapshotFactsSql(tables: Tables, asks: SnapshotAsk[]): Sql {
  return sql`SELECT i, min(occurred_ms) AS first_at, maxIf(occurred_ms, occurred_ms <= f) AS last_before, countIf(occurred_ms <= f) AS n_before
  FROM (
    SELECT tenant_id AS t, toString(subject_kind) AS k, subject_id AS s, occurred_ms
      FROM ${tables.activity}
     WHERE ${keptOf(tables, asks.map((ask) => ask.subject))}
  ) ALL INNER JOIN ${askTable(asks)} USING (t, k, s)
 GROUP BY i`;
}

// When each counterparty of these subjects with activity in (from, to] was first seen with the
// subject, all time (a superset of the counterparties of the snapshots' rows; the caller picks
// those it needs by exact key). Needs no list of pairs, so it runs beside the rows, not after them.
export function firstSightingsSql(tables: Tables, asks: SnapshotAsk[]): Sql {
  const { from, to } = span(asks);
  return sql`SELECT tenant_id AS t, toString(subject_kind) AS k, subject_id AS s, assumeNotNull(counterparty) AS c, min(occurred_ms) AS first_at
  FROM ${tables.activity}
 WHERE ${keptOf(tables, asks.map((ask) => ask.subject))} AND counterparty IS NOT NULL
 GROUP BY t, k, s, c
HAVING countIf(occurred_ms > ${from} AND occurred_ms <= ${to}) > 0`;
}

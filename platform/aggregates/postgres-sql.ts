// The SQL of the PostgreSQL aggregate store (postgres.ts), with the shapes of the rows it
// returns. Every statement filters on tenant_id and the subject first, so it reads one index
// range of agg_activity. Sums leave the database as text (numeric → string → bigint): money
// never passes through a JavaScript number.

// Recording locks its batch's tenants first (platform/postgres/tenant-locks.ts), in this
// advisory-lock namespace: a tenant with a retraction exclusively, the others shared. A retraction
// must see every activity of its tenant being recorded at that moment, to delete it, and a
// recording must see every retraction committed before it checks.
export const RECORDING_LOCK_NAMESPACE = 0x0a99;

// $1 is one JSON document with every activity of the batch (parsed in C, like the canonical
// writers; as json, not jsonb, so it is read row by row without first building a binary copy),
// its keys one letter long: they repeat in every row, and a batch is thousands of rows.
// Rows are inserted in primary-key order, in the database's own collation, so two concurrent
// batches touching the same keys take their locks in one order and cannot deadlock.
// Activities of a retracted movement are not recorded, and those already stored are skipped.
const INSERT_ACTIVITIES = `
INSERT INTO agg_activity (tenant_id, subject_kind, subject_id, occurred_at, movement_id, direction, event_id,
                          amount_value, amount_scale, amount_asset, base_value, cash, counterparty, counterparty_country, corridor)
SELECT t, k, s, o, m, d, e, v, sc, a, b, c, cp, cc, co
  FROM json_to_recordset($1::json) AS r(t text, k text, s text, o timestamptz, m text, d text, e uuid, v numeric, sc smallint,
       a text, b numeric, c boolean, cp text, cc text, co text)
 WHERE NOT EXISTS (SELECT 1 FROM agg_retraction x WHERE x.tenant_id = r.t AND x.movement_id = r.m)`;
const ON_CONFLICT = `
 ORDER BY t, k, s, o, m, d
    ON CONFLICT (tenant_id, subject_kind, subject_id, occurred_at, movement_id, direction) DO NOTHING`;

export const RECORD_SQL = INSERT_ACTIVITIES + ON_CONFLICT;

// RECORD_SQL with the retractions of $2 (RetractionRow): each retracted movement's activities are
// deleted and its retraction kept (once: a redelivered one changes nothing), with the subjects
// whose activities went. The statement's parts share one snapshot, so the activities of a
// movement retracted in this same batch are skipped by the last clause, not by the table.
export const RECORD_RETRACTING_SQL = `
WITH retracting AS (
  SELECT t AS tenant_id, m AS movement_id, b AS retracted_by FROM json_to_recordset($2::json) AS j(t text, m text, b text)
), deleted AS (
  DELETE FROM agg_activity a USING retracting x WHERE a.tenant_id = x.tenant_id AND a.movement_id = x.movement_id
  RETURNING a.tenant_id, a.movement_id, a.subject_kind || ':' || a.subject_id AS subject
), retracted AS (
  INSERT INTO agg_retraction (tenant_id, movement_id, retracted_by, subjects)
  SELECT x.tenant_id, x.movement_id, min(x.retracted_by),
         coalesce((SELECT array_agg(DISTINCT d.subject ORDER BY d.subject) FROM deleted d WHERE d.tenant_id = x.tenant_id AND d.movement_id = x.movement_id), '{}')
    FROM retracting x
   GROUP BY x.tenant_id, x.movement_id
      ON CONFLICT (tenant_id, movement_id) DO NOTHING
)${INSERT_ACTIVITIES}
   AND NOT EXISTS (SELECT 1 FROM retracting x WHERE x.tenant_id = r.t AND x.movement_id = r.m)${ON_CONFLICT}`;

// One retraction in RECORD_RETRACTING_SQL's document.
export interface RetractionRow {
  t: string; // tenant_id
  m: string; // the retracted movement
  b: string; // the correction
}

// One activity in RECORD_SQL's document.
export interface RecordRow {
  t: string; // tenant_id
  k: string; // subject_kind
  s: string; // subject_id
  o: string; // occurred_at
  m: string; // movement_id
  d: 'in' | 'out'; // direction
  e: string; // event_id
  v: string; // amount_value
  sc: number; // amount_scale
  a: string; // amount_asset
  b: string | null; // base_value
  c: boolean; // cash
  cp: string | null; // counterparty
  cc: string | null; // counterparty_country
  co: string | null; // corridor
}

// Every window asked, in one statement. $1-$3 subject, $4/$5 the windows' names and starts
// (each window is (from, $6]), $6 at, $7 the round unit in major units, $8/$9 the threshold bands.
// The subject's rows over the longest window are read once (scope); each row is then placed in
// every window that contains it, and everything is grouped per window.
export const WINDOWS_SQL = `
WITH windows AS (
  SELECT name, from_at FROM unnest($4::text[], $5::timestamptz[]) AS w(name, from_at)
),
scope AS MATERIALIZED (
  SELECT occurred_at, direction, amount_value, amount_scale, base_value, cash, counterparty, counterparty_country, corridor
    FROM agg_activity
   WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3
     AND occurred_at > (SELECT min(from_at) FROM windows) AND occurred_at <= $6::timestamptz
),
placed AS MATERIALIZED (
  SELECT w.name AS win, s.* FROM windows w JOIN scope s ON s.occurred_at > w.from_at
),
-- When each counterparty of the range was first seen with this subject, over ALL time (an index
-- probe each, on agg_activity_counterparty): seen before a window means not new in it.
first_seen AS MATERIALIZED (
  SELECT c.counterparty,
         (SELECT min(f.occurred_at) FROM agg_activity f
           WHERE f.tenant_id = $1 AND f.subject_kind = $2 AND f.subject_id = $3 AND f.counterparty = c.counterparty) AS first_at
    FROM (SELECT DISTINCT counterparty FROM scope WHERE counterparty IS NOT NULL) c
),
flows AS (
  SELECT win,
         count(*) FILTER (WHERE direction = 'in') AS in_count,
         sum(base_value) FILTER (WHERE direction = 'in') AS in_sum,
         count(*) FILTER (WHERE direction = 'in' AND base_value IS NULL) AS in_unpriced,
         count(*) FILTER (WHERE direction = 'in' AND cash) AS in_cash_count,
         sum(base_value) FILTER (WHERE direction = 'in' AND cash) AS in_cash_sum,
         count(*) FILTER (WHERE direction = 'out') AS out_count,
         sum(base_value) FILTER (WHERE direction = 'out') AS out_sum,
         count(*) FILTER (WHERE direction = 'out' AND base_value IS NULL) AS out_unpriced,
         count(*) FILTER (WHERE direction = 'out' AND cash) AS out_cash_count,
         sum(base_value) FILTER (WHERE direction = 'out' AND cash) AS out_cash_sum,
         count(DISTINCT counterparty) FILTER (WHERE direction = 'in') AS counterparties_in,
         count(DISTINCT counterparty) FILTER (WHERE direction = 'out') AS counterparties_out,
         count(DISTINCT counterparty) AS counterparties_total,
         -- Round on the amount as sent: a whole multiple of $7 major units of its own asset.
         count(*) FILTER (WHERE amount_value % ($7::numeric * 10::numeric ^ amount_scale) = 0) AS round_count,
         sum(base_value) FILTER (WHERE amount_value % ($7::numeric * 10::numeric ^ amount_scale) = 0) AS round_sum
    FROM placed
   GROUP BY win
),
groups AS (
  SELECT win, 'country' AS dimension, counterparty_country AS key, count(*) AS n, sum(base_value) AS total
    FROM placed WHERE counterparty_country IS NOT NULL GROUP BY win, counterparty_country
  UNION ALL
  SELECT win, 'corridor', corridor, count(*), sum(base_value)
    FROM placed WHERE corridor IS NOT NULL GROUP BY win, corridor
),
-- Bands compare base amounts, so unpriced activities are never "just below" a threshold.
bands AS MATERIALIZED (
  SELECT p.win, b.band, count(*) AS n, sum(p.base_value) AS total
    FROM placed p
    JOIN unnest($8::numeric[], $9::numeric[]) WITH ORDINALITY AS b(threshold, margin, band)
      ON p.base_value >= b.threshold - b.margin AND p.base_value < b.threshold
   GROUP BY p.win, b.band
)
SELECT w.name,
       coalesce(f.in_count, 0)::int AS in_count, coalesce(f.in_sum, 0)::text AS in_sum,
       coalesce(f.in_unpriced, 0)::int AS in_unpriced, coalesce(f.in_cash_count, 0)::int AS in_cash_count,
       coalesce(f.in_cash_sum, 0)::text AS in_cash_sum,
       coalesce(f.out_count, 0)::int AS out_count, coalesce(f.out_sum, 0)::text AS out_sum,
       coalesce(f.out_unpriced, 0)::int AS out_unpriced, coalesce(f.out_cash_count, 0)::int AS out_cash_count,
       coalesce(f.out_cash_sum, 0)::text AS out_cash_sum,
       coalesce(f.counterparties_in, 0)::int AS counterparties_in, coalesce(f.counterparties_out, 0)::int AS counterparties_out,
       coalesce(f.counterparties_total, 0)::int AS counterparties_total,
       coalesce(f.round_count, 0)::int AS round_count, coalesce(f.round_sum, 0)::text AS round_sum,
       (SELECT count(*) FROM first_seen s WHERE s.first_at > w.from_at)::int AS first_seen,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key', g.key, 'count', g.n, 'sum', coalesce(g.total, 0)::text) ORDER BY g.n DESC, g.key), '[]')
          FROM groups g WHERE g.win = w.name AND g.dimension = 'country') AS countries,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key', g.key, 'count', g.n, 'sum', coalesce(g.total, 0)::text) ORDER BY g.n DESC, g.key), '[]')
          FROM groups g WHERE g.win = w.name AND g.dimension = 'corridor') AS corridors,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('band', b.band, 'count', b.n, 'sum', coalesce(b.total, 0)::text)), '[]')
          FROM bands b WHERE b.win = w.name) AS bands,
       (SELECT max(occurred_at) FROM agg_activity
         WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND occurred_at <= $6::timestamptz) AS last_activity_at
  FROM windows w
  LEFT JOIN flows f ON f.win = w.name`;

export interface GroupJson {
  key: string;
  count: number;
  sum: string;
}

export interface WindowRow {
  name: string;
  in_count: number;
  in_sum: string;
  in_unpriced: number;
  in_cash_count: number;
  in_cash_sum: string;
  out_count: number;
  out_sum: string;
  out_unpriced: number;
  out_cash_count: number;
  out_cash_sum: string;
  counterparties_in: number;
  counterparties_out: number;
  counterparties_total: number;
  round_count: number;
  round_sum: string;
  first_seen: number;
  countries: GroupJson[];
  corridors: GroupJson[];
  // band is the 1-based position of the ThresholdBand asked for; bands without activity are absent.
  bands: Array<{ band: number; count: number; sum: string }>;
  last_activity_at: Date | null;
}

// Daily sums and counts per UTC day over [from, to): $4 the earliest day allowed, $5 the start of
// the day of `at`. The span starts at the later of $4 and the UTC day of the subject's first
// activity; days without activity are zero-filled by the generated series. Money statistics are
// computed on exact numerics and rounded half away from zero (PostgreSQL's round(numeric)).
export const BASELINE_SQL = `
WITH first AS (
  SELECT date_trunc('day', min(occurred_at), 'UTC') AS first_day
    FROM agg_activity
   WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND occurred_at < $5::timestamptz
),
span AS (
  SELECT greatest($4::timestamptz, first_day) AS from_at FROM first WHERE first_day IS NOT NULL
),
days AS (
  -- 24 hours, not '1 day': a day interval follows the session time zone's daylight saving.
  SELECT generate_series(from_at, $5::timestamptz - interval '24 hours', interval '24 hours') AS day FROM span
),
daily AS (
  SELECT date_trunc('day', occurred_at, 'UTC') AS day,
         coalesce(sum(base_value) FILTER (WHERE direction = 'in'), 0) AS in_sum,
         count(*) FILTER (WHERE direction = 'in') AS in_count,
         coalesce(sum(base_value) FILTER (WHERE direction = 'out'), 0) AS out_sum,
         count(*) FILTER (WHERE direction = 'out') AS out_count
    FROM agg_activity
   WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3
     AND occurred_at >= (SELECT from_at FROM span) AND occurred_at < $5::timestamptz
   GROUP BY 1
)
SELECT (SELECT from_at FROM span) AS from_at,
       count(*)::int AS days,
       round(avg(coalesce(d.in_sum, 0)))::text AS in_mean_sum,
       round(stddev_pop(coalesce(d.in_sum, 0)))::text AS in_stddev_sum,
       max(coalesce(d.in_sum, 0))::text AS in_max_sum,
       avg(coalesce(d.in_count, 0))::float8 AS in_mean_count,
       stddev_pop(coalesce(d.in_count, 0))::float8 AS in_stddev_count,
       round(avg(coalesce(d.out_sum, 0)))::text AS out_mean_sum,
       round(stddev_pop(coalesce(d.out_sum, 0)))::text AS out_stddev_sum,
       max(coalesce(d.out_sum, 0))::text AS out_max_sum,
       avg(coalesce(d.out_count, 0))::float8 AS out_mean_count,
       stddev_pop(coalesce(d.out_count, 0))::float8 AS out_stddev_count
  FROM days
  LEFT JOIN daily d USING (day)`;

// Statistics are null when there are no days.
export interface BaselineRow {
  from_at: Date | null;
  days: number;
  in_mean_sum: string | null;
  in_stddev_sum: string | null;
  in_max_sum: string | null;
  in_mean_count: number | null;
  in_stddev_count: number | null;
  out_mean_sum: string | null;
  out_stddev_sum: string | null;
  out_max_sum: string | null;
  out_mean_count: number | null;
  out_stddev_count: number | null;
}

// $4: strictly before this instant ('infinity' for any time).
export const LAST_ACTIVITY_SQL = `
SELECT max(occurred_at) AS last_at FROM agg_activity
 WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND occurred_at < $4::timestamptz`;

// Each request's latest activity in (f, u]: $1 is a JSON array of requests {i: position, t, k,
// s: the subject, f, u}. A row per request with any there.
export const LATEST_WITHIN_SQL = `
SELECT r.i, x.occurred_at AS latest_at
  FROM json_to_recordset($1::json) AS r(i int, t text, k text, s text, f timestamptz, u timestamptz)
 CROSS JOIN LATERAL (
   SELECT occurred_at FROM agg_activity
    WHERE tenant_id = r.t AND subject_kind = r.k AND subject_id = r.s AND occurred_at > r.f AND occurred_at <= r.u
    ORDER BY occurred_at DESC
    LIMIT 1
 ) x`;

// $4 the counterparty key, $5: up to and including this instant ('infinity' for all).
export const COUNTERPARTY_SQL = `
SELECT min(occurred_at) AS first_at, max(occurred_at) AS last_at, count(*)::int AS n, coalesce(sum(base_value), 0)::text AS total
  FROM agg_activity
 WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND counterparty = $4 AND occurred_at <= $5::timestamptz`;

export interface CounterpartyRow {
  first_at: Date | null;
  last_at: Date | null;
  n: number;
  total: string;
}

// $4/$5 the window (from, to], $6 a direction or NULL for both, $7 the limit; latest first.
export const ACTIVITIES_SQL = `
SELECT occurred_at, movement_id, direction, amount_value::text, amount_scale, amount_asset, base_value::text,
       cash, counterparty, counterparty_country, corridor
  FROM agg_activity
 WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND occurred_at > $4 AND occurred_at <= $5
   AND ($6::text IS NULL OR direction = $6)
 ORDER BY occurred_at DESC, movement_id DESC, direction
 LIMIT $7`;

export interface ActivityRow {
  occurred_at: Date;
  movement_id: string;
  direction: 'in' | 'out';
  amount_value: string;
  amount_scale: number;
  amount_asset: string;
  base_value: string | null;
  cash: boolean;
  counterparty: string | null;
  counterparty_country: string | null;
  corridor: string | null;
}

// Snapshots (snapshot.ts) of many subjects in two statements. $1 is a JSON array of requests
// {i: position, t, k, s: the subject, f/a: the range (f, a]}. SNAPSHOT_ROWS_SQL lists at most
// $2 + 1 rows per request (one more than the cap tells an incomplete snapshot). SNAPSHOT_FACTS_SQL
// adds the all-time facts: a row per request (c null) with its first activity and its latest at
// or before f, and a row per pair in $2 ({i, c}: a counterparty of the request's rows, listed by
// the caller for complete snapshots only) with when that counterparty was first seen.
export const SNAPSHOT_ROWS_SQL = `
SELECT r.i, x.occurred_at, x.movement_id, x.direction, x.amount_value::text, x.amount_scale, x.amount_asset,
       x.base_value::text, x.cash, x.counterparty, x.counterparty_country, x.corridor
  FROM json_to_recordset($1::json) AS r(i int, t text, k text, s text, f timestamptz, a timestamptz)
 CROSS JOIN LATERAL (
   SELECT * FROM agg_activity
    WHERE tenant_id = r.t AND subject_kind = r.k AND subject_id = r.s AND occurred_at > r.f AND occurred_at <= r.a
    -- The key's own order, read backwards: no sort per subject. Listings put 'in' before 'out'
    -- (snapshotOf sorts the rows so); here the order only picks which rows a capped snapshot
    -- keeps, and a capped snapshot answers nothing.
    ORDER BY occurred_at DESC, movement_id DESC, direction DESC
    LIMIT $2::int + 1
 ) x`;

export interface SnapshotRowsRow extends ActivityRow {
  i: number;
}

// Each request's own all-time facts, and the first sighting of each counterparty asked for ($2)
// whose subject had activity at or before the range's start: without any, a counterparty's first
// sighting is its earliest row in the (complete) snapshot, and the caller takes it from there.
export const SNAPSHOT_FACTS_SQL = `
WITH r AS MATERIALIZED (
  SELECT * FROM json_to_recordset($1::json) AS r(i int, t text, k text, s text, f timestamptz, a timestamptz)
),
own AS MATERIALIZED (
  SELECT r.i, r.t, r.k, r.s,
         (SELECT min(occurred_at) FROM agg_activity
           WHERE tenant_id = r.t AND subject_kind = r.k AND subject_id = r.s) AS first_at,
         (SELECT max(occurred_at) FROM agg_activity
           WHERE tenant_id = r.t AND subject_kind = r.k AND subject_id = r.s AND occurred_at <= r.f) AS last_before
    FROM r
)
SELECT own.i, NULL::text AS c, own.first_at, own.last_before FROM own
UNION ALL
SELECT p.i, p.c,
       (SELECT min(f.occurred_at) FROM agg_activity f
         WHERE f.tenant_id = own.t AND f.subject_kind = own.k AND f.subject_id = own.s AND f.counterparty = p.c),
       NULL
  FROM json_to_recordset($2::json) AS p(i int, c text)
  JOIN own ON own.i = p.i
 WHERE own.last_before IS NOT NULL`;

export interface SnapshotFactsRow {
  i: number;
  // Null on the request's own row; else the counterparty whose first sighting first_at is.
  c: string | null;
  first_at: Date | null;
  last_before: Date | null;
}

// The activities of the tenants $1 recorded since an earlier read, and where the next read starts.
// $2 is that read's snapshot (NULL: none, so no rows: only the cursor). A row is new when its
// transaction is not visible in that snapshot: everything below the snapshot's xmin was, so the
// index range starts there. The cursor is this statement's own snapshot (pg_current_snapshot() is
// the snapshot the statement reads with; both branches of one statement read with the same), so
// the rows returned are exactly those it sees and the earlier read did not: nothing is skipped
// however transactions interleave and commit. The cursor comes once, on a row of its own: the
// snapshot's text lists every transaction in progress, and repeated on every activity it was
// shipped and decoded once per row. $3 bounds the activities (NULL: all); one more than the
// caller's limit is asked for, to tell whether there were more.
export const RECORDED_SINCE_SQL = `
SELECT pg_current_snapshot()::text AS cursor, NULL AS tenant_id, NULL AS subject_kind, NULL AS subject_id, NULL AS occurred_at,
       NULL AS movement_id, NULL AS direction, NULL AS amount_value, NULL AS amount_scale, NULL AS amount_asset, NULL AS base_value,
       NULL AS cash, NULL AS counterparty, NULL AS counterparty_country, NULL AS corridor, false AS retracted
UNION ALL
(SELECT NULL, a.tenant_id, a.subject_kind, a.subject_id, a.occurred_at, a.movement_id, a.direction,
        a.amount_value::text, a.amount_scale, a.amount_asset, a.base_value::text, a.cash, a.counterparty,
        a.counterparty_country, a.corridor, false
   FROM agg_activity a
  WHERE a.tenant_id = ANY($1::text[])
    AND a.recorded_xid >= pg_snapshot_xmin($2::pg_snapshot)
    AND NOT pg_visible_in_snapshot(a.recorded_xid, $2::pg_snapshot)
  LIMIT $3)
UNION ALL
SELECT NULL, x.tenant_id, split_part(subject, ':', 1), substr(subject, strpos(subject, ':') + 1), NULL, x.movement_id, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true
  FROM agg_retraction x CROSS JOIN LATERAL unnest(x.subjects) AS subject
 WHERE x.tenant_id = ANY($1::text[])
   AND x.recorded_xid >= pg_snapshot_xmin($2::pg_snapshot)
   AND NOT pg_visible_in_snapshot(x.recorded_xid, $2::pg_snapshot)`;

// One row with only the cursor (every activity column null), a row per new activity (its cursor
// null), and a row per subject of a new retraction (`retracted`: only the subject and the
// movement), in any order.
export interface RecordedSinceRow extends ActivityRow {
  cursor: string | null;
  retracted: boolean;
  tenant_id: string | null;
  subject_kind: 'account' | 'party';
  subject_id: string;
}

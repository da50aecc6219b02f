// The movement items of a reconciliation (those its totals leave out: superseded by a correction,
// cancelled by a reversal pair, in a status not counted), read from a position in (at, event_id)
// order, and nothing written: a listing is a read. Whether a movement is an item can depend on
// another anywhere in the period (a reversal pair's halves), so each read takes the next rows of
// the period and, beside them, only the movements that judge them (the original a row reverses,
// and every reversal of either), and applies the ledger's own rules (ledger.ts) to that part. A
// page reads on from where the last stopped, so a listing reads the period once, never the whole
// period per page or per batch.
import type { Pool, PoolClient } from '../../platform/postgres/pool.ts';
import { definitionRowsSql, entriesSql, entryParams, timeColumn, type Definition } from './ledger.ts';

type Db = Pick<Pool | PoolClient, 'query'>;

// A page's first read takes as many rows as it wants items (at least 100: items are often sparse);
// each further read, the items being sparse there, four times more, up to this.
const MOST_ROWS_PER_READ = 5_000;

export interface MovementItemRow {
  // The position as PostgreSQL writes it, to the microsecond (a Date keeps milliseconds).
  at: string;
  event_id: string;
  external_id: string;
  occurred_at: Date;
  received_at: Date;
  status: string;
  type: string;
  // Signed as it nets in the totals, as text: numeric past 38 digits stays exact.
  value: string;
  reason: 'superseded' | 'reversal_pair' | 'status_not_counted';
  related: string | null;
}

export interface RowPosition {
  at: string | null;
  id: string | null;
}

// Up to `want` items after the position, in order.
export async function movementItemsAfter(db: Db, def: Definition, from: RowPosition, want: number): Promise<MovementItemRow[]> {
  const found: MovementItemRow[] = [];
  let position = from;
  let rows = Math.min(Math.max(want, 100), MOST_ROWS_PER_READ);
  for (;;) {
    const read = await readRows(db, def, position, rows);
    found.push(...read.items);
    if (found.length >= want || !read.end) return found.slice(0, want);
    position = read.end;
    rows = Math.min(rows * 4, MOST_ROWS_PER_READ);
  }
}

// The items among the next `rows` rows of the period; `end` the last row read, null when the
// period had no more.
async function readRows(db: Db, def: Definition, from: RowPosition, rows: number): Promise<{ items: MovementItemRow[]; end: RowPosition | null }> {
  const time = timeColumn(def, 'm');
  const ctes = `
    rows_read AS MATERIALIZED (
      SELECT m.external_id, m.event_id, ${time} AS at, m.data->'links'->>'reverses' AS reverses
        FROM canonical_movements m
       WHERE ${definitionRowsSql(def)} AND ($11::timestamptz IS NULL OR (${time}, m.event_id) > ($11::timestamptz, $12::uuid))
       ORDER BY ${time}, m.event_id LIMIT $13
    ),
    -- What judges them: a row, the original it reverses, and every reversal of either.
    originals AS (SELECT external_id AS id FROM rows_read UNION SELECT reverses FROM rows_read WHERE reverses IS NOT NULL),
    judging AS (
      SELECT id FROM originals
      UNION
      SELECT l.from_id FROM originals o JOIN canonical_movement_links l ON l.tenant_id = $1 AND l.to_id = o.id AND l.relation = 'reverses'
    )`;
  const at = timeColumn(def, 'e');
  const { rows: found } = await db.query<MovementItemRow & { read: number; end_at: string | null; end_id: string | null }>(
    `${entriesSql(def, { ctes, ids: 'judging' })},
     read_end AS (SELECT at, event_id FROM rows_read ORDER BY at DESC, event_id DESC LIMIT 1)
     SELECT (SELECT count(*)::int FROM rows_read) AS read, read_end.at::text AS end_at, read_end.event_id AS end_id, i.*
       FROM (SELECT 1) one
       LEFT JOIN read_end ON true
       LEFT JOIN LATERAL (
         SELECT ${at} AS at_time, ${at}::text AS at, e.event_id, e.external_id, e.occurred_at, e.received_at, e.status, e.type, (e.sign * e.amount_value)::text AS value,
                CASE WHEN e.superseded THEN 'superseded' WHEN e.cancelled THEN 'reversal_pair' ELSE 'status_not_counted' END AS reason,
                coalesce(e.corrected_by, e.reverses, e.reversed_by) AS related
           FROM entries e
          WHERE e.event_id IN (SELECT event_id FROM rows_read)
            AND (e.superseded OR e.cancelled OR NOT (e.status = ANY ($10::text[])))
       ) i ON true
      ORDER BY i.at_time, i.event_id`,
    [...entryParams(def), def.countedStatuses, from.at, from.id, rows],
  );
  const first = found[0]!;
  const items = found
    .filter((row) => row.event_id !== null)
    .map(({ at, event_id, external_id, occurred_at, received_at, status, type, value, reason, related }) => ({ at, event_id, external_id, occurred_at, received_at, status, type, value, reason, related }));
  return { items, end: first.read < rows ? null : { at: first.end_at, id: first.end_id } };
}

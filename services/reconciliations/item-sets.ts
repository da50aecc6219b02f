// The movement items of a reconciliation (those its totals leave out: superseded, cancelled by a
// reversal pair, in a status not counted), as one listing pages through them. Finding them takes
// the whole period (a reversal pair's halves may lie anywhere in it), so they are found a batch at
// a time into a set (migration 0053), and a page reads its rows from the set, in (at, event_id)
// order after its position, with a LIMIT: a listing compares the period once per batch, not once
// per page, and its pages neither repeat nor skip an item while it lasts.
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { entriesSql, entryParams, timeColumn, type Definition } from './ledger.ts';

// Items found per comparison of the period: a page is at most 500 (the CSV's), so a listing of a
// few pages compares once, and a set of a large period grows only as far as it is read.
const ITEMS_PER_BATCH = 5_000;
// A set outlives any listing read in one go; a cursor of a dropped set starts another from its position.
const SET_LIFETIME = '1 hour';

interface SetItemRow {
  // The position as PostgreSQL writes it, to the microsecond (a Date keeps milliseconds).
  at: string;
  event_id: string;
  external_id: string;
  occurred_at: Date;
  received_at: Date;
  status: string;
  type: string;
  value: string;
  reason: 'superseded' | 'reversal_pair' | 'status_not_counted';
  related: string | null;
}

interface ItemSet {
  setId: string;
  throughAt: string | null;
  throughId: string | null;
  complete: boolean;
}

// Up to `rows` items of the set after the position (all but the last of them a page, the last
// saying that there is more), finding more of them as needed. `setId` null, or a set that is
// gone: a new set, holding the items after the position.
export async function movementItemsPage(
  pool: Pool,
  def: Definition,
  reconciliationId: string,
  from: { setId: string | null; at: string | null; id: string | null },
  rows: number,
): Promise<{ setId: string; rows: SetItemRow[] }> {
  let set = (from.setId && (await findSet(pool, def.tenantId, reconciliationId, from.setId))) || (await createSet(pool, def.tenantId, reconciliationId, from));
  for (;;) {
    const found = await readSet(pool, def.tenantId, set.setId, from, rows);
    if (found.length >= rows || set.complete) return { setId: set.setId, rows: found };
    // Dropped meanwhile (it outlived SET_LIFETIME): another, from the page's position.
    set = (await extendSet(pool, def, set)) ?? (await createSet(pool, def.tenantId, reconciliationId, from));
  }
}

async function findSet(db: Pick<Pool, 'query'>, tenantId: string, reconciliationId: string, setId: string): Promise<ItemSet | undefined> {
  const { rows } = await db.query<{ through_at: string | null; through_id: string | null; complete: boolean }>(
    `SELECT through_at::text, through_id, complete FROM reconciliation_item_sets WHERE tenant_id = $1 AND set_id = $2 AND reconciliation_id = $3`,
    [tenantId, setId, reconciliationId],
  );
  const row = rows[0];
  return row && { setId, throughAt: row.through_at, throughId: row.through_id, complete: row.complete };
}

// A set holding nothing yet, from the position on; sets past their lifetime go (with their items).
async function createSet(pool: Pool, tenantId: string, reconciliationId: string, from: { at: string | null; id: string | null }): Promise<ItemSet> {
  await pool.query(`DELETE FROM reconciliation_item_sets WHERE created_at < now() - interval '${SET_LIFETIME}'`);
  const setId = uuidv7(Date.now());
  await pool.query(
    `INSERT INTO reconciliation_item_sets (tenant_id, set_id, reconciliation_id, through_at, through_id) VALUES ($1, $2, $3, $4, $5)`,
    [tenantId, setId, reconciliationId, from.at, from.id],
  );
  return { setId, throughAt: from.at, throughId: from.id, complete: false };
}

async function readSet(db: Pick<Pool, 'query'>, tenantId: string, setId: string, from: { at: string | null; id: string | null }, rows: number): Promise<SetItemRow[]> {
  const { rows: found } = await db.query<SetItemRow>(
    `SELECT at::text, event_id, external_id, occurred_at, received_at, status, type, value, reason, related
       FROM reconciliation_set_items
      WHERE tenant_id = $1 AND set_id = $2 AND ($3::timestamptz IS NULL OR (at, event_id) > ($3::timestamptz, $4::uuid))
      ORDER BY at, event_id LIMIT $5`,
    [tenantId, setId, from.at, from.id, rows],
  );
  return found;
}

// The next batch of items after what the set holds, found over the whole period; undefined when
// the set is gone. The set's row is locked: two pages of one listing extending it at once find
// each batch once.
async function extendSet(pool: Pool, def: Definition, seen: ItemSet): Promise<ItemSet | undefined> {
  return withTransaction(pool, async (db: PoolClient) => {
    const { rows } = await db.query<{ through_at: string | null; through_id: string | null; complete: boolean }>(
      `SELECT through_at::text, through_id, complete FROM reconciliation_item_sets WHERE tenant_id = $1 AND set_id = $2 FOR UPDATE`,
      [def.tenantId, seen.setId],
    );
    const current = rows[0];
    if (!current) return undefined;
    // Another page extended it meanwhile.
    if (current.complete || current.through_id !== seen.throughId) return { setId: seen.setId, throughAt: current.through_at, throughId: current.through_id, complete: current.complete };
    const time = timeColumn(def, 'entries');
    const { rows: added } = await db.query<{ n: number; at: string | null; id: string | null }>(
      `${entriesSql(def)},
       batch AS (
         INSERT INTO reconciliation_set_items (tenant_id, set_id, at, event_id, external_id, occurred_at, received_at, status, type, value, reason, related)
         SELECT $1, $14::uuid, ${time}, event_id, external_id, occurred_at, received_at, status, type, (sign * amount_value)::text,
                CASE WHEN superseded THEN 'superseded' WHEN cancelled THEN 'reversal_pair' ELSE 'status_not_counted' END,
                coalesce(corrected_by, reverses, reversed_by)
           FROM entries
          WHERE (superseded OR cancelled OR NOT (status = ANY ($10::text[])))
            AND ($11::timestamptz IS NULL OR (${time}, event_id) > ($11::timestamptz, $12::uuid))
          ORDER BY ${time}, event_id LIMIT $13
         RETURNING at, event_id
       )
       SELECT (SELECT count(*)::int FROM batch) AS n, last.at::text AS at, last.event_id AS id
         FROM (SELECT 1) one LEFT JOIN (SELECT at, event_id FROM batch ORDER BY at DESC, event_id DESC LIMIT 1) last ON true`,
      [...entryParams(def), def.countedStatuses, seen.throughAt, seen.throughId, ITEMS_PER_BATCH, seen.setId],
    );
    const { n, at, id } = added[0]!;
    const next = { setId: seen.setId, throughAt: at ?? seen.throughAt, throughId: id ?? seen.throughId, complete: n < ITEMS_PER_BATCH };
    await db.query(`UPDATE reconciliation_item_sets SET through_at = $3, through_id = $4, complete = $5 WHERE tenant_id = $1 AND set_id = $2`, [
      def.tenantId,
      seen.setId,
      next.throughAt,
      next.throughId,
      next.complete,
    ]);
    return next;
  });
}

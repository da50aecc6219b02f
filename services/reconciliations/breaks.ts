// Breaks: the work a mismatch makes. A reconciliation that stops matching (or never matched) opens
// a break, at most one unresolved at a time; people acknowledge it, comment on it and resolve it,
// each recorded with who and when. open → acknowledged → resolved (open → resolved directly too);
// a resolved break never changes again. A break whose reconciliation matches again, or is
// corrected by a new declaration, is resolved by the system, saying so. Every statement filters
// on the tenant.
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import type { Money } from '../../schemas/primitives/money.ts';

type Db = Pick<Pool | PoolClient, 'query'>;

const BREAK_STATES = ['open', 'acknowledged', 'resolved'] as const;
export type BreakState = (typeof BREAK_STATES)[number];
const SYSTEM_ACTOR = 'system';

export interface BreakView {
  break_id: string;
  reconciliation_id: string;
  state: BreakState;
  opened_at: string;
  opened_difference: { count: number; sum: Money };
  acknowledged: { by: string; at: string } | null;
  resolved: { by: string; at: string; resolution: string } | null;
  comments: Array<{ by: string; at: string; body: string }>;
}

interface BreakRow {
  tenant_id: string;
  break_id: string;
  reconciliation_id: string;
  state: BreakState;
  opened_at: Date;
  opened_count_difference: string;
  opened_sum_difference: string;
  asset: string;
  scale: number;
  acknowledged_by: string | null;
  acknowledged_at: Date | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  resolution: string | null;
}

// The asset and scale are the reconciliation's, which the difference is of.
const COLUMNS = `b.tenant_id, b.break_id, b.reconciliation_id, b.state, b.opened_at, b.opened_count_difference::text, b.opened_sum_difference::text,
                 b.acknowledged_by, b.acknowledged_at, b.resolved_by, b.resolved_at, b.resolution, r.asset, r.scale`;
const FROM = `reconciliation_breaks b JOIN reconciliations r ON r.tenant_id = b.tenant_id AND r.reconciliation_id = b.reconciliation_id`;

// Opens a break unless one is unresolved already (inside the comparison's transaction).
export async function openBreak(db: Db, tenantId: string, reconciliationId: string, difference: { count: number; sum: string }, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO reconciliation_breaks (tenant_id, break_id, reconciliation_id, state, opened_at, opened_count_difference, opened_sum_difference, updated_at)
     VALUES ($1, $2, $3, 'open', $4, $5, $6, $4)
     ON CONFLICT (reconciliation_id) WHERE state <> 'resolved' DO NOTHING`,
    [tenantId, uuidv7(now.getTime()), reconciliationId, now, difference.count, difference.sum],
  );
}

// Resolves the unresolved break of a reconciliation on the system's behalf.
export async function resolveBySystem(db: Db, tenantId: string, reconciliationId: string, resolution: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE reconciliation_breaks SET state = 'resolved', resolved_by = $3, resolved_at = $4, resolution = $5, updated_at = $4
      WHERE tenant_id = $1 AND reconciliation_id = $2 AND state <> 'resolved'`,
    [tenantId, reconciliationId, SYSTEM_ACTOR, now, resolution],
  );
}

export type BreakActionOutcome = { kind: 'done'; view: BreakView } | { kind: 'not_found' } | { kind: 'invalid_state'; state: BreakState };

// Runs inside an action's transaction once it changed the break, so what the caller keeps of it
// (the console's audit row) commits or rolls back with the action itself.
export type BreakActionRecorder = (db: PoolClient) => Promise<void>;

export class Breaks {
  constructor(private readonly pool: Pool) {}

  // An acknowledgement's note is a comment written in the same transaction: a note is never lost
  // to a failure after the acknowledgement, which a retry would then find already made.
  async acknowledge(tenantId: string, breakId: string, by: string, now: Date, note?: string, record?: BreakActionRecorder): Promise<BreakActionOutcome> {
    return this.act(tenantId, breakId, record, async (db) => {
      const moved = await transition(db, tenantId, breakId, ['open'], `state = 'acknowledged', acknowledged_by = $3, acknowledged_at = $4`, [by, now]);
      if (moved && note !== undefined) await insertComment(db, tenantId, breakId, by, note, now);
      return moved;
    });
  }

  async resolve(tenantId: string, breakId: string, by: string, resolution: string, now: Date, record?: BreakActionRecorder): Promise<BreakActionOutcome> {
    return this.act(tenantId, breakId, record, (db) =>
      transition(db, tenantId, breakId, ['open', 'acknowledged'], `state = 'resolved', resolved_by = $3, resolved_at = $4, resolution = $5`, [by, now, resolution]),
    );
  }

  // A comment on a break in any state (a resolved one included: notes after the fact are kept).
  async comment(tenantId: string, breakId: string, by: string, body: string, now: Date, record?: BreakActionRecorder): Promise<BreakActionOutcome> {
    return this.act(tenantId, breakId, record, (db) => insertComment(db, tenantId, breakId, by, body, now));
  }

  // The change in one transaction with its record; then the break as it stands: unknown, changed,
  // or in a state the change does not apply to.
  private async act(tenantId: string, breakId: string, record: BreakActionRecorder | undefined, change: (db: PoolClient) => Promise<boolean>): Promise<BreakActionOutcome> {
    const changed = await withTransaction(this.pool, async (db) => {
      const done = await change(db);
      if (done) await record?.(db);
      return done;
    });
    const view = await this.find(tenantId, breakId);
    if (!view) return { kind: 'not_found' };
    return changed ? { kind: 'done', view } : { kind: 'invalid_state', state: view.state };
  }

  async find(tenantId: string, breakId: string): Promise<BreakView | undefined> {
    const { rows } = await this.pool.query<BreakRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE b.tenant_id = $1 AND b.break_id = $2`, [tenantId, breakId]);
    return rows[0] && (await this.views(rows))[0];
  }

  // Newest first; `after` is the (opened_at, id) of the last row of the previous page.
  async list(
    tenantId: string,
    filters: { state?: BreakState; reconciliationId?: string },
    limit: number,
    after?: { at: string; id: string },
  ): Promise<Array<BreakView & { cursor: { at: string; id: string } }>> {
    const { rows } = await this.pool.query<BreakRow>(
      `SELECT ${COLUMNS} FROM ${FROM}
        WHERE b.tenant_id = $1 AND ($2::text IS NULL OR b.state = $2) AND ($3::uuid IS NULL OR b.reconciliation_id = $3)
          AND ($4::timestamptz IS NULL OR (b.opened_at, b.break_id) < ($4::timestamptz, $5::uuid))
        ORDER BY b.opened_at DESC, b.break_id DESC LIMIT $6`,
      [tenantId, filters.state ?? null, filters.reconciliationId ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
    const views = await this.views(rows);
    return views.map((view, i) => ({ ...view, cursor: { at: rows[i]!.opened_at.toISOString(), id: rows[i]!.break_id } }));
  }

  private async views(rows: BreakRow[]): Promise<BreakView[]> {
    if (rows.length === 0) return [];
    const { rows: comments } = await this.pool.query<{ break_id: string; author: string; created_at: Date; body: string }>(
      `SELECT break_id, author, created_at, body FROM reconciliation_break_comments
        WHERE tenant_id = $1 AND break_id = ANY ($2::uuid[]) ORDER BY break_id, created_at, comment_id`,
      [rows[0]!.tenant_id, rows.map((r) => r.break_id)],
    );
    return rows.map((row) => ({
      break_id: `${ID_PREFIXES.reconciliationBreak}${row.break_id}`,
      reconciliation_id: `${ID_PREFIXES.reconciliation}${row.reconciliation_id}`,
      state: row.state,
      opened_at: row.opened_at.toISOString(),
      opened_difference: { count: Number(row.opened_count_difference), sum: { value: row.opened_sum_difference, asset: row.asset, scale: row.scale } },
      acknowledged: row.acknowledged_by ? { by: row.acknowledged_by, at: row.acknowledged_at!.toISOString() } : null,
      resolved: row.resolved_by ? { by: row.resolved_by, at: row.resolved_at!.toISOString(), resolution: row.resolution ?? '' } : null,
      comments: comments.filter((c) => c.break_id === row.break_id).map((c) => ({ by: c.author, at: c.created_at.toISOString(), body: c.body })),
    }));
  }
}

async function transition(db: Db, tenantId: string, breakId: string, from: BreakState[], set: string, values: unknown[]): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE reconciliation_breaks SET ${set}, updated_at = $4 WHERE tenant_id = $1 AND break_id = $2 AND state = ANY ($${values.length + 3}::text[])`,
    [tenantId, breakId, ...values, from],
  );
  return (rowCount ?? 0) > 0;
}

async function insertComment(db: Db, tenantId: string, breakId: string, by: string, body: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO reconciliation_break_comments (tenant_id, break_id, comment_id, author, created_at, body)
     SELECT tenant_id, break_id, $3, $4, $5, $6 FROM reconciliation_breaks WHERE tenant_id = $1 AND break_id = $2`,
    [tenantId, breakId, uuidv7(now.getTime()), by, now, body],
  );
  return (rowCount ?? 0) > 0;
}

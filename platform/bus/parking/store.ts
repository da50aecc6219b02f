// The parking lot's table (infra/postgres/0017_parked_records): records a group could not process,
// on either bus, with what the operator does with them. Parking also appends a `failed` stage to
// the record's event, so `GET /v1/events/{id}` shows which stage gave up on it and why.
import { appendStage } from '../../inbox/event-stages.ts';
import { systemClock, type Clock } from '../../clock.ts';
import { withTransaction, type Pool, type PoolClient } from '../../postgres/pool.ts';
import type { BusRecord } from '../port.ts';
import { isTransient } from './transient.ts';

export type ParkedStatus = 'parked' | 'replay_requested' | 'replayed' | 'discarded';
export const PARKED_STATUSES: readonly ParkedStatus[] = ['parked', 'replay_requested', 'replayed', 'discarded'];

export interface ParkedRecord {
  id: string;
  tenantId: string;
  group: string;
  topic: string;
  partition: number;
  offset: string;
  eventId: string | null;
  key: string;
  error: string;
  attempts: number;
  status: ParkedStatus;
  parkedAt: Date;
  updatedAt: Date;
}

// Errors are kept short: they say what failed, not the whole stack.
const MAX_ERROR_CHARS = 2_000;
// How long a member's claim on a record it replays keeps the other members off it: longer than
// any handler takes with one record; a member that died holding it delays the record this long.
const REPLAY_CLAIM_MS = 5 * 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

interface Row {
  id: bigint;
  tenant_id: string;
  group_name: string;
  topic: string;
  partition: number;
  record_offset: string;
  event_id: string | null;
  record_key: string;
  error: string;
  attempts: number;
  status: ParkedStatus;
  parked_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, tenant_id, group_name, topic, partition, record_offset, event_id, record_key, error, attempts, status, parked_at, updated_at';

const fromRow = (row: Row): ParkedRecord => ({
  id: String(row.id),
  tenantId: row.tenant_id,
  group: row.group_name,
  topic: row.topic,
  partition: row.partition,
  offset: row.record_offset,
  eventId: row.event_id,
  key: row.record_key,
  error: row.error,
  attempts: row.attempts,
  status: row.status,
  parkedAt: row.parked_at,
  updatedAt: row.updated_at,
});

export interface ParkedFilter {
  group?: string;
  tenantId?: string;
  statuses?: ParkedStatus[];
  ids?: string[];
  limit?: number;
}

export class ParkedRecordStore {
  constructor(
    private readonly pool: Pool,
    private readonly clock: Clock = systemClock,
  ) {}

  // Parks a record with the error of its last attempt, and marks its event's stage failed, in one
  // transaction. A record delivered again after a crash and parked again adds its attempts to the
  // row; one the operator discarded stays discarded.
  async park(group: string, record: BusRecord, error: unknown, attempts: number): Promise<void> {
    const tenantId = record.headers.tenant_id ?? '';
    const eventId = record.headers.event_id && UUID.test(record.headers.event_id) ? record.headers.event_id : null;
    const message = describeError(error);
    const now = this.clock.now();
    await withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: bigint }>(
        `INSERT INTO parked_records (tenant_id, group_name, topic, partition, record_offset, event_id, record_key, value, headers,
                                     error, attempts, status, parked_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'parked', $12, $12)
         ON CONFLICT (group_name, topic, partition, record_offset) DO UPDATE
           SET error = EXCLUDED.error, attempts = parked_records.attempts + EXCLUDED.attempts, updated_at = $12,
               status = CASE WHEN parked_records.status = 'discarded' THEN 'discarded' ELSE 'parked' END, replay_claimed_until = NULL
         RETURNING id`,
        [tenantId, group, record.topic, record.partition, record.offset, eventId, record.key, record.value, record.headers, message, attempts, now],
      );
      if (eventId) await markStage(client, tenantId, eventId, group, 'failed', now, { error: message, parked_record_id: String(rows[0]!.id), attempts });
    });
  }

  async list(filter: ParkedFilter = {}): Promise<ParkedRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM parked_records
        WHERE ($1::text IS NULL OR group_name = $1) AND ($2::text IS NULL OR tenant_id = $2)
          AND ($3::text[] IS NULL OR status = ANY($3)) AND ($4::bigint[] IS NULL OR id = ANY($4))
        ORDER BY id LIMIT $5`,
      [filter.group ?? null, filter.tenantId ?? null, filter.statuses ?? null, filter.ids ?? null, filter.limit ?? 1000],
    );
    return rows.map(fromRow);
  }

  // Asks the group's consumers to hand these records to their handler again (after a fix). Only
  // parked records move; returns those that did.
  async requestReplay(filter: ParkedFilter): Promise<ParkedRecord[]> {
    return this.move(filter, ['parked'], 'replay_requested');
  }

  // Gives up on these records for good (kept, for the record); parked or waiting for a replay.
  async discard(filter: ParkedFilter): Promise<ParkedRecord[]> {
    return this.move(filter, ['parked', 'replay_requested'], 'discarded');
  }

  // Open records (parked or waiting for a replay) per group.
  async openCounts(): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ group_name: string; records: number }>(
      `SELECT group_name, count(*)::int AS records FROM parked_records WHERE status IN ('parked', 'replay_requested') GROUP BY group_name`,
    );
    return new Map(rows.map((row) => [row.group_name, row.records]));
  }

  // Hands the group's next record waiting for a replay to `replay`. The record is claimed first, in
  // a statement of its own, and the handler runs outside any transaction (see the migration 0044):
  // another member skips a claimed record until its claim expires. Success marks it replayed and
  // its event's stage ok; failure parks it again with the new error; a transient failure gives the
  // claim back, leaving the record waiting for its replay. An outcome is written only while the
  // claim is still this member's. False when none was waiting.
  async replayNext(group: string, replay: (record: BusRecord) => Promise<void>): Promise<boolean> {
    const claimedAt = this.clock.now();
    const claim = new Date(claimedAt.getTime() + REPLAY_CLAIM_MS);
    const { rows } = await this.pool.query<Row & { value: Buffer; headers: Record<string, string> }>(
      `UPDATE parked_records SET replay_claimed_until = $3
        WHERE id = (SELECT id FROM parked_records
                     WHERE group_name = $1 AND status = 'replay_requested' AND (replay_claimed_until IS NULL OR replay_claimed_until <= $2)
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}, value, headers`,
      [group, claimedAt, claim],
    );
    const row = rows[0];
    if (!row) return false;
    const record: BusRecord = { topic: row.topic, partition: row.partition, offset: row.record_offset, key: row.record_key, value: row.value, headers: row.headers };
    const ours = `tenant_id = $1 AND id = $2 AND status = 'replay_requested' AND replay_claimed_until = $3`;
    try {
      await replay(record);
    } catch (error) {
      if (isTransient(error)) {
        await this.pool.query(`UPDATE parked_records SET replay_claimed_until = NULL WHERE ${ours}`, [row.tenant_id, row.id, claim]);
        throw error;
      }
      const message = describeError(error);
      const now = this.clock.now();
      await withTransaction(this.pool, async (client) => {
        const { rowCount } = await client.query(
          `UPDATE parked_records SET status = 'parked', error = $4, attempts = attempts + 1, updated_at = $5, replay_claimed_until = NULL WHERE ${ours}`,
          [row.tenant_id, row.id, claim, message, now],
        );
        if (rowCount && row.event_id) await markStage(client, row.tenant_id, row.event_id, group, 'failed', now, { error: message, parked_record_id: String(row.id), replayed: true });
      });
      return true;
    }
    const now = this.clock.now();
    await withTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE parked_records SET status = 'replayed', updated_at = $4, replay_claimed_until = NULL WHERE ${ours}`,
        [row.tenant_id, row.id, claim, now],
      );
      if (rowCount && row.event_id) await markStage(client, row.tenant_id, row.event_id, group, 'ok', now, { parked_record_id: String(row.id), replayed: true });
    });
    return true;
  }

  private async move(filter: ParkedFilter, from: ParkedStatus[], to: ParkedStatus): Promise<ParkedRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `UPDATE parked_records SET status = $6, updated_at = $7, replay_claimed_until = NULL
        WHERE status = ANY($5) AND ($1::text IS NULL OR group_name = $1) AND ($2::text IS NULL OR tenant_id = $2)
          AND ($3::bigint[] IS NULL OR id = ANY($3)) AND ($4::text[] IS NULL OR status = ANY($4))
        RETURNING ${COLUMNS}`,
      [filter.group ?? null, filter.tenantId ?? null, filter.ids ?? null, filter.statuses ?? null, from, to, this.clock.now()],
    );
    return rows.map(fromRow).sort((a, b) => Number(a.id) - Number(b.id));
  }
}

// The stage a group gave up on (or took up again), on the record's event.
function markStage(client: Pick<PoolClient, 'query'>, tenantId: string, eventId: string, group: string, status: string, at: Date, detail: Record<string, unknown>): Promise<void> {
  return appendStage(client, { tenantId, eventId }, { stage: group, status, at, worker: `${group}:${process.pid}`, durationMs: null, detail });
}

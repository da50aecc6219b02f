import type { Pool, PoolClient } from '../../platform/postgres/pool.ts';
import type { Reference } from './references.ts';

type Db = Pick<PoolClient, 'query'>;

export interface EventKey {
  tenantId: string;
  eventId: string;
}

export interface StageEntry {
  stage: string;
  status: string;
  at: Date;
  worker: string;
  durationMs: number | null;
  detail: Record<string, unknown> | null;
}

async function appendStage(db: Db, key: EventKey, entry: StageEntry): Promise<void> {
  await db.query({
    name: 'append-stage',
    text: `INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    values: [key.tenantId, key.eventId, entry.stage, entry.status, entry.at, entry.worker, entry.durationMs, entry.detail],
  });
}

// pending|held|quarantined → processed (terminal). Releasing a held event clears its hold.
export async function markProcessed(db: Db, key: EventKey, entry: Omit<StageEntry, 'stage' | 'status'>, wasHeld: boolean): Promise<void> {
  if (wasHeld) {
    await db.query('DELETE FROM held_references WHERE tenant_id = $1 AND event_id = $2', [key.tenantId, key.eventId]);
    await db.query('DELETE FROM held_events WHERE tenant_id = $1 AND event_id = $2', [key.tenantId, key.eventId]);
  }
  await db.query({
    name: 'mark-processed',
    text: `UPDATE inbox_events SET status = 'processed', status_reason = NULL, terminal_at = $3, attempts = attempts + 1
            WHERE tenant_id = $1 AND event_id = $2`,
    values: [key.tenantId, key.eventId, entry.at],
  });
  await appendStage(db, key, { ...entry, stage: 'canonical', status: 'ok' });
}

// pending → held: the event waits for the entities it names. held_since is its arrival.
export async function markHeld(db: Db, key: EventKey, missing: Reference[], heldSince: Date, entry: Omit<StageEntry, 'stage' | 'status' | 'detail'>): Promise<void> {
  await db.query('INSERT INTO held_events (tenant_id, event_id, held_since) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
    key.tenantId,
    key.eventId,
    heldSince,
  ]);
  await rememberMissing(db, key, missing);
  const reason = { code: 'held_reference', missing };
  await db.query(
    `UPDATE inbox_events SET status = 'held', status_reason = $3, attempts = attempts + 1 WHERE tenant_id = $1 AND event_id = $2`,
    [key.tenantId, key.eventId, reason],
  );
  await appendStage(db, key, { ...entry, stage: 'canonical', status: 'held', detail: { missing } });
}

// The references a held event still waits for, exactly (a retry may find fewer, or others).
// Called with the event's inbox row locked, so no other writer touches these rows.
export async function rememberMissing(db: Db, key: EventKey, missing: Reference[]): Promise<void> {
  await db.query(
    `DELETE FROM held_references WHERE tenant_id = $1 AND event_id = $2
        AND (object, external_id) NOT IN (SELECT * FROM unnest($3::text[], $4::text[]))`,
    [key.tenantId, key.eventId, missing.map((m) => m.object), missing.map((m) => m.external_id)],
  );
  await db.query(
    `INSERT INTO held_references (tenant_id, object, external_id, event_id)
     SELECT $1, o, e, $2 FROM unnest($3::text[], $4::text[]) AS u(o, e) ON CONFLICT DO NOTHING`,
    [key.tenantId, key.eventId, missing.map((m) => m.object), missing.map((m) => m.external_id)],
  );
}

export async function markRejected(pool: Pool, key: EventKey, reason: { code: string; message: string }, entry: Omit<StageEntry, 'stage' | 'status' | 'detail'>): Promise<void> {
  await pool.query(
    `UPDATE inbox_events SET status = 'rejected', rejection = $3, terminal_at = $4, attempts = attempts + 1
      WHERE tenant_id = $1 AND event_id = $2 AND status NOT IN ('processed', 'rejected')`,
    [key.tenantId, key.eventId, reason, entry.at],
  );
  await appendStage(pool, key, { ...entry, stage: 'canonical', status: 'rejected', detail: reason });
}

// The events waiting for this entity. Read without locking: each is then retried with its own
// inbox row locked first, the one lock order every path uses (so releases cannot deadlock).
export async function eventsWaitingFor(db: Db, tenantId: string, object: string, externalId: string): Promise<string[]> {
  const { rows } = await db.query<{ event_id: string }>(
    'SELECT event_id FROM held_references WHERE tenant_id = $1 AND object = $2 AND external_id = $3 ORDER BY event_id',
    [tenantId, object, externalId],
  );
  return rows.map((r) => r.event_id);
}

export const QUARANTINE_AFTER_S = 15 * 60;

// Held events whose arrival lies more than 15 minutes before `now` become referential exceptions:
// status quarantined (terminal unless a later arrival releases them), with what they wait for.
export async function quarantineOverdue(pool: Pool, now: Date, worker: string): Promise<number> {
  const { rows } = await pool.query<{ tenant_id: string; event_id: string; held_since: Date; missing: unknown }>(
    `WITH due AS (
       UPDATE held_events SET quarantined_at = $1
        WHERE quarantined_at IS NULL AND held_since <= $1::timestamptz - make_interval(secs => ${QUARANTINE_AFTER_S})
       RETURNING tenant_id, event_id, held_since
     ),
     described AS (
       SELECT d.tenant_id, d.event_id, d.held_since,
              coalesce((SELECT jsonb_agg(jsonb_build_object('object', r.object, 'external_id', r.external_id) ORDER BY r.object, r.external_id)
                          FROM held_references r WHERE r.tenant_id = d.tenant_id AND r.event_id = d.event_id), '[]'::jsonb) AS missing
         FROM due d
     ),
     moved AS (
       UPDATE inbox_events i
          SET status = 'quarantined', terminal_at = $1,
              status_reason = jsonb_build_object('code', 'referential_exception', 'held_since', d.held_since, 'missing', d.missing)
         FROM described d
        WHERE i.tenant_id = d.tenant_id AND i.event_id = d.event_id AND i.status = 'held'
       RETURNING i.tenant_id, i.event_id
     )
     INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
     SELECT d.tenant_id, d.event_id, 'quarantine', 'quarantined', $1, $2, NULL,
            jsonb_build_object('code', 'referential_exception', 'missing', d.missing)
       FROM described d JOIN moved m ON m.tenant_id = d.tenant_id AND m.event_id = d.event_id
     RETURNING tenant_id, event_id, NULL::timestamptz AS held_since, NULL::jsonb AS missing`,
    [now, worker],
  );
  return rows.length;
}

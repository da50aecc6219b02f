import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { appendStage, type EventKey, type StageEntry } from '../../platform/inbox/event-stages.ts';
import { ConcurrentChange } from './concurrent-change.ts';
import type { Reference } from './references.ts';

export type { EventKey, StageEntry };

type Db = Pick<PoolClient, 'query'>;

// pending → held: each event waits for the entities it names. held_since is its arrival. Only
// from pending, checked by count as the commit's statuses are (commit-batch.ts).
export async function markHeld(
  db: Db,
  events: Array<{ key: EventKey; missing: Reference[]; heldSince: Date }>,
  entry: Omit<StageEntry, 'stage' | 'status' | 'detail'>,
): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `INSERT INTO held_events (tenant_id, event_id, held_since)
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::timestamptz[]) ON CONFLICT DO NOTHING`,
    [events.map((e) => e.key.tenantId), events.map((e) => e.key.eventId), events.map((e) => e.heldSince)],
  );
  const refs = events.flatMap((e) => e.missing.map((m) => ({ key: e.key, m })));
  await db.query(
    `INSERT INTO held_references (tenant_id, object, external_id, event_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[]) ON CONFLICT DO NOTHING`,
    [refs.map((r) => r.key.tenantId), refs.map((r) => r.m.object), refs.map((r) => r.m.external_id), refs.map((r) => r.key.eventId)],
  );
  const { rowCount } = await db.query(
    `WITH held AS (
       UPDATE inbox_events i SET status = 'held', status_reason = jsonb_build_object('code', 'held_reference', 'missing', u.missing),
                                 attempts = attempts + 1
         FROM unnest($1::text[], $2::uuid[], $3::jsonb[]) AS u(t, e, missing)
        WHERE i.tenant_id = u.t AND i.event_id = u.e AND i.status = 'pending'
       RETURNING i.tenant_id, i.event_id, u.missing
     )
     INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
     SELECT tenant_id, event_id, 'canonical', 'held', $4, $5, $6, jsonb_build_object('missing', missing) FROM held`,
    [
      events.map((e) => e.key.tenantId),
      events.map((e) => e.key.eventId),
      events.map((e) => JSON.stringify(e.missing)),
      entry.at,
      entry.worker,
      entry.durationMs,
    ],
  );
  if (rowCount !== events.length) throw new ConcurrentChange('hold', events.length, rowCount ?? 0);
}

// A rejected event waits for nothing: its hold rows go with it (a held event rejected on release
// would otherwise stay releasable, and fill the release sweep's reads, for good).
export async function markRejected(pool: Pool, key: EventKey, reason: { code: string; message: string }, entry: Omit<StageEntry, 'stage' | 'status' | 'detail'>): Promise<void> {
  await withTransaction(pool, async (db) => {
    await db.query(
      `UPDATE inbox_events SET status = 'rejected', rejection = $3, terminal_at = $4, attempts = attempts + 1
        WHERE tenant_id = $1 AND event_id = $2 AND status NOT IN ('processed', 'rejected')`,
      [key.tenantId, key.eventId, reason, entry.at],
    );
    await db.query('DELETE FROM held_references WHERE tenant_id = $1 AND event_id = $2', [key.tenantId, key.eventId]);
    await db.query('DELETE FROM held_events WHERE tenant_id = $1 AND event_id = $2', [key.tenantId, key.eventId]);
    await appendStage(db, key, { ...entry, stage: 'canonical', status: 'rejected', detail: reason });
  });
}

// The events waiting for any of these entities (read without locking; they are then retried).
export async function eventsWaitingFor(
  db: Db,
  entities: Array<{ tenantId: string; object: string; externalId: string }>,
): Promise<EventKey[]> {
  if (entities.length === 0) return [];
  const { rows } = await db.query<{ tenant_id: string; event_id: string }>(
    `SELECT DISTINCT r.tenant_id, r.event_id FROM held_references r
       JOIN unnest($1::text[], $2::text[], $3::text[]) AS u(t, o, e) ON r.tenant_id = u.t AND r.object = u.o AND r.external_id = u.e`,
    [entities.map((e) => e.tenantId), entities.map((e) => e.object), entities.map((e) => e.externalId)],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, eventId: r.event_id }));
}

const QUARANTINE_AFTER_S = 15 * 60;
const QUARANTINE_BATCH = 5_000;

// Held events whose arrival lies more than 15 minutes before `now` become referential exceptions:
// status quarantined (terminal unless a later arrival releases them), with what they wait for.
// `batch` per statement, oldest first: a large import with missing entities can leave hundreds
// of thousands overdue at once, and one write transaction that long pauses the log for every
// group (the log hands over only what is older than the oldest transaction running).
export async function quarantineOverdue(pool: Pool, now: Date, worker: string, batch = QUARANTINE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await quarantineOldest(pool, now, worker, batch);
    total += done;
    if (done < batch) return total;
  }
}

async function quarantineOldest(pool: Pool, now: Date, worker: string, limit: number): Promise<number> {
  const { rows } = await pool.query<{ event_id: string }>(
    `WITH due AS (
       UPDATE held_events h SET quarantined_at = $1
         FROM (SELECT tenant_id, event_id FROM held_events
                WHERE quarantined_at IS NULL AND held_since <= $1::timestamptz - make_interval(secs => ${QUARANTINE_AFTER_S})
                ORDER BY held_since LIMIT $3) o
        WHERE h.tenant_id = o.tenant_id AND h.event_id = o.event_id
       RETURNING h.tenant_id, h.event_id, h.held_since
     ),
     described AS (
       SELECT d.tenant_id, d.event_id, d.held_since,
              coalesce((SELECT jsonb_agg(jsonb_build_object('object', r.object, 'external_id', r.external_id) ORDER BY r.object, r.external_id)
                          FROM held_references r WHERE r.tenant_id = d.tenant_id AND r.event_id = d.event_id
                           AND NOT EXISTS (SELECT 1 FROM canonical_entities e
                                            WHERE e.tenant_id = r.tenant_id AND e.object = r.object AND e.external_id = r.external_id)),
                       '[]'::jsonb) AS missing
         FROM due d
     ),
     moved AS (
       UPDATE inbox_events i
          SET status = 'quarantined', terminal_at = $1,
              -- In UTC with Z, as every other time the event record shows (jsonb would write +00:00).
              status_reason = jsonb_build_object('code', 'referential_exception',
                                                 'held_since', to_char(d.held_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                                 'missing', d.missing)
         FROM described d
        WHERE i.tenant_id = d.tenant_id AND i.event_id = d.event_id AND i.status = 'held'
       RETURNING i.tenant_id, i.event_id
     )
     INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
     SELECT d.tenant_id, d.event_id, 'quarantine', 'quarantined', $1, $2, NULL,
            jsonb_build_object('code', 'referential_exception', 'missing', d.missing)
       FROM described d JOIN moved m ON m.tenant_id = d.tenant_id AND m.event_id = d.event_id
     RETURNING event_id`,
    [now, worker, limit],
  );
  return rows.length;
}

// Held or quarantined events all of whose references now exist: a release that was missed (a
// crash between an arrival's commit and its follow-up) is caught by the periodic sweep.
// (held_references keeps what an event was held for; entities are never removed, so a reference
// whose entity exists is simply satisfied.)
export async function releasableEvents(pool: Pool): Promise<EventKey[]> {
  const { rows } = await pool.query<{ tenant_id: string; event_id: string }>(
    `SELECT h.tenant_id, h.event_id FROM held_events h
      WHERE NOT EXISTS (
        SELECT 1 FROM held_references r
         WHERE r.tenant_id = h.tenant_id AND r.event_id = h.event_id
           AND NOT EXISTS (SELECT 1 FROM canonical_entities e
                            WHERE e.tenant_id = r.tenant_id AND e.object = r.object AND e.external_id = r.external_id))
      ORDER BY h.held_since
      LIMIT 1000`,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, eventId: r.event_id }));
}

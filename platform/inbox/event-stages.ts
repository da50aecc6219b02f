import type { PoolClient } from '../postgres/pool.ts';

// One entry of an event's stage_history (GET /v1/events/{id}), appended by whichever stage
// reached it: the canonical pipeline, and the parking lot for a stage that gave a record up.
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

export async function appendStage(db: Pick<PoolClient, 'query'>, key: EventKey, entry: StageEntry): Promise<void> {
  await db.query({
    name: 'append-stage',
    text: `INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    values: [key.tenantId, key.eventId, entry.stage, entry.status, entry.at, entry.worker, entry.durationMs, entry.detail],
  });
}

// An `ok` entry of `stage` for each event, written once: a batch that a pipeline handles again
// after a crash or a rebalance (at-least-once delivery) adds no second entry. OFFSET 0 keeps the
// check a probe of the (tenant_id, event_id) index per event: pulled up into an anti-join, the
// planner may hash the whole table instead, once per batch (seen: 6 times the graph store's cost).
// The same detail for every event of the call (none unless given).
export async function appendStageOnce(
  db: Pick<PoolClient, 'query'>,
  stage: string,
  events: readonly EventKey[],
  entry: Omit<StageEntry, 'stage' | 'status' | 'detail'> & { detail?: StageEntry['detail'] },
): Promise<void> {
  if (events.length === 0) return;
  await db.query({
    name: 'append-stage-once',
    text: `INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
           SELECT u.t, u.e, $3, 'ok', $4, $5, $6, $7 FROM unnest($1::text[], $2::uuid[]) AS u(t, e)
            WHERE NOT EXISTS (SELECT 1 FROM event_stages s
                               WHERE s.tenant_id = u.t AND s.event_id = u.e AND s.stage = $3 AND s.status = 'ok'
                               OFFSET 0)`,
    values: [events.map((e) => e.tenantId), events.map((e) => e.eventId), stage, entry.at, entry.worker, entry.durationMs, entry.detail ?? null],
  });
}

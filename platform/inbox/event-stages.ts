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

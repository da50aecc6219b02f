import type { z } from 'zod';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { eventStatusSchema } from '../../../schemas/responses.ts';

// The reads behind GET /v1/events/{event_id}: an accepted event in the inbox and its stage history.
// Both filter on the tenant.

type Queryable = Pick<Pool, 'query'>;
type EventStatus = z.infer<typeof eventStatusSchema>;
type Detail = Record<string, unknown> | null;

// As stored (CHECK constraints hold status and object to the published lists).
interface InboxRow {
  event_id: string;
  object: EventStatus['object'];
  external_id: string;
  sequence: bigint | null;
  status: EventStatus['status'];
  rejection: Detail;
  status_reason: Detail;
  attempts: number;
  received_at: Date;
  occurred_at: Date | null;
  terminal_at: Date | null;
  historical: boolean;
  import_id: string | null;
  content_hash: Buffer;
}

interface StageRow {
  stage: string;
  status: EventStatus['stage_history'][number]['status'];
  at: Date;
  worker: string | null;
  duration_ms: number | null;
  detail: Detail;
}

export async function findInboxEvent(db: Queryable, tenantId: string, eventId: string): Promise<InboxRow | undefined> {
  const { rows } = await db.query<InboxRow>(
    `SELECT event_id, object, external_id, sequence, status, rejection, status_reason, attempts, received_at,
              occurred_at, terminal_at, historical, import_id, content_hash
         FROM inbox_events WHERE tenant_id = $1 AND event_id = $2`,
    [tenantId, eventId],
  );
  return rows[0];
}

// In the order they were recorded.
export async function eventStages(db: Queryable, tenantId: string, eventId: string): Promise<StageRow[]> {
  const { rows } = await db.query<StageRow>('SELECT stage, status, at, worker, duration_ms, detail FROM event_stages WHERE tenant_id = $1 AND event_id = $2 ORDER BY id', [
    tenantId,
    eventId,
  ]);
  return rows;
}

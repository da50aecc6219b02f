// Outgoing events (webhook envelopes) are enqueued inside the transaction of the state change that
// causes them, so an alert, an episode change or a case action and its event commit together or
// not at all. The delivery worker (services/webhooks) sends them; classification comes from the
// catalog, never from the caller, so an event can never be published under the wrong one.
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { WEBHOOK_EVENT_CATALOG, type WebhookEventType } from '../../schemas/webhooks/catalog.ts';

export interface OutgoingEvent {
  tenantId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

// Enqueues the events in one statement; returns their envelope ids (whe_…), in order.
export async function enqueueEvents(db: Pick<PoolClient, 'query'>, events: OutgoingEvent[], now: Date): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => uuidv7(now.getTime()));
  await db.query({
    name: 'outgoing-events-enqueue',
    text: `INSERT INTO outgoing_events (tenant_id, envelope_id, type, classification, created_at, data)
           SELECT t, id, ty, c, $2, d
             FROM json_to_recordset($1::json) AS r(t text, id uuid, ty text, c text, d jsonb)`,
    values: [
      JSON.stringify(events.map((event, i) => ({ t: event.tenantId, id: ids[i], ty: event.type, c: WEBHOOK_EVENT_CATALOG[event.type].classification, d: event.data }))),
      now,
    ],
  });
  return ids.map((id) => `${ID_PREFIXES.webhookEnvelope}${id}`);
}

// Outgoing events (webhook envelopes) are enqueued inside the transaction of the state change that
// causes them, so an alert, an episode change or a case action and its event commit together or
// not at all. The delivery worker (services/webhooks) sends them; classification comes from the
// catalog, never from the caller, so an event can never be published under the wrong one. Each
// event's data is typed by its type's declared payload (schemas/webhooks/payloads.ts) and parsed
// against it before it is written: a payload that does not match its type is refused, with the
// transaction that caused it.
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { WEBHOOK_EVENT_CATALOG, type WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import { WEBHOOK_PAYLOADS, type WebhookEventData } from '../../schemas/webhooks/payloads.ts';

// One member per event type: pushing data that is not its type's payload fails to compile.
export type OutgoingEvent = { [T in WebhookEventType]: { tenantId: string; type: T; data: WebhookEventData<T> } }[WebhookEventType];

export class InvalidEventPayload extends Error {
  constructor(
    readonly type: WebhookEventType,
    readonly issues: string[],
  ) {
    super(`${type} data does not match its declared payload: ${issues.join('; ')}`);
  }
}

// Throws InvalidEventPayload unless the data parses with its type's payload schema.
export function checkEventData(type: WebhookEventType, data: unknown): void {
  const parsed = WEBHOOK_PAYLOADS[type].safeParse(data);
  if (!parsed.success) throw new InvalidEventPayload(type, parsed.error.issues.map((i) => `${i.path.join('.') || '(data)'}: ${i.message}`));
}

// Enqueues the events in one statement; returns their envelope ids (whe_…), in order.
export async function enqueueEvents(db: Pick<PoolClient, 'query'>, events: OutgoingEvent[], now: Date): Promise<string[]> {
  if (events.length === 0) return [];
  for (const event of events) checkEventData(event.type, event.data);
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

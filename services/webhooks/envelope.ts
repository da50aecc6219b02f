// The envelope exactly as the spec shapes it: id (whe_), type, classification, created_at,
// tenant_id, data, delivery {attempt, delivery_id (whd_)}. The classification is taken from the
// catalog and must agree with the one stored when the event was enqueued, and the event must be
// deliverable on the endpoint's channel: otherwise nothing is sent (a body whose classification
// disagrees with the catalog is not a genuine delivery).
import { ID_PREFIXES } from '../../platform/ids.ts';
import { deliverableOn, isWebhookEventType, WEBHOOK_EVENT_CATALOG, type Channel } from '../../schemas/webhooks/catalog.ts';

export interface StoredEvent {
  tenantId: string;
  // Bare uuid.
  envelopeId: string;
  type: string;
  classification: string;
  createdAt: Date;
  data: unknown;
}

export type EnvelopeBuild = { ok: true; body: Buffer; envelopeId: string } | { ok: false; reason: string };

export function buildEnvelope(event: StoredEvent, channel: Channel, delivery: { attempt: number; deliveryId: string }): EnvelopeBuild {
  if (!isWebhookEventType(event.type)) return { ok: false, reason: 'event type not in the catalog' };
  const classification = WEBHOOK_EVENT_CATALOG[event.type].classification;
  if (classification !== event.classification) return { ok: false, reason: 'stored classification disagrees with the catalog' };
  if (!deliverableOn(event.type, channel)) return { ok: false, reason: `${event.type} is not deliverable on the ${channel} channel` };
  const envelopeId = `${ID_PREFIXES.webhookEnvelope}${event.envelopeId}`;
  const body = JSON.stringify({
    id: envelopeId,
    type: event.type,
    classification,
    created_at: event.createdAt.toISOString(),
    tenant_id: event.tenantId,
    data: event.data,
    delivery: { attempt: delivery.attempt, delivery_id: `${ID_PREFIXES.webhookDelivery}${delivery.deliveryId}` },
  });
  return { ok: true, body: Buffer.from(body, 'utf8'), envelopeId };
}

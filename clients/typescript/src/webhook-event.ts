import type { WebhookEnvelope } from './generated/api-types.ts';
import { WEBHOOK_CLASSIFICATIONS } from './generated/webhook-catalog.ts';
import { verifyWebhookSignature, type VerifyOptions, type WebhookVerification } from './webhook-signature.ts';

export type WebhookEventResult =
  | { ok: true; event: WebhookEnvelope; timestamp: number }
  | Extract<WebhookVerification, { ok: false }>
  | { ok: false; reason: 'not_an_envelope' | 'unknown_event_type' | 'classification_mismatch' };

/**
 * Verifies a delivery over its raw body, then parses it into a typed envelope: the signature
 * first (see verifyWebhookSignature), then the envelope's shape, then that its classification is
 * the one the event catalog gives its type (a body whose classification disagrees is not a
 * genuine delivery). Never throws on anything the sender controls.
 *
 * Deduplicate on `event.id` (the Svc-Webhook-Id header carries the same id): delivery is at least
 * once, and a replay reuses the id.
 */
export function constructWebhookEvent(
  rawBody: Uint8Array | string,
  signatureHeader: string | readonly string[] | null | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): WebhookEventResult {
  const verified = verifyWebhookSignature(rawBody, signatureHeader, secrets, options);
  if (!verified.ok) return verified;
  let body: unknown;
  try {
    body = JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'));
  } catch {
    return { ok: false, reason: 'not_an_envelope' };
  }
  if (!isEnvelopeShape(body)) return { ok: false, reason: 'not_an_envelope' };
  if (!Object.hasOwn(WEBHOOK_CLASSIFICATIONS, body.type)) return { ok: false, reason: 'unknown_event_type' };
  if (WEBHOOK_CLASSIFICATIONS[body.type as keyof typeof WEBHOOK_CLASSIFICATIONS] !== body.classification) return { ok: false, reason: 'classification_mismatch' };
  return { ok: true, event: body as WebhookEnvelope, timestamp: verified.timestamp };
}

interface EnvelopeShape {
  id: string;
  type: string;
  classification: string;
  created_at: string;
  tenant_id: string;
  data: Record<string, unknown>;
  delivery: { attempt: number; delivery_id: string };
}

function isEnvelopeShape(value: unknown): value is EnvelopeShape {
  if (!isObject(value)) return false;
  const { id, type, classification, created_at, tenant_id, data, delivery } = value;
  return (
    typeof id === 'string' && id.startsWith('whe_') &&
    typeof type === 'string' && typeof classification === 'string' &&
    typeof created_at === 'string' && !Number.isNaN(Date.parse(created_at)) &&
    typeof tenant_id === 'string' && isObject(data) && isObject(delivery) &&
    Number.isInteger(delivery.attempt) && (delivery.attempt as number) >= 1 &&
    typeof delivery.delivery_id === 'string' && delivery.delivery_id.startsWith('whd_')
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

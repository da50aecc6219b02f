import { z } from 'zod';
import { upTo } from '../primitives/fields.ts';
import { CHANNELS, WEBHOOK_EVENT_CATALOG, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './catalog.ts';
import { WEBHOOK_PAYLOADS } from './payloads.ts';

// Requests and records of webhook management (scope webhook_mgmt), and the envelope the delivery
// worker sends (services/webhooks/envelope.ts builds it).
const WEBHOOK_URL_MAX = 2048;
const WEBHOOK_DESCRIPTION_MAX = 500;
// Longest overlap a rotation may give the previous secret, and the default one.
const ROTATION_OVERLAP_MAX_S = 7 * 24 * 3600;
export const ROTATION_OVERLAP_DEFAULT_S = 24 * 3600;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead_lettered', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;

// event_types are checked against the catalog and the channel after this shape (each finding
// with its own path and code), so here they are plain strings.
export const endpointRegistrationSchema = z.strictObject({
  url: z.string().min(1).max(WEBHOOK_URL_MAX),
  channel: z.enum(CHANNELS),
  event_types: z.array(z.string().min(1).max(64)).min(1).max(WEBHOOK_EVENT_TYPES.length),
  // null as the views show it: "no description", so a view sent back registers.
  description: upTo(WEBHOOK_DESCRIPTION_MAX).nullable().optional(),
});
export type EndpointRegistration = z.infer<typeof endpointRegistrationSchema>;

// POST /v1/webhook-endpoints/{id}/rotate-secret takes no body or this one.
export const rotationRequestSchema = z.strictObject({
  previous_secret_valid_for_s: z.number().int().min(0).max(ROTATION_OVERLAP_MAX_S).optional(),
});

const instant = z.string().meta({ format: 'date-time' });
const endpointId = z.string().regex(/^whk_[0-9a-f-]{36}$/);
const deliveryId = z.string().regex(/^whd_[0-9a-f-]{36}$/);

export const webhookEndpointSchema = z.strictObject({
  endpoint_id: endpointId,
  url: z.string(),
  channel: z.enum(CHANNELS),
  event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  description: z.string().nullable(),
  status: z.enum(ENDPOINT_STATUSES),
  // Until this instant the previous secret still signs every delivery; null outside an overlap.
  previous_secret_valid_until: instant.nullable(),
  verified_at: instant.nullable(),
  created_at: instant,
  updated_at: instant,
});

// Registration shows the secret once.
export const webhookEndpointCreatedSchema = webhookEndpointSchema.extend({ secret: z.string() });

export const secretRotationSchema = z.strictObject({
  endpoint_id: endpointId,
  secret: z.string(),
  previous_secret_valid_until: instant,
});

export const webhookEndpointPageSchema = z.strictObject({
  data: z.array(webhookEndpointSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

const webhookAttemptSchema = z.strictObject({
  attempt: z.number().int(),
  started_at: instant,
  latency_ms: z.number().int(),
  // null when no response came (timeout, refused connection, TLS failure, refused destination).
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  // The first bytes of the response body, as text.
  response_excerpt: z.string().nullable(),
  // When this attempt scheduled the next one; null when it was the last.
  next_retry_at: instant.nullable(),
});

export const webhookDeliverySchema = z.strictObject({
  delivery_id: deliveryId,
  endpoint_id: endpointId,
  envelope_id: z.string().regex(/^whe_[0-9a-f-]{36}$/),
  event_type: z.enum(WEBHOOK_EVENT_TYPES),
  status: z.enum(DELIVERY_STATUSES),
  attempt_count: z.number().int(),
  // The latest attempt's answer, as the delivery row shows it: its HTTP status (null when it got
  // none: a timeout, a refused connection) and its latency; both null before the first attempt.
  response_status: z.number().int().nullable(),
  latency_ms: z.number().int().nullable(),
  // The next scheduled attempt of a pending delivery (while an attempt is in flight: when it is
  // given up and retried); null once the delivery is settled.
  next_retry_at: instant.nullable(),
  created_at: instant,
  completed_at: instant.nullable(),
  // The delivery this one replays.
  replay_of: deliveryId.nullable(),
  attempts: z.array(webhookAttemptSchema),
});

export const webhookDeliveryPageSchema = z.strictObject({
  data: z.array(webhookDeliverySchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

export type WebhookEndpointView = z.infer<typeof webhookEndpointSchema>;
export type WebhookDeliveryView = z.infer<typeof webhookDeliverySchema>;

// The envelope of a delivery, one shape per catalog type, each with the classification the
// catalog gives it (a body whose classification disagrees is not a genuine delivery) and the
// data its type declares (payloads.ts).
const envelopeOf = <T extends WebhookEventType>(type: T) =>
  z.strictObject({
    id: z.string().startsWith('whe_'),
    type: z.literal(type),
    classification: z.literal(WEBHOOK_EVENT_CATALOG[type].classification as (typeof WEBHOOK_EVENT_CATALOG)[T]['classification']),
    created_at: z.iso.datetime({ offset: true }),
    tenant_id: z.string(),
    data: WEBHOOK_PAYLOADS[type] as (typeof WEBHOOK_PAYLOADS)[T],
    delivery: z.strictObject({ attempt: z.number().int().min(1), delivery_id: z.string().startsWith('whd_') }),
  });

export const webhookEnvelopeSchema = z.discriminatedUnion(
  'type',
  WEBHOOK_EVENT_TYPES.map((type) => envelopeOf(type)) as unknown as [ReturnType<typeof envelopeOf>, ...ReturnType<typeof envelopeOf>[]],
);

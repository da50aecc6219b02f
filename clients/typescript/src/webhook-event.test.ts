import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_CATALOG, WEBHOOK_EVENT_TYPES } from '../../../schemas/webhooks/catalog.ts';
import { webhookEnvelopeSchema } from '../../../schemas/webhooks/resources.ts';
import { buildEnvelope } from '../../../services/webhooks/envelope.ts';
import { newWebhookSecret, signatureHeader } from './webhook-signing.ts';
import { constructWebhookEvent } from './webhook-event.ts';
import type { WebhookEventOf } from './webhooks.ts';
import { SAMPLED_TYPES, samplePayload } from '../../../services/webhooks/sample-payloads.test-kit.ts';

const T = 1_800_000_000;
const NOW = { now: () => T * 1000 };
const SECRET = newWebhookSecret();

const dataOf = (type: (typeof WEBHOOK_EVENT_TYPES)[number]) => samplePayload(type);

function delivery(type: (typeof WEBHOOK_EVENT_TYPES)[number], classification: string = WEBHOOK_EVENT_CATALOG[type].classification, data: unknown = dataOf(type)) {
  const built = buildEnvelope(
    { tenantId: 'acme', envelopeId: '0190d9a0-0000-7000-8000-000000000001', type, classification, createdAt: new Date(T * 1000), data },
    WEBHOOK_EVENT_CATALOG[type].channels[0],
    { attempt: 1, deliveryId: '0190d9a0-0000-7000-8000-000000000002' },
  );
  if (!built.ok) throw new Error(built.reason);
  return built.body;
}

const signed = (body: Buffer | string) => signatureHeader(T, Buffer.from(body), [SECRET]);

describe('constructWebhookEvent', () => {
  it.each(WEBHOOK_EVENT_TYPES)('accepts what the service sends for %s', (type) => {
    const body = delivery(type);
    const result = constructWebhookEvent(body, signed(body), SECRET, NOW);
    expect(result).toMatchObject({ ok: true, timestamp: T, event: { type, classification: WEBHOOK_EVENT_CATALOG[type].classification, tenant_id: 'acme', data: dataOf(type) } });
  });

  it.each(SAMPLED_TYPES)('a %s body and the schema the SDK type is generated from agree, data included', (type) => {
    const body = delivery(type);
    expect(webhookEnvelopeSchema.safeParse(JSON.parse(body.toString('utf8'))).success).toBe(true);
    // Another type's data in the envelope is not this type's delivery.
    const other = type === 'alert.opened' ? 'webhook.test' : 'alert.opened';
    expect(webhookEnvelopeSchema.safeParse(JSON.parse(delivery(type, undefined, samplePayload(other)).toString('utf8'))).success).toBe(false);
  });

  it('types data by the event type, and a payload with several causes by its reason', () => {
    const body = delivery('episode.escalated', undefined, { ...samplePayload('episode.escalated'), reason: 'threshold' });
    const result = constructWebhookEvent(body, signed(body), SECRET, NOW);
    if (!result.ok || result.event.type !== 'episode.escalated') throw new Error('expected an episode.escalated event');
    const data: WebhookEventOf<'episode.escalated'>['data'] = result.event.data;
    // Compiles only because the reason narrows the union to the threshold cause, which names the alert.
    const alert: string | undefined = data.reason === 'threshold' ? data.alert_id : undefined;
    expect(alert).toMatch(/^alrt_/);
  });

  it('checks the signature before reading the body', () => {
    const body = delivery('alert.opened');
    expect(constructWebhookEvent(body, signed(body), newWebhookSecret(), NOW)).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(constructWebhookEvent(body, undefined, SECRET, NOW)).toEqual({ ok: false, reason: 'malformed_header' });
  });

  it('refuses a signed body whose classification disagrees with the catalog', () => {
    const body = JSON.stringify({ ...JSON.parse(delivery('alert.opened').toString('utf8')), classification: 'operational' });
    expect(constructWebhookEvent(body, signed(body), SECRET, NOW)).toEqual({ ok: false, reason: 'classification_mismatch' });
  });

  it('refuses a signed body of a type the catalog does not list', () => {
    const body = JSON.stringify({ ...JSON.parse(delivery('alert.opened').toString('utf8')), type: 'alert.deleted' });
    expect(constructWebhookEvent(body, signed(body), SECRET, NOW)).toEqual({ ok: false, reason: 'unknown_event_type' });
  });

  it.each([
    ['not JSON', '{"id":'],
    ['an array', '[]'],
    ['an id without whe_', JSON.stringify({ ...JSON.parse(delivery('webhook.test').toString('utf8')), id: 'evt_1' })],
    ['no delivery', JSON.stringify({ ...JSON.parse(delivery('webhook.test').toString('utf8')), delivery: undefined })],
    ['attempt 0', JSON.stringify({ ...JSON.parse(delivery('webhook.test').toString('utf8')), delivery: { attempt: 0, delivery_id: 'whd_1' } })],
  ])('refuses a signed body that is not an envelope: %s', (_, body) => {
    expect(constructWebhookEvent(body, signed(body), SECRET, NOW)).toEqual({ ok: false, reason: 'not_an_envelope' });
  });
});

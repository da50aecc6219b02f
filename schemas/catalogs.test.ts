import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from './errors/catalog.ts';
import { CHANNELS, deliverableOn, isWebhookEventType, WEBHOOK_EVENT_CATALOG, WEBHOOK_EVENT_TYPES } from './webhooks/catalog.ts';

describe('the webhook event catalog', () => {
  it('holds the 19 types of the spec with their classification', () => {
    expect(WEBHOOK_EVENT_TYPES).toHaveLength(19);
    const restricted = WEBHOOK_EVENT_TYPES.filter((t) => WEBHOOK_EVENT_CATALOG[t].classification === 'restricted_aml');
    expect(restricted.sort()).toEqual(
      ['alert.opened', 'case.disposed', 'case.status_changed', 'episode.escalated', 'episode.reopened', 'episode.resolved', 'episode.updated', 'risk_state.changed'].sort(),
    );
    expect(WEBHOOK_EVENT_CATALOG['recommendation.issued'].classification).toBe('advisory');
    expect(isWebhookEventType('webhook.test')).toBe(true);
    expect(isWebhookEventType('alert.closed')).toBe(false);
  });

  it('never lets restricted content reach the operational channel', () => {
    expect(CHANNELS).toEqual(['compliance', 'operational']);
    for (const type of WEBHOOK_EVENT_TYPES) {
      if (WEBHOOK_EVENT_CATALOG[type].classification === 'restricted_aml') expect(deliverableOn(type, 'operational'), type).toBe(false);
    }
    expect(deliverableOn('recommendation.issued', 'operational')).toBe(true);
    expect(deliverableOn('recommendation.issued', 'compliance')).toBe(false);
    expect(deliverableOn('coverage.degraded', 'compliance')).toBe(true);
    expect(deliverableOn('import.completed', 'compliance')).toBe(false);
    expect(deliverableOn('ruleset.activated', 'operational')).toBe(false);
  });
});

describe('the error catalog', () => {
  it('holds every code the spec shows with its status', () => {
    const shown: Record<string, number> = {
      'svc:validation/schema': 400, 'svc:validation/unsupported_schema_version': 400, 'svc:validation/timestamp_out_of_range': 400,
      'svc:validation/money_scale_mismatch': 400, 'svc:validation/pan_detected': 400, 'svc:auth/unauthenticated': 401,
      'svc:auth/timestamp_skew': 401, 'svc:auth/invalid_signature': 401, 'svc:auth/nonce_replayed': 401,
      'svc:auth/insufficient_scope': 403, 'svc:sequence/conflict': 409, 'svc:idempotency/key_conflict': 409,
      'svc:request/payload_too_large': 413, 'svc:batch/too_large': 413, 'svc:rate_limit/exceeded': 429, 'svc:webhook/test_timeout': 504,
    };
    for (const [code, status] of Object.entries(shown)) expect(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG]?.status, code).toBe(status);
    expect(ERROR_CATALOG['svc:import/invalid_chunk']).toBeDefined();
  });
});

import { describe, expect, it } from 'vitest';
import { buildEnvelope, type StoredEvent } from './envelope.ts';

const event: StoredEvent = {
  tenantId: 'acme',
  envelopeId: '01900000-0000-7000-8000-000000000001',
  type: 'alert.opened',
  classification: 'restricted_aml',
  createdAt: new Date('2026-09-01T12:00:00Z'),
  data: { alert_id: 'alrt_x', score: 0.9 },
};
const delivery = { attempt: 2, deliveryId: '01900000-0000-7000-8000-000000000002' };

describe('webhook envelope', () => {
  it('has exactly the spec members, in order, with prefixed ids', () => {
    const built = buildEnvelope(event, 'compliance', delivery);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.body.toString('utf8')).toBe(
      '{"id":"whe_01900000-0000-7000-8000-000000000001","type":"alert.opened","classification":"restricted_aml",' +
        '"created_at":"2026-09-01T12:00:00.000Z","tenant_id":"acme","data":{"alert_id":"alrt_x","score":0.9},' +
        '"delivery":{"attempt":2,"delivery_id":"whd_01900000-0000-7000-8000-000000000002"}}',
    );
    expect(built.envelopeId).toBe('whe_01900000-0000-7000-8000-000000000001');
  });

  it('is never built for a channel the catalog does not list for the event', () => {
    expect(buildEnvelope(event, 'operational', delivery)).toEqual({ ok: false, reason: 'alert.opened is not deliverable on the operational channel' });
    expect(buildEnvelope({ ...event, type: 'recommendation.issued', classification: 'advisory' }, 'compliance', delivery).ok).toBe(false);
    expect(buildEnvelope({ ...event, type: 'coverage.degraded', classification: 'operational' }, 'operational', delivery).ok).toBe(true);
  });

  it('is never built when the stored classification disagrees with the catalog, or the type is unknown', () => {
    expect(buildEnvelope({ ...event, classification: 'operational' }, 'compliance', delivery).ok).toBe(false);
    expect(buildEnvelope({ ...event, type: 'alert.deleted' }, 'compliance', delivery).ok).toBe(false);
  });
});

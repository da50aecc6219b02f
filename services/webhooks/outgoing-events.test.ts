import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { WEBHOOK_PAYLOADS } from '../../schemas/webhooks/payloads.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { sweepOutbox } from './declared-payloads.test-kit.ts';
import { enqueueEvents, InvalidEventPayload, type OutgoingEvent } from './outgoing-events.ts';
import { SAMPLED_TYPES, sampleEvent, samplePayload } from './sample-payloads.test-kit.ts';

let db: TestDatabase;
const NOW = new Date('2026-09-01T12:00:00Z');
beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
});
afterAll(async () => db?.drop());

const count = async () => (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outgoing_events')).rows[0]!.n;

describe('the outbox writer', () => {
  it('writes data that parses with its type\'s declared payload, as given', async () => {
    const events = SAMPLED_TYPES.map((type, i) => sampleEvent('acme', type, i));
    const ids = await enqueueEvents(db.pool, events, NOW);
    expect(ids).toHaveLength(events.length);
    const { rows } = await db.pool.query<{ type: string; data: unknown }>('SELECT type, data FROM outgoing_events ORDER BY type');
    expect(rows).toEqual(events.map((e) => ({ type: e.type, data: e.data })).sort((a, b) => (a.type < b.type ? -1 : 1)));
    expect(await sweepOutbox(db.pool)).toEqual({ types: [...SAMPLED_TYPES].sort(), refused: [] });
  });

  it.each([
    ['an undeclared field', { tenantId: 'acme', type: 'alert.opened', data: { ...samplePayload('alert.opened'), narrative: 'x' } }, 'narrative'],
    ['a missing field', { tenantId: 'acme', type: 'ruleset.activated', data: { version: 2 } }, 'previous_version'],
    ['the fields of another cause', { tenantId: 'acme', type: 'episode.escalated', data: { ...samplePayload('episode.reopened'), status: 'escalated', reason: 'case_action' } }, 'case_status'],
    ['a value outside its enum', { tenantId: 'acme', type: 'recommendation.issued', data: { ...samplePayload('recommendation.issued'), band: 'low' } }, 'band'],
    ['an id without its prefix', { tenantId: 'acme', type: 'episode.updated', data: { ...samplePayload('episode.updated'), alert_id: 'alrt_1' } }, 'alert_id'],
    ['a share past one', { tenantId: 'acme', type: 'conformance.drift_detected', data: { ...samplePayload('conformance.drift_detected'), refused_share: 1.5 } }, 'refused_share'],
  ])('refuses %s, and writes none of the batch', async (_, wrong, path) => {
    const before = await count();
    const batch = [sampleEvent('acme', 'webhook.test'), wrong as OutgoingEvent];
    const refused = await enqueueEvents(db.pool, batch, NOW).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidEventPayload);
    expect((refused as InvalidEventPayload).issues.join('\n')).toContain(path);
    expect(await count()).toBe(before);
  });

  it('the sweep reports an event written around the writer whose data does not parse', async () => {
    await db.pool.query(
      `INSERT INTO outgoing_events (tenant_id, envelope_id, type, classification, created_at, data) VALUES ('acme', gen_random_uuid(), 'import.progress', 'operational', $1, '{"import_id": "imp_1"}')`,
      [NOW],
    );
    const swept = await sweepOutbox(db.pool);
    expect(swept.refused).toHaveLength(1);
    expect(swept.refused[0]).toMatch(/import\.progress: .*import_id/);
  });

  it('types each emitter by its event type', () => {
    const typed: OutgoingEvent[] = [
      { tenantId: 'acme', type: 'ruleset.activated', data: { version: 2, previous_version: 1 } },
      // @ts-expect-error data of another type
      { tenantId: 'acme', type: 'ruleset.activated', data: { from_version: 2, to_version: 1 } },
      // @ts-expect-error a threshold escalation names its alert
      { tenantId: 'acme', type: 'episode.escalated', data: { episode_id: 'epsd_x', status: 'escalated', severity: 'high', alert_count: 1, reason: 'threshold' } },
      // @ts-expect-error a drift names its family
      { tenantId: 'acme', type: 'conformance.drift_detected', data: { ...samplePayload('conformance.drift_detected'), family: undefined } },
    ];
    expect(typed).toHaveLength(4);
    expect(Object.keys(WEBHOOK_PAYLOADS)).toHaveLength(19);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { movementEvent } from '../../test/fixtures/events.ts';
import { uuidv7 } from '../ids.ts';
import { contentHash } from '../json/canonical-json.ts';
import { instantOf } from '../../schemas/primitives/timestamp.ts';
import { createTenant } from '../tenants/tenants.ts';
import { acceptEvents, type PreparedEvent } from './accept-events.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'packed', 'USD');
});
afterAll(async () => db?.drop());

const RECEIVED_AT = new Date('2026-09-01T12:00:00Z');

// An event whose bytes are `raw` exactly (whatever their spacing), hashed from its value.
function prepared(externalId: string, raw: string): PreparedEvent {
  const value = JSON.parse(raw) as { occurred_at: string };
  return {
    tenantId: 'packed',
    eventId: uuidv7(RECEIVED_AT.getTime()),
    object: 'movement',
    externalId,
    sequence: null,
    rawEvent: Buffer.from(raw, 'utf8'),
    contentHash: contentHash(value),
    occurredAt: instantOf(value.occurred_at),
    receivedAt: RECEIVED_AT,
    correlationId: null,
    importId: null,
    historical: false,
  };
}

describe('acceptEvents: every event of a statement keeps its own bytes and hash', () => {
  it('stores each event exactly as given, whatever its length, in a group of many', async () => {
    // Lengths differ (spacing, multi-byte text, a long note), so a wrong offset shows.
    const events = [
      prepared('pk-1', JSON.stringify(movementEvent('pk-1'))),
      prepared('pk-2', JSON.stringify(movementEvent('pk-2'), null, 2)),
      prepared('pk-3', JSON.stringify({ ...movementEvent('pk-3'), note: 'café ✓ '.repeat(50) })),
      prepared('pk-4', ` ${JSON.stringify(movementEvent('pk-4'))}\n`),
    ];
    const outcomes = await acceptEvents(db.pool, events);
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    const { rows } = await db.pool.query<{ external_id: string; raw_event: Buffer; content_hash: Buffer; event_id: string }>(
      "SELECT external_id, raw_event, content_hash, event_id FROM inbox_events WHERE tenant_id = 'packed' AND external_id LIKE 'pk-%' ORDER BY external_id",
    );
    expect(rows.map((r) => r.external_id)).toEqual(['pk-1', 'pk-2', 'pk-3', 'pk-4']);
    rows.forEach((row, i) => {
      expect(row.raw_event.equals(events[i]!.rawEvent)).toBe(true);
      expect(row.content_hash.equals(events[i]!.contentHash)).toBe(true);
      expect(row.event_id).toBe(events[i]!.eventId);
    });
  });

  it('tells a replay of the same content from a conflict by the stored hash', async () => {
    const again = prepared('pk-2', JSON.stringify(movementEvent('pk-2')));
    const changed = prepared('pk-1', JSON.stringify({ ...movementEvent('pk-1'), occurred_at: '2026-08-01T00:00:00Z' }));
    const fresh = prepared('pk-5', JSON.stringify(movementEvent('pk-5')));
    const outcomes = await acceptEvents(db.pool, [again, changed, fresh]);
    expect(outcomes.map((o) => o.kind)).toEqual(['duplicate', 'conflict', 'accepted']);
  });

  it('refuses a hash that is not 32 bytes rather than misplace the others', async () => {
    const event = { ...prepared('pk-6', JSON.stringify(movementEvent('pk-6'))), contentHash: Buffer.alloc(31) };
    await expect(acceptEvents(db.pool, [event])).rejects.toThrow(/32 bytes/);
  });
});

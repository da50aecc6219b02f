import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusRecord } from '../platform/bus/port.ts';
import { ManualClock } from '../platform/clock.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/test-database.ts';
import { recordingStages } from './change-stages.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// A change record as a consumer reads it off the bus; only its head matters here.
const record = (eventId: string, historical: boolean): BusRecord => ({
  topic: 'canonical.movement',
  partition: 0,
  offset: '0',
  key: 'k',
  value: Buffer.from(JSON.stringify({ tenant_id: 'acme', event_id: eventId, external_id: eventId, occurred_at: '2026-09-01T12:00:00Z', received_at: '2026-09-01T12:00:01Z', historical, object: 'movement' })),
  headers: {},
});

describe('stage entries of a pipeline over change records', () => {
  it('writes one ok entry per event, with the detail its record asks for, once however often the batch comes', async () => {
    const handled: string[][] = [];
    const handle = recordingStages(
      { pool: db.pool, stage: 'detect', clock: new ManualClock(new Date('2026-09-01T12:00:02Z')), detailOf: (c) => (c.historical ? { evaluated: false } : null) },
      async (changes) => void handled.push(changes.map((c) => c.event_id)),
    );
    const [live, imported, another] = [randomUUID(), randomUUID(), randomUUID()];
    // One batch mixing both kinds, one event twice.
    const batch = [record(live, false), record(imported, true), record(another, true), record(live, false)];
    await handle(batch);
    await handle(batch);
    expect(handled).toEqual([
      [live, imported, another, live],
      [live, imported, another, live],
    ]);
    const { rows } = await db.pool.query(`SELECT event_id, stage, status, detail FROM event_stages WHERE tenant_id = 'acme' ORDER BY event_id`);
    expect(rows).toEqual(
      [
        { event_id: live, stage: 'detect', status: 'ok', detail: null },
        { event_id: imported, stage: 'detect', status: 'ok', detail: { evaluated: false } },
        { event_id: another, stage: 'detect', status: 'ok', detail: { evaluated: false } },
      ].sort((a, b) => (a.event_id < b.event_id ? -1 : 1)),
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { noteArrivals, sweepCoverage, type Arrival } from './coverage.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
});
afterAll(async () => db?.drop());

const T = Date.parse('2026-09-01T12:00:00Z');
const at = (minutes: number) => new Date(T + minutes * 60_000);
const arrival = (receivedMinutes: number): Arrival => ({ tenantId: 'acme', family: 'movement', receivedAt: at(receivedMinutes), occurredAt: at(receivedMinutes) });
const note = (arrivals: Arrival[], nowMinutes: number) => withTransaction(db.pool, (tx) => noteArrivals(tx, arrivals, at(nowMinutes)));
const sweep = (nowMinutes: number) => withTransaction(db.pool, (tx) => sweepCoverage(tx, at(nowMinutes)));
const state = async () => (await db.pool.query(`SELECT state, last_received_at FROM feed_coverage WHERE tenant_id = 'acme' AND family = 'movement'`)).rows[0];

describe('feed coverage', () => {
  it('recovers a silent feed only on a fresh arrival, so records judged late do not make it flap', async () => {
    expect(await note([arrival(0)], 0)).toEqual([]);
    expect((await sweep(120)).map((e) => e.type)).toEqual(['coverage.degraded']);

    // Detection catching up: a record received 30 minutes after the last, judged at 3 h.
    expect(await note([arrival(30)], 180)).toEqual([]);
    expect(await state()).toEqual({ state: 'degraded', last_received_at: at(30) });
    expect(await sweep(181)).toEqual([]);

    // The feed itself returns.
    expect(await note([arrival(200), arrival(30)], 200)).toEqual([
      { tenantId: 'acme', type: 'coverage.recovered', data: { reason: 'feed_silence', family: 'movement', silent_since: at(30).toISOString(), recovered_at: at(200).toISOString() } },
    ]);
    expect(await state()).toEqual({ state: 'active', last_received_at: at(200) });
    expect(await sweep(201)).toEqual([]);
  });
});

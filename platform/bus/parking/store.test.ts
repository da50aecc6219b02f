import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { ManualClock } from '../../clock.ts';
import type { BusRecord } from '../port.ts';
import { ParkedRecordStore } from './store.ts';

// A replay as two members of a group run it: claimed in a statement of its own, handled outside any
// transaction, its outcome written only while the claim is still the member's.
let db: TestDatabase;
const clock = new ManualClock('2026-11-29T03:00:00Z');
let store: ParkedRecordStore;
let offset = 0;

const record = (): BusRecord => ({
  topic: 'canonical.party',
  partition: 0,
  offset: `1:${++offset}`,
  key: 'acme/party/p-1',
  value: Buffer.from('{}'),
  headers: { tenant_id: 'acme' },
});

beforeAll(async () => {
  db = await createTestDatabase();
  store = new ParkedRecordStore(db.pool, clock);
});
afterAll(async () => db?.drop());
beforeEach(async () => {
  await db.pool.query('DELETE FROM parked_records');
  await store.park('graph', record(), new Error('poison'), 3);
  await store.requestReplay({ group: 'graph' });
});

// Backends of this database inside a transaction (other than the one asking): while one is open,
// the embedded log publishes nothing newer, to any group.
async function openTransactions(): Promise<number> {
  const { rows } = await db.pool.query<{ open: number }>(
    `SELECT count(*)::int AS open FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`,
  );
  return rows[0]!.open;
}

describe('ParkedRecordStore.replayNext', () => {
  it('holds no transaction open while the handler runs, and keeps other members off the record', async () => {
    let during: { open: number; other: boolean } | undefined;
    const replayed = await store.replayNext('graph', async () => {
      during = { open: await openTransactions(), other: await store.replayNext('graph', async () => undefined) };
    });
    expect(replayed).toBe(true);
    expect(during).toEqual({ open: 0, other: false });
    expect(await store.list({ group: 'graph' })).toEqual([expect.objectContaining({ status: 'replayed', updatedAt: clock.now() })]);
  });

  it('lets another member take a record whose claim expired, and ignores the late outcome of the first', async () => {
    let second: boolean | undefined;
    await store.replayNext('graph', async () => {
      clock.advance(5 * 60);
      second = await store.replayNext('graph', async () => Promise.reject(new Error('still failing')));
    });
    expect(second).toBe(true);
    // The second member's outcome stands: the first one's success came after its claim was taken.
    expect(await store.list({ group: 'graph' })).toEqual([expect.objectContaining({ status: 'parked', error: 'Error: still failing', attempts: 4 })]);
  });

  it('gives the claim back on a transient failure, so the record is taken again at once', async () => {
    await expect(store.replayNext('graph', async () => Promise.reject(Object.assign(new Error('gone'), { code: 'ECONNREFUSED' })))).rejects.toThrow('gone');
    const handled: string[] = [];
    expect(await store.replayNext('graph', async (r) => void handled.push(r.offset))).toBe(true);
    expect(handled).toHaveLength(1);
  });

  it('keeps a record discarded during its replay discarded', async () => {
    await store.replayNext('graph', async () => {
      expect(await store.discard({ group: 'graph' })).toHaveLength(1);
    });
    expect(await store.list({ group: 'graph' })).toEqual([expect.objectContaining({ status: 'discarded' })]);
  });
});

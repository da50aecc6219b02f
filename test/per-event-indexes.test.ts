import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const indexesOf = async (table: string) =>
  (
    await db.pool.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1`,
      [table],
    )
  ).rows;

// Tables written for every event carry only the indexes their readers go through: each index is
// one more entry per accepted event, per change record, per stage an event passes.

// Every read of the log goes by (stream, partition, writer_xid, position), never by position
// alone (decision 0045).
it("the log's table carries one index, the one its readers go through", async () => {
  expect(await indexesOf('outbox')).toEqual([{ name: 'outbox_log', definition: expect.stringMatching(/\(stream, partition, writer_xid, "?position"?\)$/) }]);
});

// Every read of the stage rows goes by the event, in id order (an event's history, the once-only
// check): the primary key serves both (decision 0052).
it('the stage table carries one index, its primary key by event', async () => {
  expect(await indexesOf('event_stages')).toEqual([{ name: 'event_stages_pkey', definition: expect.stringMatching(/UNIQUE INDEX .* \(tenant_id, event_id, id\)$/) }]);
});

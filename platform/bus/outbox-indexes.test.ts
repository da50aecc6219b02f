import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// Each index of the log's table is one more entry per accepted event and per change record; every
// read of the log goes by (stream, partition, writer_xid, position), never by position alone
// (decision 0045).
it("the log's table carries one index, the one its readers go through", async () => {
  const { rows } = await db.pool.query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'outbox'`,
  );
  expect(rows).toEqual([{ name: 'outbox_log', definition: expect.stringMatching(/\(stream, partition, writer_xid, "?position"?\)$/) }]);
});

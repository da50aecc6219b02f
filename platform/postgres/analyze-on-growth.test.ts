import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { AnalyzeOnGrowth } from './analyze-on-growth.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('CREATE TABLE growing (id int PRIMARY KEY)');
});
afterAll(async () => db?.drop());

const analysed = async () =>
  (await db.pool.query<{ n: number }>(`SELECT coalesce(analyze_count, 0)::int AS n FROM pg_stat_user_tables WHERE relname = 'growing'`)).rows[0]!.n;
const waitForStats = async (count: number) => {
  // The statistics view is updated asynchronously by the server; poll briefly.
  for (let i = 0; i < 100 && (await analysed()) < count; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return analysed();
};

describe('AnalyzeOnGrowth', () => {
  it('analyses once enough rows were added, then only after the table grew by the fraction', async () => {
    const growth = new AnalyzeOnGrowth(db.pool, ['growing'], { minRows: 100, growth: 0.5 });
    await db.pool.query('INSERT INTO growing SELECT generate_series(1, 99)');
    growth.note(99);
    await growth.settled();
    expect(await analysed()).toBe(0);

    await db.pool.query('INSERT INTO growing VALUES (100)');
    growth.note(1);
    await growth.settled();
    expect(await waitForStats(1)).toBe(1);
    const { rows } = await db.pool.query<{ tuples: number }>(`SELECT reltuples::int AS tuples FROM pg_class WHERE relname = 'growing'`);
    expect(rows[0]!.tuples).toBe(100);

    // Known size 100 now: the next ANALYZE needs max(100, 50) more rows.
    await db.pool.query('INSERT INTO growing SELECT generate_series(101, 199)');
    growth.note(99);
    await growth.settled();
    expect(await waitForStats(2)).toBe(1);
    await db.pool.query('INSERT INTO growing VALUES (200)');
    growth.note(1);
    await growth.settled();
    expect(await waitForStats(2)).toBe(2);
  });
});

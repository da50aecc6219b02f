import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { createPool, withTransaction, type Pool } from './pool.ts';

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  // One connection, so the next transaction gets whatever the failed one handed back.
  pool = createPool(db.url, 1);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('withTransaction', () => {
  it('survives a connection lost mid-transaction and does not hand it to the next user', async () => {
    // Checked out, the pool's own listener is off: without one of ours, the 'error' below throws.
    let listeners = 0;
    const killed = withTransaction(pool, async (client) => {
      listeners = client.listenerCount('error');
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await client.query('SELECT 1');
    });
    // The server's own report, or pg's once the socket has closed before the next query is sent:
    // which one comes first is a race between the two processes.
    await expect(killed).rejects.toThrow(/terminat|connection error/i);
    expect(listeners).toBeGreaterThan(0);

    const answer = await withTransaction(pool, async (client) => (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one);
    expect(answer).toBe(1);
  });

  it('rolls back what the work wrote when it throws, and keeps the connection', async () => {
    await db.pool.query('CREATE TABLE pool_probe (n int)');
    await expect(
      withTransaction(pool, async (client) => {
        await client.query('INSERT INTO pool_probe VALUES (1)');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const { rows } = await pool.query<{ count: string }>('SELECT count(*)::text AS count FROM pool_probe');
    expect(rows[0]!.count).toBe('0');
    expect(pool.totalCount).toBe(1);
  });
});

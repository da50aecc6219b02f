import pg from 'pg';
import { timestamptzParser } from './timestamptz.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// int8 and numeric come back as strings by default; money and counters are bigint end to end,
// so int8 is parsed as bigint and numeric stays a string for callers to convert deliberately.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));
// timestamptz as before, read faster in the shape PostgreSQL writes it (timestamptz.ts).
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, timestamptzParser(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ)));

export interface PoolSettings {
  synchronousCommit?: boolean;
  customPlans?: boolean;
  // For a pool of reads only: every transaction read-only, every statement cut off after this
  // long (the graph's read pool, whose connections so carry a read's budget without a round trip).
  readOnly?: boolean;
  statementTimeoutMs?: number;
}

export function createPool(connectionString: string, max: number, options: PoolSettings = {}): Pool {
  const settings = [
    // For writes whose loss in a database crash is acceptable (see the callers): the commit does
    // not wait for the WAL flush. Never used for accepted events.
    ...(options.synchronousCommit === false ? ['-c synchronous_commit=off'] : []),
    // For long-lived workers whose tables grow from nothing: a prepared statement's generic plan,
    // made while a table was empty, is kept until the table is next analysed (seen: a log read
    // taking seconds instead of milliseconds). Planning each execution with its values costs
    // far less than the work of a batch.
    ...(options.customPlans ? ['-c plan_cache_mode=force_custom_plan'] : []),
    ...(options.readOnly ? ['-c default_transaction_read_only=on'] : []),
    ...(options.statementTimeoutMs !== undefined ? [`-c statement_timeout=${Math.max(1, Math.floor(options.statementTimeoutMs))}`] : []),
  ];
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: 30_000,
    ...(settings.length > 0 ? { options: settings.join(' ') } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor a checked-out one: a connection ended between two statements of a transaction (a
  // terminated backend, a restart) emits 'error' on the client, which with no listener throws.
  // Its next statement fails on its own, and the pool drops a client it can no longer query.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

import type { Config } from '../config.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import { createPool, type Pool } from './pool.ts';

export interface Database {
  pool: Pool;
  url: string;
  // "embedded" when this service runs its own PostgreSQL from the data directory.
  mode: 'embedded' | 'external';
  close: () => Promise<void>;
}

// Connects to DATABASE_URL, or starts (or joins) the embedded PostgreSQL of the data directory.
// Closing stops the embedded server only when this process was the one that started it.
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'SVC_DATA_DIR' | 'SVC_PG_PORT' | 'SVC_PG_POOL_SIZE'>,
): Promise<Database> {
  if (config.DATABASE_URL) {
    const pool = createPool(config.DATABASE_URL, config.SVC_PG_POOL_SIZE);
    return { pool, url: config.DATABASE_URL, mode: 'external', close: () => pool.end() };
  }
  const server = await startEmbeddedPostgres({ dataDir: config.SVC_DATA_DIR, port: config.SVC_PG_PORT });
  const url = server.url();
  const pool = createPool(url, config.SVC_PG_POOL_SIZE);
  return {
    pool,
    url,
    mode: 'embedded',
    close: async () => {
      await pool.end();
      await server.stop();
    },
  };
}

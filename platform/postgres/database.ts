import type { Config } from '../config.ts';
import { startEmbeddedPostgres, stopEmbeddedPostgres, watchEmbeddedPostgres } from './embedded.ts';
import { createPool, type Pool } from './pool.ts';

export interface Database {
  pool: Pool;
  url: string;
  // "embedded" when this service runs its own PostgreSQL from the data directory.
  mode: 'embedded' | 'external';
  close: () => Promise<void>;
}

// What a long-running process is told about the embedded server it keeps running.
export interface EmbeddedWatchReports {
  onRestarted: () => void;
  onError: (error: unknown) => void;
}

// Connects to DATABASE_URL, or starts (or joins) the embedded PostgreSQL of the data directory.
// With `watch` (a long-running process), the embedded server is started again whenever it is
// found gone (embedded.ts, watchEmbeddedPostgres). Closing stops the embedded server only when
// this process was the one that started it, first or again.
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'SVC_DATA_DIR' | 'SVC_PG_PORT' | 'SVC_PG_POOL_SIZE'>,
  options: { watch?: EmbeddedWatchReports } = {},
): Promise<Database> {
  if (config.DATABASE_URL) {
    const pool = createPool(config.DATABASE_URL, config.SVC_PG_POOL_SIZE);
    return { pool, url: config.DATABASE_URL, mode: 'external', close: () => pool.end() };
  }
  const server = await startEmbeddedPostgres({ dataDir: config.SVC_DATA_DIR, port: config.SVC_PG_PORT });
  const watch = options.watch ? watchEmbeddedPostgres({ dataDir: config.SVC_DATA_DIR, port: server.port, ...options.watch }) : undefined;
  const url = server.url();
  const pool = createPool(url, config.SVC_PG_POOL_SIZE);
  return {
    pool,
    url,
    mode: 'embedded',
    close: async () => {
      const restarted = (await watch?.stop()) ?? false;
      await pool.end();
      if (server.owned || restarted) await stopEmbeddedPostgres(config.SVC_DATA_DIR);
    },
  };
}

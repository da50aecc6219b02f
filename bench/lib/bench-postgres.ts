// A fresh embedded PostgreSQL for one bench run, and the measure of what work costs on it.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmbeddedPostgres } from '../../platform/postgres/embedded.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { createPool, type Pool } from '../../platform/postgres/pool.ts';
import { postgresCpu } from './proc-cpu.ts';
import type { Teardown } from './teardown.ts';

// A migrated database on a server of its own in a temporary directory; the teardown ends the pool,
// stops the server and removes the directory.
export async function migratedPostgres(teardown: Teardown, name: string, connections = 2): Promise<{ pool: Pool; pgDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), `svc-bench-${name}-`));
  // PostgreSQL runs as the postgres user when we are root: it must reach its directory.
  await chmod(dataDir, 0o755);
  teardown.closers.push(() => rm(dataDir, { recursive: true, force: true }));
  const server = await startEmbeddedPostgres({ dataDir, port: 0 });
  teardown.closers.push(() => server.stop());
  const pool = createPool(server.url(), connections);
  teardown.closers.push(() => pool.end());
  await migrate(pool);
  return { pool, pgDir: join(dataDir, 'pg') };
}

export interface Spent {
  ms: number;
  // PostgreSQL CPU seconds (every process of the server).
  cpu: number;
}

// Adds the wall time and the server's CPU time a piece of work took to `into`.
export function pgMeasure(pgDir: string): (into: Spent, work: () => Promise<unknown>) => Promise<void> {
  const pgCpu = () => [...postgresCpu(pgDir).values()].reduce((a, b) => a + b, 0);
  return async (into, work) => {
    const cpu = pgCpu();
    const started = performance.now();
    await work();
    into.ms += performance.now() - started;
    into.cpu += pgCpu() - cpu;
  };
}

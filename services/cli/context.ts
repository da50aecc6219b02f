import { loadConfig, type Config } from '../../platform/config.ts';
import { resolveMasterKey } from '../../platform/crypto/master-key.ts';
import { requirePostgres } from '../../platform/engine-probes.ts';
import { openDatabase, type Database, type EmbeddedWatchReports } from '../../platform/postgres/database.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { tenantExists } from '../../platform/tenants/tenants.ts';

export interface CliContext {
  config: Config;
  db: Database;
  masterKey: Buffer;
}

// Every command talks to the same database as `svc up`: DATABASE_URL, or the embedded server of
// the data directory (joined when `svc up` is running, started for the command otherwise).
// Migrations are applied first, so any command works on a fresh data directory; a server that does
// not answer stops the command with one line naming its variable (exit code 1). `watch`: for a
// long-running process, which keeps the embedded server running.
export async function openContext(options: { watch?: EmbeddedWatchReports } = {}): Promise<CliContext> {
  const config = loadConfig();
  const db = await openDatabase(config, options);
  try {
    await requirePostgres(db.pool, { embedded: db.mode === 'embedded' });
    await migrate(db.pool);
    const masterKey = await resolveMasterKey(config.SVC_MASTER_KEY, config.SVC_DATA_DIR);
    return { config, db, masterKey };
  } catch (error) {
    await db.close();
    throw error;
  }
}

export async function withContext<T>(work: (context: CliContext) => Promise<T>): Promise<T> {
  const context = await openContext();
  try {
    return await work(context);
  } finally {
    await context.db.close();
  }
}

export class UsageError extends Error {}

// A command reading one tenant's things refuses a tenant that does not exist (exit 2), so a
// mistyped id is not taken for a tenant with nothing.
export async function requireTenant(context: CliContext, tenantId: string): Promise<void> {
  if (!(await tenantExists(context.db.pool, tenantId))) throw new UsageError(`no tenant ${tenantId}`);
}

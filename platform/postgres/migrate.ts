import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Pool } from './pool.ts';

const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../infra/postgres/', import.meta.url));

// Any fixed number shared by every process of the service: the advisory lock that serialises
// concurrent migrators (two `svc up` at once, or `svc migrate` beside a running service).
const MIGRATION_LOCK = 7_300_001;
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.up\.sql$/;

export interface Migration {
  version: number;
  name: string;
  path: string;
}

export async function listMigrations(dir = POSTGRES_MIGRATIONS_DIR): Promise<Migration[]> {
  const files = await readdir(dir);
  return files
    .map((file) => FILE_NAME.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ version: Number(match[1]), name: match[2]!, path: join(dir, match[0]) }))
    .sort((a, b) => a.version - b.version);
}

// Applies every numbered *.up.sql not yet recorded, each in its own transaction, in order.
// Returns the versions applied by this call.
export async function migrate(pool: Pool, dir = POSTGRES_MIGRATIONS_DIR): Promise<number[]> {
  const migrations = await listMigrations(dir);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
    );
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      const sql = await readFile(migration.path, 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`);
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}

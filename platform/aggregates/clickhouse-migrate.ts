import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from '@clickhouse/client';
import { identifier, parseTabSeparated, sql } from './clickhouse-escape.ts';

const CLICKHOUSE_MIGRATIONS_DIR = fileURLToPath(new URL('../../infra/clickhouse/', import.meta.url));

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

interface ClickHouseMigration {
  version: number;
  name: string;
  path: string;
}

async function listClickHouseMigrations(dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<ClickHouseMigration[]> {
  return (await readdir(dir))
    .map((file) => FILE_NAME.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ version: Number(match[1]), name: match[2]!, path: join(dir, match[0]) }))
    .sort((a, b) => a.version - b.version);
}

// The statements of one file, {database} replaced by the (checked) database name: comment lines
// dropped, split at each semicolon that ends a line. DDL holds no customer data and no string
// with a semicolon at a line end.
function statementsOf(text: string, database: string): string[] {
  const name = identifier(database).text;
  return text
    .split('\n')
    .filter((line) => !/^\s*--/.test(line))
    .join('\n')
    .split(/;[ \t]*$/m)
    .map((statement) => statement.trim().replaceAll('{database}', name))
    .filter((statement) => statement.length > 0);
}

// Applies the numbered files of infra/clickhouse in order. ClickHouse has no transactional DDL
// nor locks: every statement is written to be re-run harmlessly (IF NOT EXISTS), so two processes
// migrating at once at worst both apply a file. 0001 (the database and schema_migrations) is
// applied whenever it is not recorded; a file is recorded once all its statements ran.
// Returns the versions applied by this call.
export async function migrateClickHouse(client: ClickHouseClient, database: string, dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<number[]> {
  const db = identifier(database);
  const migrations = await listClickHouseMigrations(dir);
  const first = migrations[0];
  if (!first || first.version !== 1) throw new Error(`no 0001 migration in ${dir}`);
  const exists = parseTabSeparated(
    await (
      await client.query({
        query: sql`SELECT count() AS n FROM system.tables WHERE database = ${database} AND name = 'schema_migrations'`.text,
        format: 'TabSeparatedWithNames',
      })
    ).text(),
  );
  const done = new Set<number>();
  if (exists[0]?.n !== '0') {
    const rows = parseTabSeparated(
      await (await client.query({ query: sql`SELECT version FROM ${db}.schema_migrations`.text, format: 'TabSeparatedWithNames' })).text(),
    );
    for (const row of rows) done.add(Number(row.version));
  }
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    for (const statement of statementsOf(await readFile(migration.path, 'utf8'), database)) await client.command({ query: statement });
    await client.command({ query: sql`INSERT INTO ${db}.schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`.text });
    applied.push(migration.version);
  }
  return applied;
}

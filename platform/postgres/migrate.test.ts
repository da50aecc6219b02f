// Every migration can be undone: from the migrated schema, each down file in reverse order leaves
// no table of ours behind, and migrating up again rebuilds exactly the same schema (columns,
// constraints, indexes). A down file that forgets something, or an up file that a down cannot
// reverse, fails here.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { listMigrations, migrate } from './migrate.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

async function schema(): Promise<string[]> {
  const { rows } = await db.pool.query<{ line: string }>(
    `SELECT format('column %s.%s %s %s %s', table_name, column_name, data_type, is_nullable, coalesce(column_default, '')) AS line
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
     UNION ALL
     SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
       FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid <> 'schema_migrations'::regclass
     UNION ALL
     SELECT format('index %s', indexdef) FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
     ORDER BY 1`,
  );
  return rows.map((r) => r.line);
}

it('undoes every migration in reverse order, and migrates up to the same schema again', async () => {
  const before = await schema();
  expect(before.length).toBeGreaterThan(100);
  const migrations = await listMigrations();
  for (const migration of [...migrations].reverse()) {
    const down = await readFile(migration.path.replace(/\.up\.sql$/, '.down.sql'), 'utf8');
    await db.pool.query(down).catch((error: Error) => {
      throw new Error(`${migration.version}_${migration.name}.down.sql: ${error.message}`);
    });
    await db.pool.query('DELETE FROM schema_migrations WHERE version = $1', [migration.version]);
  }
  expect(await schema()).toEqual([]);
  expect(await migrate(db.pool)).toEqual(migrations.map((m) => m.version));
  expect(await schema()).toEqual(before);
});

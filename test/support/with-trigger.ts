import { randomUUID } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';

// A row trigger on `table` for as long as `work` runs: a test makes the database refuse (or wait
// at) one statement, as a store failing half-way through a change would. `body` is PL/pgSQL run
// before the row is written; the row then goes on unchanged.
export async function withTrigger<T>(pool: Pool, on: { table: string; before: 'INSERT' | 'UPDATE' | 'DELETE' }, body: string, work: () => Promise<T>): Promise<T> {
  const name = `test_${randomUUID().replaceAll('-', '')}`;
  await pool.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN ${on.before === 'DELETE' ? 'OLD' : 'NEW'}; END $$`);
  await pool.query(`CREATE TRIGGER ${name} BEFORE ${on.before} ON ${on.table} FOR EACH ROW EXECUTE FUNCTION ${name}()`);
  try {
    return await work();
  } finally {
    await pool.query(`DROP TRIGGER ${name} ON ${on.table}; DROP FUNCTION ${name}()`);
  }
}

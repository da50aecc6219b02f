import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import pg from 'pg';
import { createPool, type Pool } from '../../platform/postgres/pool.ts';

export interface TestDatabase {
  pool: Pool;
  url: string;
  drop: () => Promise<void>;
}

// A fresh, migrated database of its own for one test file, cloned from the run's template.
export async function createTestDatabase(): Promise<TestDatabase> {
  const pattern = inject('databaseUrlPattern');
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pattern.replace('{database}', 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  await admin.end();
  const url = pattern.replace('{database}', name);
  const pool = createPool(url, 8);
  return {
    pool,
    url,
    drop: async () => {
      await pool.end();
      const cleanup = new pg.Client({ connectionString: pattern.replace('{database}', 'postgres') });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

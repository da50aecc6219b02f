import type { Pool } from '../../platform/postgres/pool.ts';

// Readiness (GET /ready): the database answers a statement that touches no table; throws when not.
export async function pingDatabase(db: Pick<Pool, 'query'>): Promise<void> {
  await db.query('SELECT 1');
}

import type { Pool } from './pool.ts';

// Readiness (the API's GET /ready, the console's GET /console/v1/ready): the database answers a
// statement that touches no table; throws when not.
export async function pingDatabase(db: Pick<Pool, 'query'>): Promise<void> {
  await db.query('SELECT 1');
}

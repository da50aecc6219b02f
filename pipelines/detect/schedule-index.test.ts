import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexConditions } from '../../test/support/query-plans.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
}, 60_000);
afterAll(async () => db?.drop());

describe('the schedule index of subject_evaluations', () => {
  // Detection looks up one subject's row for every subject it writes (run.ts) and every band it
  // recomputes (services/detection/posture.ts). When the schedule's index could be searched by tenant (PostgreSQL 18
  // skips to a later key column), a planner without fresh statistics chose it over the primary
  // key and read the tenant's every row per lookup.
  it('cannot be searched by tenant: a lookup of one subject without the primary key finds no index condition on it', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      // Without the primary key and with scans of other kinds off, the planner takes the schedule
      // index if it can; what it can search the index by shows in the plan's index condition.
      await client.query('ALTER TABLE subject_evaluations DROP CONSTRAINT subject_evaluations_pkey');
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_bitmapscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (FORMAT JSON) SELECT outcomes FROM subject_evaluations
          WHERE tenant_id = 'acme' AND subject_kind = 'party' AND subject_id = 'p-1' AND mode = 'live'`,
      );
      const plan = rows[0]!['QUERY PLAN'];
      expect(JSON.stringify(plan)).toContain('subject_evaluations_due');
      expect(indexConditions(plan, 'subject_evaluations_due').join(' ')).not.toMatch(/tenant_id/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('still serves the schedule: the watermark of a tenant is read from it', async () => {
    // A tenant with a few thousand evaluations, and statistics that know it.
    await db.pool.query(
      `INSERT INTO subject_evaluations (tenant_id, subject_kind, subject_id, mode, ruleset_version, event_at, fact_at, evaluated_at, outcomes)
       SELECT 'acme', 'party', 'p-' || i, 'live', 0, timestamptz '2026-01-01' + i * interval '1 minute', timestamptz '2026-01-01', now(), '{}'
         FROM generate_series(1, 5000) AS i`,
    );
    await db.pool.query('ANALYZE subject_evaluations');
    const { rows } = await db.pool.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) SELECT max(event_at) FROM subject_evaluations WHERE tenant_id = 'acme' AND mode = 'live'`,
    );
    expect(JSON.stringify(rows[0]!['QUERY PLAN'])).toContain('subject_evaluations_due');
  });
});

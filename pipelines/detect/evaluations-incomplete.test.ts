import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';

// subject_evaluations.incomplete (infra/postgres/0016): unjudged when non-results (insufficient
// data, stale) are more than half of the detectors that apply.
describe('subject_evaluations.incomplete', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const cases: Array<[Record<string, string>, boolean]> = [
    [{}, false],
    [{ a: 'not_applicable', b: 'not_applicable' }, false],
    [{ a: 'insufficient_data', b: 'no_hit' }, false],
    [{ a: 'insufficient_data', b: 'stale', c: 'hit' }, true],
    [{ a: 'stale', b: 'not_applicable', c: 'not_applicable' }, true],
    [{ a: 'insufficient_data', b: 'no_hit', c: 'not_applicable', d: 'hit' }, false],
  ];

  it('is computed from the outcomes when a row is written, and again when they change', async () => {
    for (const [i, [outcomes, incomplete]] of cases.entries()) {
      const { rows } = await db.pool.query<{ incomplete: boolean }>(
        `INSERT INTO subject_evaluations (tenant_id, subject_kind, subject_id, mode, ruleset_version, event_at, fact_at, evaluated_at, outcomes)
         VALUES ('t', 'party', $1, 'live', 1, now(), now(), now(), $2) RETURNING incomplete`,
        [`p${i}`, outcomes],
      );
      expect([outcomes, rows[0]!.incomplete]).toEqual([outcomes, incomplete]);
    }
    const { rows } = await db.pool.query<{ incomplete: boolean }>(
      `UPDATE subject_evaluations SET outcomes = outcomes || '{"z": "stale"}' WHERE subject_id = 'p2' RETURNING incomplete`,
    );
    expect(rows[0]!.incomplete).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEvaluations, type SubjectOutcome } from './run.ts';
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

  // What the detect pipeline writes: one row per subject and mode, its outcomes merged across
  // triggers under one ruleset, and replaced when another ruleset judges.
  it('keeps other triggers\' outcomes under one ruleset, and none of another ruleset\'s', async () => {
    const outcome = (version: number, at: string, outcomes: Record<string, string>) =>
      ({
        work: { tenantId: 't', subject: { kind: 'party', id: 'merged' }, at: new Date(at), factAt: null },
        mode: 'live',
        ruleset: { version },
        evaluations: Object.entries(outcomes).map(([id, result]) => ({ detector: { id }, outcome: { outcome: result } })),
        forHits: null,
      }) as unknown as SubjectOutcome;
    const row = async () =>
      (await db.pool.query(`SELECT ruleset_version, outcomes, incomplete FROM subject_evaluations WHERE tenant_id = 't' AND subject_id = 'merged'`)).rows[0];
    const now = new Date('2026-09-01T00:00:00Z');
    await writeEvaluations(db.pool, [outcome(1, '2026-08-01T00:00:00Z', { control_a: 'insufficient_data', control_b: 'insufficient_data', big_out: 'no_hit' })], now);
    expect(await row()).toMatchObject({ ruleset_version: 1, incomplete: true });
    // A scheduled run of the same ruleset judges one detector: the others' outcomes stay.
    await writeEvaluations(db.pool, [outcome(1, '2026-08-02T00:00:00Z', { dormant: 'no_hit' })], now);
    expect((await row()).outcomes).toEqual({ control_a: 'insufficient_data', control_b: 'insufficient_data', big_out: 'no_hit', dormant: 'no_hit' });
    // A ruleset without the control detectors: judged on it alone, the party is no longer unjudged.
    await writeEvaluations(db.pool, [outcome(2, '2026-08-03T00:00:00Z', { big_out: 'no_hit', velocity: 'insufficient_data' })], now);
    expect(await row()).toEqual({ ruleset_version: 2, outcomes: { big_out: 'no_hit', velocity: 'insufficient_data' }, incomplete: false });
  });
});

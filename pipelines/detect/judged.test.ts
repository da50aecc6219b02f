import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';
import { markJudged } from './judged.ts';

const T0 = Date.parse('2026-02-17T07:00:00Z');
const HOUR = 3_600_000;
const item = (id: string, hours: number, options: { kind?: 'account' | 'party'; tenantId?: string } = {}): SubjectWork => ({
  tenantId: options.tenantId ?? 'acme',
  subject: { kind: options.kind ?? 'account', id },
  trigger: 'movement',
  at: new Date(T0 + hours * HOUR),
  change: { object: 'movement', external_id: 'm' } as SubjectWork['change'],
});
// The answer as subject → hours past T0.
const marks = (judged: Map<string, Date>) => Object.fromEntries([...judged].map(([key, at]) => [key.split('\u0000').join('/'), (at.getTime() - T0) / HOUR]));

describe('judged subjects', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('marks the latest instant plus the reach, and tells how far subjects had been judged beyond their earliest instant', async () => {
    expect(marks(await markJudged(db.pool, [item('A1', 9), item('A1', 5), item('P1', 3, { kind: 'party' })], HOUR))).toEqual({});
    const answer = await markJudged(
      db.pool,
      [
        // Judged to 10 h, beyond 8 h + 1 h.
        item('A1', 8),
        // Marked earlier, so the mark stays at 10 h.
        item('A1', 7),
        // Judged to 4 h, not beyond 3 h + 1 h.
        item('P1', 3, { kind: 'party' }),
        // Same id, other kind and other tenant: never judged.
        item('P1', 1),
        item('A1', 1, { tenantId: 'other' }),
      ],
      HOUR,
    );
    expect(marks(answer)).toEqual({ 'acme/account/A1': 10 });
    expect(marks(await markJudged(db.pool, [item('A1', 8.5), item('P1', 2.5, { kind: 'party' }), item('P1', 0.5)], HOUR))).toEqual({
      'acme/account/A1': 10,
      'acme/party/P1': 4,
      'acme/account/P1': 2,
    });
  });

  it('keeps a mark to the millisecond', async () => {
    const odd = (ms: number) => ({ ...item('C1', 0), at: new Date(T0 + ms) });
    await markJudged(db.pool, [odd(123_456_789)], 1);
    const { rows } = await db.pool.query(`SELECT judged_to FROM judged_subjects WHERE tenant_id = 'acme' AND subject_id = 'C1'`);
    expect((rows[0].judged_to as Date).toISOString()).toBe(new Date(T0 + 123_456_790).toISOString());
    // Asked at the millisecond before the mark, it was judged beyond; at the mark, not.
    expect([...(await markJudged(db.pool, [odd(123_456_788)], 1)).values()].map((at) => at.getTime())).toEqual([T0 + 123_456_790]);
    expect((await markJudged(db.pool, [odd(123_456_789)], 1)).size).toBe(0);
  });

  it('does not count the statement\'s own marks as an earlier judgement', async () => {
    expect(marks(await markJudged(db.pool, [item('B1', 20), item('B1', 15)], 0))).toEqual({});
    expect(marks(await markJudged(db.pool, [item('B1', 15)], 0))).toEqual({ 'acme/account/B1': 20 });
  });
});

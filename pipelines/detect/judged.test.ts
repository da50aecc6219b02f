import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';
import { JudgedSubjects, noteJudged } from './judged.ts';

const T0 = Date.parse('2026-02-17T07:00:00Z');
const HOUR = 3_600_000;
const change = { object: 'movement', external_id: 'm' } as SubjectWork['change'];
const item = (id: string, hours: number, options: { kind?: 'account' | 'party'; tenantId?: string; scheduled?: boolean } = {}): SubjectWork => ({
  tenantId: options.tenantId ?? 'acme',
  subject: { kind: options.kind ?? 'account', id },
  trigger: options.scheduled ? 'schedule' : 'movement',
  at: new Date(T0 + hours * HOUR),
  change: options.scheduled ? null : change,
});
const ids = (items: SubjectWork[]) => items.map((w) => `${w.tenantId}/${w.subject.kind}/${w.subject.id}@${(w.at.getTime() - T0) / HOUR}`);

describe('judged subjects', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('tells the subjects judged at an instant or later, by the latest instant noted for a fact', async () => {
    const judged = new JudgedSubjects();
    await noteJudged(db.pool, [item('A1', 10), item('A1', 5), item('P1', 3, { kind: 'party' }), item('S1', 50, { scheduled: true })]);
    // An earlier instant noted later does not move the mark back.
    await noteJudged(db.pool, [item('A1', 7)]);
    const asked = [
      item('A1', 10),
      item('A1', 11),
      item('P1', 3, { kind: 'party' }),
      // Same id, other kind and other tenant: never judged.
      item('P1', 3),
      item('A1', 1, { tenantId: 'other' }),
      // Only a scheduled evaluation: no fact judged.
      item('S1', 40),
    ];
    expect(ids(await judged.judgedBy(db.pool, asked))).toEqual(['acme/account/A1@10', 'acme/party/P1@3']);
  });

  it('counts evaluations in flight until they are released', async () => {
    const judged = new JudgedSubjects();
    const release = judged.hold([item('F1', 20), item('F1', 20)]);
    const other = judged.hold([item('F1', 8)]);
    expect(ids(await judged.judgedBy(db.pool, [item('F1', 20), item('F1', 21), item('F2', 1)]))).toEqual(['acme/account/F1@20']);
    release();
    release();
    expect(ids(await judged.judgedBy(db.pool, [item('F1', 20), item('F1', 8)]))).toEqual(['acme/account/F1@8']);
    other();
    expect(await judged.judgedBy(db.pool, [item('F1', 8)])).toEqual([]);
  });
});

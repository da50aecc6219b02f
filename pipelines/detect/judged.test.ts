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
const ids = (items: SubjectWork[]) => items.map((w) => `${w.tenantId}/${w.subject.kind}/${w.subject.id}@${(w.at.getTime() - T0) / HOUR}`);

describe('judged subjects', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('tells the subjects judged at an instant or later, by the latest instant marked', async () => {
    expect(await markJudged(db.pool, [item('A1', 10), item('A1', 5), item('P1', 3, { kind: 'party' })], [])).toEqual([]);
    const asked = [
      item('A1', 10),
      item('A1', 11),
      item('P1', 3, { kind: 'party' }),
      // Same id, other kind and other tenant: never judged.
      item('P1', 3),
      item('A1', 1, { tenantId: 'other' }),
    ];
    // An earlier instant marked later does not move the mark back.
    expect(ids(await markJudged(db.pool, [item('A1', 7)], asked))).toEqual(['acme/account/A1@10', 'acme/party/P1@3']);
  });

  it('does not count the statement\'s own marks as an earlier judgement', async () => {
    expect(await markJudged(db.pool, [item('B1', 20)], [item('B1', 15)])).toEqual([]);
    expect(ids(await markJudged(db.pool, [], [item('B1', 15), item('B1', 21)]))).toEqual(['acme/account/B1@15']);
  });
});

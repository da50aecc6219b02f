import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../platform/ids.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { createConsoleUser } from '../console/users.ts';
import { caseActions, episodeExists } from './store.ts';

// The case store's reads that several views share: the API and the console's timeline show a case
// action's actor as recorded, a case export shows a console user's email.
let db: TestDatabase;
const episode = uuidv7(Date.parse('2026-08-24T00:00:00Z'));
let userId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  for (const tenant of ['t-store', 't-other']) expect((await createTenant(db.pool, tenant, 'EUR')).kind).toBe('created');
  await db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ('t-store', $1, 'open', 'high', '2026-08-24T00:00:00Z', '2026-08-25T00:00:00Z', 1, 'open', NULL, '2026-08-24T00:00:00Z', '2026-08-25T00:00:00Z')`,
    [episode],
  );
  const created = await createConsoleUser(db.pool, { tenantId: 't-store', email: 'ana@example.test', role: 'analyst' }, new Date('2026-08-24T00:00:00Z'));
  if (created.kind !== 'created') throw new Error(created.kind);
  userId = created.user.user_id;
  // The same user id named by another tenant's case action must not resolve to this tenant's user.
  await db.pool.query(
    `INSERT INTO case_actions (tenant_id, episode_id, seq, at, actor, case_status, disposition, note) VALUES
       ('t-store', $1, 2, '2026-08-26T00:00:00Z', $2, 'closed', 'no_further_action', 'done'),
       ('t-store', $1, 1, '2026-08-25T00:00:00Z', 'key_ops', 'investigating', NULL, NULL),
       ('t-other', $1, 1, '2026-08-25T00:00:00Z', $2, 'investigating', NULL, NULL)`,
    [episode, `console:${userId}`],
  );
});
afterAll(async () => db?.drop());

describe('case store', () => {
  it('reads case actions oldest first, with the actor as recorded', async () => {
    const actions = await caseActions(db.pool, 't-store', episode);
    expect(actions.map((a) => [a.seq, a.at.toISOString(), a.actor, a.case_status, a.disposition, a.note])).toEqual([
      [1, '2026-08-25T00:00:00.000Z', 'key_ops', 'investigating', null, null],
      [2, '2026-08-26T00:00:00.000Z', `console:${userId}`, 'closed', 'no_further_action', 'done'],
    ]);
  });

  it('names a console user by email when asked, and only within the tenant', async () => {
    expect((await caseActions(db.pool, 't-store', episode, 'email')).map((a) => a.actor)).toEqual(['key_ops', 'ana@example.test']);
    expect((await caseActions(db.pool, 't-other', episode, 'email')).map((a) => a.actor)).toEqual([`console:${userId}`]);
  });

  it('knows an episode only in its tenant', async () => {
    expect(await episodeExists(db.pool, 't-store', episode)).toBe(true);
    expect(await episodeExists(db.pool, 't-other', episode)).toBe(false);
    expect(await episodeExists(db.pool, 't-store', uuidv7(Date.now()))).toBe(false);
  });
});

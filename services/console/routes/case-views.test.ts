// Views of a case never push its story out of the capped audit lists: the timeline and the case
// file read the story (assignments, report proposals and decisions, exports) apart from the views,
// which are capped on their own (timeline) or counted (case file). Against a real PostgreSQL.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { uuidv7 } from '../../../platform/ids.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { refreshCaseInbox } from '../../cases/inbox.ts';
import { TIMELINE_ACTIONS_MAX, TIMELINE_VIEWS_MAX, caseTimelineSchema } from '../../../schemas/console/cases.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../app.ts';
import { createConsole } from '../wiring.ts';
import { signIn, type ConsoleSession } from './console-session.test-kit.ts';

let db: TestDatabase;
let app: FastifyInstance;
const clock = new ManualClock('2026-09-10T12:00:00Z');
type Session = ConsoleSession;
let ana: Session;
let sue: Session;
let episodeId: string;

const call = (s: Session, method: 'GET' | 'POST', url: string, body?: unknown) =>
  app.inject({
    method,
    url,
    headers: { cookie: `${SESSION_COOKIE}=${s.cookie}`, [CSRF_HEADER]: s.csrf, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });

const session = (email: string, role: 'analyst' | 'supervisor'): Promise<Session> => signIn(app, db.pool, clock.now(), 'acme', email, role);

// An open case with one alert, as detection writes it.
async function seedCase(openedAt: string): Promise<string> {
  const id = uuidv7(Date.parse(openedAt));
  await db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ('acme', $1, 'open', 'high', $2, $2, 1, 'open', NULL, $2, $2)`,
    [id, openedAt],
  );
  await db.pool.query(`INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ('acme', $1, 'party', 'p-1', 'subject', $2)`, [id, openedAt]);
  await db.pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id, window_from, window_to,
                         score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     VALUES ('acme', $1, 'live', 1, 'structuring', 1, 'structuring', 'party', 'p-1', 'p-1', $2::timestamptz - interval '7 days', $2, 0.8, 'high', 'open', 'summary', 'explanation', 1, $3, $2, $2)`,
    [uuidv7(Date.parse(openedAt)), openedAt, id],
  );
  await refreshCaseInbox(db.pool, 'acme', [id]);
  return id;
}

// Page loads after the story: each writes episode.viewed rows as the case page does (three a load),
// and alert pages write alert.viewed naming the episode. Written in one statement, at one second
// apart, for speed; the rows are those the routes write.
async function viewMany(loads: number, by: Session, from: Date): Promise<void> {
  await db.pool.query(
    `INSERT INTO console_audit (tenant_id, actor_kind, actor_user_id, action, subject, details, at)
     SELECT 'acme', 'user', $1, v.action, v.subject, v.details, $2::timestamptz + make_interval(secs => n)
       FROM generate_series(1, $3::int) n,
            LATERAL (VALUES ('episode.viewed', $4, '{"via":"case"}'::jsonb), ('episode.viewed', $4, '{"via":"timeline"}'::jsonb),
                            ('alert.viewed', 'alrt_x', jsonb_build_object('episode_id', $4::text))) v(action, subject, details)`,
    [by.userId, from.toISOString(), loads, `epsd_${episodeId}`],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  ({ app } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: db.pool, masterKey: randomBytes(32), clock, logger: false }));
  await app.ready();
  [ana, sue] = await Promise.all([session('ana@example.com', 'analyst'), session('sue@example.com', 'supervisor')]);
  episodeId = await seedCase('2026-09-01T00:00:00Z');
  // The story, early in the case's life: taken, a report proposed and rejected, a case file exported.
  const ref = `epsd_${episodeId}`;
  expect((await call(ana, 'POST', '/console/v1/cases/assign', { episode_ids: [ref], user_id: ana.userId })).statusCode).toBe(200);
  expect((await call(ana, 'POST', `/console/v1/cases/${ref}/report`, { narrative: 'Cash in, wired out the same day.' })).statusCode).toBe(201);
  expect((await call(sue, 'POST', `/console/v1/cases/${ref}/report/decision`, { decision: 'reject', reason: 'Name the movements.' })).statusCode).toBe(200);
  expect((await call(ana, 'GET', `/console/v1/cases/${ref}/file.html`)).statusCode).toBe(200);
  // Then far more views than either cap holds.
  clock.advance(60);
  await viewMany(1_000, ana, clock.now());
  clock.advance(1_100);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

const STORY = ['case.assigned', 'case.report_proposed', 'case.report_rejected', 'case.exported'];

describe('views of a case and its story', () => {
  it('keeps the whole story in the timeline, with the latest views capped apart and counted', async () => {
    const res = await call(sue, 'GET', `/console/v1/cases/epsd_${episodeId}/timeline`);
    expect(res.statusCode, res.body).toBe(200);
    const timeline = caseTimelineSchema.parse(res.json());
    const audit = timeline.entries.filter((e) => e.kind === 'audit');
    const story = audit.filter((e) => !e.action.endsWith('.viewed')).map((e) => e.action);
    expect(story).toEqual(expect.arrayContaining(STORY));
    expect(audit.length - story.length).toBe(TIMELINE_VIEWS_MAX);
    // 3,000 rows of page loads and this read of the timeline.
    expect(timeline.views).toEqual({ shown: TIMELINE_VIEWS_MAX, total: 3_000 + 1 });
    expect(3_000).toBeGreaterThan(TIMELINE_ACTIONS_MAX);
    expect(timeline.truncated).toBe(false);
    // The latest views are the ones shown: this read is among them.
    expect(audit.at(-1)).toMatchObject({ action: 'episode.viewed', details: { via: 'timeline' } });
  });

  it('carries the whole story in the exported case file, and counts the views instead of listing them', async () => {
    const res = await call(ana, 'GET', `/console/v1/cases/epsd_${episodeId}/file.html`);
    expect(res.statusCode).toBe(200);
    const trail = res.body.slice(res.body.indexOf('<section id="audit">'));
    for (const action of STORY) expect(trail).toContain(`<td>${action}</td>`);
    expect(trail).not.toContain('.viewed</td>');
    expect(trail).not.toContain('Only the latest');
    expect(trail).toMatch(/Views of the case, not listed: 3001 by 2 users, 2026-09-10 12:01:01 UTC – 2026-09-10 12:19:20 UTC\./);
  });
});

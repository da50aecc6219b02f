import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../platform/config.ts';
import { auditPageSchema, consoleEpisodeDetailSchema } from '../../../schemas/console/cases.ts';
import { alertQueuePageSchema, consoleMovementPageSchema, partyPageSchema } from '../../../schemas/console/routes.ts';
import { problemSchema } from '../../../schemas/problem.ts';
import { uuidv7 } from '../../../platform/ids.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../app.ts';
import { createConsole } from '../wiring.ts';
import { signIn, type ConsoleSession } from './console-session.test-kit.ts';

let world: DetectionWorld;
let app: FastifyInstance;
type Session = ConsoleSession;
let analyst: Session;
let analyst2: Session;
let supervisor: Session;
let outsider: Session;
const ids = {} as Record<'episode' | 'otherEpisode' | 'alertA' | 'alertB' | 'alertC' | 'otherAlert', string>;

type Res = Awaited<ReturnType<FastifyInstance['inject']>>;
const call = (s: Session, method: 'GET' | 'POST', url: string, body?: unknown, csrf = true) =>
  app.inject({
    method,
    url,
    headers: { cookie: `${SESSION_COOKIE}=${s.cookie}`, ...(csrf ? { [CSRF_HEADER]: s.csrf } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
function expectProblem(res: Res, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json().code).toBe(code);
}

const session = (tenant: string, email: string, role: 'analyst' | 'supervisor'): Promise<Session> => signIn(app, world.api.db.pool, world.api.clock.now(), tenant, email, role);

// Alerts and episodes are the detection pipeline's; here they are written directly.
async function seedAlert(tenant: string, a: { subject: [string, string]; party?: string; severity: string; status?: string; detector?: string; at: string; episode?: string }) {
  const id = uuidv7(Date.parse(a.at));
  await world.api.db.pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id, window_from, window_to,
                         score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     VALUES ($1, $2, 'live', 1, $3, 1, 'structuring', $4, $5, $6, $7::timestamptz - interval '7 days', $7, 0.8, $8, $9, 'summary', 'explanation', 1, $10, $7, $7)`,
    [tenant, id, a.detector ?? 'structuring', a.subject[0], a.subject[1], a.party ?? (a.subject[0] === 'party' ? a.subject[1] : null), a.at, a.severity, a.status ?? 'open', a.episode ?? null],
  );
  await world.api.db.pool.query(
    `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence) VALUES ($1, $2, 1, $3, $3, 0.8, $4, '{"movements":["m-1"]}')`,
    [tenant, id, a.at, a.severity],
  );
  return id;
}
async function seedEpisode(tenant: string, members: Array<[string, string]>) {
  const id = uuidv7(Date.now());
  await world.api.db.pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ($1, $2, 'open', 'high', '2026-08-01T00:00:00Z', '2026-08-30T00:00:00Z', 2, 'open', NULL, '2026-08-30T00:00:00Z', '2026-08-30T00:00:00Z')`,
    [tenant, id],
  );
  for (const [kind, subject] of members) {
    await world.api.db.pool.query(`INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ($1, $2, $3, $4, 'subject', now())`, [tenant, id, kind, subject]);
  }
  return id;
}

beforeAll(async () => {
  world = await startDetectionWorld();
  const tenant = world.api.tenantId;
  await createTenant(world.api.db.pool, 'other', 'EUR');
  await world.party('alice');
  await world.party('bob');
  await world.account('alice-acct', 'alice');
  await world.account('bob-acct', 'bob');
  await world.movement({ id: 'mv-1', from: ['alice-acct', 'alice'], to: ['bob-acct', 'bob'], value: 12_500, at: '2026-08-20T10:00:00Z' });
  await world.settle();
  ({ app } = await createConsole({
    config: loadConfig({ LOG_LEVEL: 'silent', SVC_CONSOLE_MAX_BODY_BYTES: '4096' }),
    pool: world.api.db.pool,
    masterKey: world.api.masterKey,
    clock: world.api.clock,
    logger: false,
  }));
  await app.ready();
  analyst = await session(tenant, 'ana@example.com', 'analyst');
  analyst2 = await session(tenant, 'ben@example.com', 'analyst');
  supervisor = await session(tenant, 'sue@example.com', 'supervisor');
  outsider = await session('other', 'out@example.com', 'supervisor');
  ids.episode = await seedEpisode(tenant, [['party', 'alice'], ['account', 'alice-acct']]);
  ids.otherEpisode = await seedEpisode('other', [['party', 'zed']]);
  ids.alertA = await seedAlert(tenant, { subject: ['account', 'alice-acct'], party: 'alice', severity: 'high', at: '2026-08-30T10:00:00Z', episode: ids.episode });
  ids.alertB = await seedAlert(tenant, { subject: ['party', 'alice'], severity: 'critical', detector: 'rapid_movement', at: '2026-08-29T10:00:00Z', episode: ids.episode });
  ids.alertC = await seedAlert(tenant, { subject: ['party', 'bob'], severity: 'low', status: 'closed', at: '2026-08-31T10:00:00Z' });
  for (let i = 0; i < 5; i++) await seedAlert(tenant, { subject: ['party', 'bob'], severity: 'medium', at: `2026-07-0${i + 1}T10:00:00Z` });
  ids.otherAlert = await seedAlert('other', { subject: ['party', 'zed'], severity: 'high', at: '2026-08-30T10:00:00Z' });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await world?.close();
});

describe('alert queue', () => {
  it('lists the tenant\'s live alerts newest first, in pages, and never another tenant\'s', async () => {
    const first = await call(analyst, 'GET', '/console/v1/alerts?limit=3');
    expect(first.statusCode).toBe(200);
    const body = alertQueuePageSchema.parse(first.json());
    expect(body.data.map((a) => a.alert_id)).toEqual([`alrt_${ids.alertC}`, `alrt_${ids.alertA}`, `alrt_${ids.alertB}`]);
    expect(body.data[1]).toMatchObject({ detector: 'structuring', severity: 'high', status: 'open', subject: { kind: 'account', external_id: 'alice-acct' }, episode_id: `epsd_${ids.episode}` });
    expect(first.json().data[1].evidence).toBeUndefined();
    expect(body.has_more).toBe(true);
    // A cursor is bound to its filters and order.
    expectProblem(await call(analyst, 'GET', `/console/v1/alerts?limit=3&sort=oldest&cursor=${encodeURIComponent(body.next_cursor!)}`), 400, 'svc:request/invalid_parameter');
    const second = await call(analyst, 'GET', `/console/v1/alerts?limit=3&cursor=${encodeURIComponent(body.next_cursor!)}`);
    expect(second.json().data).toHaveLength(3);
    const all = alertQueuePageSchema.parse((await call(analyst, 'GET', '/console/v1/alerts?limit=200')).json()).data;
    expect(all).toHaveLength(8);
    expect(all.map((a) => a.alert_id)).not.toContain(`alrt_${ids.otherAlert}`);
  });

  it('filters by status, severity, detector, subject and age, and sorts by severity or oldest first', async () => {
    const get = async (q: string) => alertQueuePageSchema.parse((await call(analyst, 'GET', `/console/v1/alerts?${q}`)).json()).data.map((a) => a.alert_id);
    expect(await get('status=closed')).toEqual([`alrt_${ids.alertC}`]);
    expect(await get('severity=critical')).toEqual([`alrt_${ids.alertB}`]);
    expect(await get('detector=rapid_movement')).toEqual([`alrt_${ids.alertB}`]);
    expect(await get('subject=alice-acct&subject_kind=account')).toEqual([`alrt_${ids.alertA}`]);
    // The test clock stands at 2026-09-01T12:00Z: 72 hours reach back to 2026-08-29T12:00Z.
    expect(await get('max_age_h=72')).toEqual([`alrt_${ids.alertC}`, `alrt_${ids.alertA}`]);
    const bySeverity = await get('sort=severity&status=open');
    expect(bySeverity.slice(0, 2)).toEqual([`alrt_${ids.alertB}`, `alrt_${ids.alertA}`]);
    // Severity order pages through the rank boundary without loss or repeat.
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const res = alertQueuePageSchema.parse((await call(analyst, 'GET', `/console/v1/alerts?sort=severity&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json());
      paged.push(...res.data.map((a) => a.alert_id));
      cursor = res.next_cursor;
    } while (cursor);
    expect(paged).toHaveLength(8);
    expect(new Set(paged).size).toBe(8);
    expect(paged[7]).toBe(`alrt_${ids.alertC}`);
    expect((await get('sort=oldest&limit=1'))[0]).not.toBe(`alrt_${ids.alertC}`);
  });

  it('answers malformed parameters with every error at once', async () => {
    const res = await call(analyst, 'GET', '/console/v1/alerts?status=maybe&severity=huge&limit=500&max_age_h=-1&sort=random&subject_kind=account');
    expectProblem(res, 400, 'svc:request/invalid_parameter');
    expect(problemSchema.parse(res.json()).errors?.map((e) => e.path).sort()).toEqual(['limit', 'max_age_h', 'severity', 'sort', 'status', 'subject_kind']);
    expectProblem(await call(analyst, 'GET', '/console/v1/alerts?cursor=forged.cursor'), 400, 'svc:request/invalid_parameter');
  });

  it('needs a session', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/console/v1/alerts' }), 401, 'svc:console/unauthenticated');
  });
});

describe('alert and episode detail', () => {
  it('shows an alert with its evidence and audits the view under its case', async () => {
    const res = await call(analyst, 'GET', `/console/v1/alerts/alrt_${ids.alertA}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ alert_id: `alrt_${ids.alertA}`, episode_id: `epsd_${ids.episode}`, explanation: 'explanation', evidence_history: [{ seq: 1 }] });
  });

  it('answers another tenant\'s ids and malformed ids with a governed 404', async () => {
    expectProblem(await call(analyst, 'GET', `/console/v1/alerts/alrt_${ids.otherAlert}`), 404, 'svc:resource/not_found');
    expectProblem(await call(analyst, 'GET', `/console/v1/episodes/epsd_${ids.otherEpisode}`), 404, 'svc:resource/not_found');
    expectProblem(await call(analyst, 'GET', '/console/v1/episodes/not-an-id'), 404, 'svc:resource/not_found');
    expectProblem(await call(outsider, 'POST', `/console/v1/episodes/epsd_${ids.episode}/status`, { status: 'investigating', reason: 'x' }), 404, 'svc:resource/not_found');
    expectProblem(await call(outsider, 'GET', '/console/v1/parties/alice'), 404, 'svc:resource/not_found');
    expectProblem(await call(analyst, 'GET', `/console/v1/audit?episode_id=epsd_${ids.otherEpisode}`), 404, 'svc:resource/not_found');
  });

  it('shows an episode with its alerts, assignee and audit, newest first', async () => {
    const res = await call(analyst, 'GET', `/console/v1/episodes/epsd_${ids.episode}`);
    expect(res.statusCode).toBe(200);
    const body = consoleEpisodeDetailSchema.parse(res.json());
    expect(body.alerts.map((a) => a.alert_id)).toEqual([`alrt_${ids.alertA}`, `alrt_${ids.alertB}`]);
    expect(body.assignee).toBeNull();
    expect(body.audit.map((e) => e.action)).toEqual(['episode.viewed', 'alert.viewed']);
    expect(body.audit[0]).toMatchObject({ actor_email: 'ana@example.com', actor_kind: 'user' });
  });
});

describe('case actions', () => {
  it('lets an analyst take an unassigned case but not give it to someone else; a supervisor assigns anyone', async () => {
    const url = `/console/v1/episodes/epsd_${ids.episode}/assign`;
    expectProblem(await call(analyst, 'POST', url, { user_id: analyst2.userId }), 403, 'svc:auth/insufficient_scope');
    const taken = await call(analyst, 'POST', url, { user_id: analyst.userId });
    expect(taken.statusCode).toBe(200);
    expect(taken.json().assignee).toEqual({ user_id: analyst.userId, email: 'ana@example.com' });
    // Another analyst cannot take it over.
    expectProblem(await call(analyst2, 'POST', url, { user_id: analyst2.userId }), 403, 'svc:auth/insufficient_scope');
    expectProblem(await call(supervisor, 'POST', url, { user_id: outsider.userId }), 400, 'svc:validation/schema');
    const moved = await call(supervisor, 'POST', url, { user_id: analyst2.userId });
    expect(moved.json().assignee).toMatchObject({ email: 'ben@example.com' });
    expect(moved.json().audit[0]).toMatchObject({ action: 'case.assigned', actor_email: 'sue@example.com', details: { from: analyst.userId, to: analyst2.userId } });
    expectProblem(await call(analyst, 'POST', url, { user_id: analyst.userId }, false), 403, 'svc:console/csrf_failed');
  });

  it('changes status and disposition through the case pipeline, with a mandatory reason, the outgoing events and an audit row', async () => {
    const base = `/console/v1/episodes/epsd_${ids.episode}`;
    const missing = await call(analyst, 'POST', `${base}/status`, { status: 'investigating' });
    expectProblem(missing, 400, 'svc:validation/schema');
    expect(missing.json().errors[0].path).toBe('reason');
    expectProblem(await call(analyst, 'POST', `${base}/status`, { status: 'investigating', reason: '   ' }), 400, 'svc:validation/schema');
    expectProblem(await call(analyst, 'POST', `${base}/status`, { status: 'investigating', reason: 'x'.repeat(2001) }), 400, 'svc:validation/schema');
    const nul = await call(analyst, 'POST', `${base}/status`, { status: 'investigating', reason: 'called\u0000back' });
    expectProblem(nul, 400, 'svc:validation/schema');
    expect(nul.json().errors.map((e: { path: string }) => e.path)).toEqual(['reason']);
    expectProblem(await call(analyst, 'POST', `${base}/status`, { status: 'closed', reason: 'done' }), 400, 'svc:validation/schema');
    expectProblem(await call(analyst, 'POST', `${base}/status`, '{"status":'), 400, 'svc:request/malformed_json');
    expectProblem(await call(analyst, 'POST', `${base}/status`, { status: 'investigating', reason: 'y'.repeat(5000) }), 413, 'svc:request/payload_too_large');

    const investigating = await call(analyst, 'POST', `${base}/status`, { status: 'investigating', reason: 'looking at the deposits' });
    expect(investigating.statusCode).toBe(200);
    expect(investigating.json()).toMatchObject({ case_status: 'investigating', case_history: [{ case_status: 'investigating', note: 'looking at the deposits', actor: `console:${analyst.userId}` }] });
    expect(investigating.json().audit[0]).toMatchObject({ action: 'case.status_changed', details: { status: 'investigating', reason: 'looking at the deposits', changed: true } });

    const disposed = await call(analyst, 'POST', `${base}/disposition`, { disposition: 'false_positive', reason: 'payroll' });
    expect(disposed.json()).toMatchObject({ case_status: 'closed', disposition: 'false_positive', status: 'resolved' });
    const { rows } = await world.api.db.pool.query<{ type: string }>(`SELECT type FROM outgoing_events WHERE tenant_id = $1 AND data ->> 'episode_id' = $2 ORDER BY created_at, type`, [world.api.tenantId, `epsd_${ids.episode}`]);
    expect(rows.map((r) => r.type)).toEqual(expect.arrayContaining(['case.status_changed', 'case.disposed', 'episode.resolved']));

    const audit = await call(analyst, 'GET', `/console/v1/audit?episode_id=epsd_${ids.episode}&limit=2`);
    expect(auditPageSchema.parse(audit.json()).data.map((e) => e.action)).toEqual(['case.disposed', 'case.status_changed']);
    expect(audit.json().has_more).toBe(true);
    await expect(world.api.db.pool.query('DELETE FROM console_audit')).rejects.toThrow(/append-only/);
  });
});

describe('party view and network', () => {
  it('shows a party with hashed identifiers, its accounts and the posture with reasons', async () => {
    const res = await call(analyst, 'GET', '/console/v1/parties/alice');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.party.external_id).toBe('alice');
    expect(JSON.stringify(body)).not.toContain('ada@example.com');
    for (const identifier of body.party.identifiers) expect(identifier.value_hash).toMatch(/^hmac-sha256:/);
    expect(partyPageSchema.parse(body).accounts.map((a) => a.external_id)).toEqual(['alice-acct']);
    expect(body.posture).toMatchObject({ band: expect.any(String), reasons: expect.any(Array) });
    const movements = await call(analyst, 'GET', '/console/v1/parties/alice/movements?direction=out');
    expect(consoleMovementPageSchema.parse(movements.json()).data.map((m) => [m.external_id, m.parties])).toEqual([['mv-1', { debit: 'alice', credit: 'bob' }]]);
    expectProblem(await call(analyst, 'GET', '/console/v1/parties/nobody/movements'), 404, 'svc:resource/not_found');
    // A window written with offsets PostgreSQL itself refuses (past ±15:59), read as instants.
    const window = (from: string, to: string) => call(analyst, 'GET', `/console/v1/parties/alice/movements?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    const exact = await window('2026-08-21T09:00:00+23:00', '2026-08-19T14:00:00-20:00');
    expect(exact.statusCode, exact.body).toBe(200);
    expect(exact.json().data.map((m: { external_id: string }) => m.external_id)).toEqual(['mv-1']);
    expect((await window('2026-08-21T09:00:01+23:00', '2026-08-21T09:00:02+23:00')).json().data).toEqual([]);
  });

  it('posture reasons name the open alerts behind the band', async () => {
    const bob = (await call(analyst, 'GET', '/console/v1/parties/bob')).json();
    expect(bob.posture.reasons).toEqual([{ detector: 'structuring', typology: 'structuring', severity: 'medium', open_alerts: 5, latest_at: '2026-07-05T10:00:00.000Z' }]);
  });

  it('draws the ego network with open alert counts, and paths between parties', async () => {
    const res = await call(analyst, 'GET', '/console/v1/network/bob?depth=2');
    expect(res.statusCode).toBe(200);
    const nodes = res.json().nodes as Array<{ id: string; open_alerts: number }>;
    expect(nodes.find((n) => n.id === 'party:bob')?.open_alerts).toBe(5);
    expect(nodes.every((n) => typeof n.open_alerts === 'number')).toBe(true);
    expectProblem(await call(analyst, 'GET', '/console/v1/network/bob?depth=4'), 400, 'svc:request/invalid_parameter');
    expectProblem(await call(outsider, 'GET', '/console/v1/network/bob'), 404, 'svc:resource/not_found');
    const paths = await call(analyst, 'GET', '/console/v1/paths?from=alice&to=bob');
    expect(paths.statusCode).toBe(200);
    expect(paths.json().paths.length).toBeGreaterThan(0);
    expectProblem(await call(analyst, 'GET', '/console/v1/paths?from=alice'), 400, 'svc:request/invalid_parameter');
  });
});

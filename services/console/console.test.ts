import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { loadConfig } from '../../platform/config.ts';
import { createPool } from '../../platform/postgres/pool.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { problemSchema } from '../../schemas/problem.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { withTrigger } from '../../test/support/with-trigger.ts';
import { CSRF_HEADER, SESSION_COOKIE } from './app.ts';
import { createConsoleUser, disableConsoleUser, listConsoleUsers, unlockConsoleUser } from './users.ts';
import { createConsole } from './wiring.ts';

let db: TestDatabase;
let app: FastifyInstance;
const clock = new ManualClock('2026-09-01T12:00:00Z');
const NEW_PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  await createTenant(db.pool, 'other', 'EUR');
  ({ app } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent', SVC_CONSOLE_MAX_BODY_BYTES: '2048' }), pool: db.pool, masterKey: randomBytes(32), clock, logger: false }));
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

type Res = Awaited<ReturnType<FastifyInstance['inject']>>;

function expectProblem(res: Res, status: number, code: string) {
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.statusCode).toBe(status);
  expect(res.json().code).toBe(code);
}

const setCookie = (res: Res): string => {
  const header = res.headers['set-cookie'];
  return String(Array.isArray(header) ? header[0] : header);
};
const tokenOf = (res: Res) => /svc_console=([^;]*)/.exec(setCookie(res))![1]!;

const login = (tenant: string, email: string, password: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ tenant, email, password }) });

interface Session {
  cookie: string;
  csrf: string;
}
const as = (s: Session, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, csrf: string | null = s.csrf) =>
  app.inject({
    method,
    url,
    headers: {
      cookie: `${SESSION_COOKIE}=${s.cookie}`,
      ...(csrf !== null ? { [CSRF_HEADER]: csrf } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });

// A user created by the operator, logged in once and past the one-time password.
async function readyUser(tenant: string, email: string): Promise<Session & { password: string }> {
  const created = await createConsoleUser(db.pool, { tenantId: tenant, email, role: 'analyst' }, clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
  const res = await login(tenant, email, created.password);
  expect(res.statusCode).toBe(200);
  const session = { cookie: tokenOf(res), csrf: res.json().csrf_token as string };
  const changed = await as(session, 'POST', '/console/v1/password', { current_password: created.password, new_password: NEW_PASSWORD });
  expect(changed.statusCode).toBe(200);
  return { ...session, password: NEW_PASSWORD };
}

async function auditOf(subject: string) {
  const { rows } = await db.pool.query<{ action: string; actor_kind: string; details: Record<string, unknown> }>('SELECT action, actor_kind, details FROM console_audit WHERE subject = $1 ORDER BY audit_id', [subject]);
  return rows;
}
const userId = async (tenant: string, email: string) =>
  (await db.pool.query<{ user_id: string }>('SELECT user_id FROM console_users WHERE tenant_id = $1 AND lower(email) = lower($2)', [tenant, email])).rows[0]!.user_id;

describe('users and passwords', () => {
  it('stores only a scrypt hash with its parameters, and refuses a second user with the same email in any case', async () => {
    const created = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'Hash@Example.com', role: 'supervisor' }, clock.now());
    if (created.kind !== 'created') throw new Error(created.kind);
    const { rows } = await db.pool.query<{ password_hash: string; must_change_password: boolean }>('SELECT password_hash, must_change_password FROM console_users WHERE user_id = $1', [created.user.user_id]);
    expect(rows[0]!.password_hash).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(rows[0]!.password_hash).not.toContain(created.password);
    expect(rows[0]!.must_change_password).toBe(true);
    expect((await createConsoleUser(db.pool, { tenantId: 'acme', email: 'hash@EXAMPLE.com', role: 'analyst' }, clock.now())).kind).toBe('exists');
    // The same email in another tenant is another user.
    expect((await createConsoleUser(db.pool, { tenantId: 'other', email: 'hash@example.com', role: 'analyst' }, clock.now())).kind).toBe('created');
    expect(await createConsoleUser(db.pool, { tenantId: 'acme', email: 'x@example.com', role: 'admin' }, clock.now())).toMatchObject({ kind: 'invalid' });
    expect(await createConsoleUser(db.pool, { tenantId: 'nope', email: 'x@example.com', role: 'analyst' }, clock.now())).toMatchObject({ kind: 'invalid' });
    expect(await createConsoleUser(db.pool, { tenantId: 'acme', email: 'not-an-email', role: 'analyst' }, clock.now())).toMatchObject({ kind: 'invalid' });
    const listed = await listConsoleUsers(db.pool, 'acme', clock.now());
    expect(listed.find((u) => u.email === 'Hash@Example.com')).toMatchObject({ role: 'supervisor', must_change_password: true, locked_until: null, disabled: false });
  });
});

describe('login', () => {
  it('answers the user and a CSRF token, and sets an HttpOnly, SameSite=Strict session cookie on /console', async () => {
    const created = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'ok@example.com', role: 'analyst' }, clock.now());
    if (created.kind !== 'created') throw new Error(created.kind);
    const res = await login('acme', 'OK@example.com', created.password);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ user: { tenant: 'acme', email: 'ok@example.com', role: 'analyst', must_change_password: true }, csrf_token: expect.any(String) });
    expect(res.headers['cache-control']).toBe('no-store');
    const cookie = setCookie(res);
    expect(cookie).toMatch(/^svc_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict$/);
    // The raw token is never stored: the session id is its SHA-256.
    const token = tokenOf(res);
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM console_sessions WHERE session_id = decode($1, 'hex') OR encode(session_id, 'escape') LIKE '%' || $2 || '%'", [Buffer.from(token).toString('hex'), token]);
    expect(rows[0]!.n).toBe(0);
    const audit = await auditOf(created.user.user_id);
    expect(audit.map((a) => a.action)).toEqual(['user.created', 'login']);
  });

  it('adds Secure behind a trusted proxy that terminated TLS, and only then', async () => {
    const created = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'tls@example.com', role: 'analyst' }, clock.now());
    if (created.kind !== 'created') throw new Error(created.kind);
    // Not trusted by default: the header is ignored.
    expect(setCookie(await login('acme', 'tls@example.com', created.password, { 'x-forwarded-proto': 'https' }))).not.toMatch(/Secure/);
    const proxied = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent', SVC_CONSOLE_TRUST_PROXY: 'true' }), pool: db.pool, masterKey: randomBytes(32), clock, logger: false });
    try {
      const res = await proxied.app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' }, payload: JSON.stringify({ tenant: 'acme', email: 'tls@example.com', password: created.password }) });
      expect(res.statusCode).toBe(200);
      expect(setCookie(res)).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    } finally {
      await proxied.app.close();
    }
  });

  it('answers a wrong password, an unknown email, a disabled user and another tenant alike: 401, generic', async () => {
    const user = await readyUser('acme', 'wrong@example.com');
    const wrong = await login('acme', 'wrong@example.com', 'not the password');
    const unknown = await login('acme', 'nobody@example.com', 'not the password');
    const otherTenant = await login('other', 'wrong@example.com', user.password);
    const noTenant = await login('ghost', 'wrong@example.com', user.password);
    for (const res of [wrong, unknown, otherTenant, noTenant]) {
      expectProblem(res, 401, 'svc:console/invalid_credentials');
      expect(res.json().detail).toBe('the tenant, email or password is wrong');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    await disableConsoleUser(db.pool, 'acme', 'wrong@example.com', clock.now());
    expectProblem(await login('acme', 'wrong@example.com', user.password), 401, 'svc:console/invalid_credentials');
    // Disabling ended the session.
    expectProblem(await as(user, 'GET', '/console/v1/session'), 401, 'svc:console/unauthenticated');
    const { rows } = await db.pool.query<{ action: string; actor_kind: string; details: Record<string, unknown> }>("SELECT action, actor_kind, details FROM console_audit WHERE action = 'login.failed' AND details->>'email' = 'nobody@example.com'");
    expect(rows).toEqual([expect.objectContaining({ actor_kind: 'anonymous', details: expect.objectContaining({ reason: 'unknown_user' }) })]);
  });

  it('locks a user out after 5 failures for 15 minutes, even with the right password; the operator can unlock', async () => {
    const user = await readyUser('acme', 'locked@example.com');
    for (let i = 0; i < 5; i++) expectProblem(await login('acme', 'locked@example.com', `guess ${i}`), 401, 'svc:console/invalid_credentials');
    const refused = await login('acme', 'locked@example.com', user.password);
    expectProblem(refused, 423, 'svc:console/locked');
    expect(refused.headers['retry-after']).toBe('900');
    clock.advance(14 * 60);
    expectProblem(await login('acme', 'locked@example.com', user.password), 423, 'svc:console/locked');
    expect((await listConsoleUsers(db.pool, 'acme', clock.now())).find((u) => u.email === 'locked@example.com')!.locked_until).not.toBeNull();
    expect(await unlockConsoleUser(db.pool, 'acme', 'locked@example.com', clock.now())).toBe(true);
    expect((await login('acme', 'locked@example.com', user.password)).statusCode).toBe(200);

    // And the lock runs out by itself.
    for (let i = 0; i < 5; i++) await login('acme', 'locked@example.com', `guess ${i}`);
    expectProblem(await login('acme', 'locked@example.com', user.password), 423, 'svc:console/locked');
    clock.advance(15 * 60);
    expect((await login('acme', 'locked@example.com', user.password)).statusCode).toBe(200);

    const actions = (await auditOf(await userId('acme', 'locked@example.com'))).map((a) => a.action);
    expect(actions.filter((a) => a === 'user.locked')).toHaveLength(2);
    expect(actions.filter((a) => a === 'login.refused_locked')).toHaveLength(3);
    expect(actions).toContain('user.unlocked');
    expect(await unlockConsoleUser(db.pool, 'acme', 'nobody@example.com', clock.now())).toBe(false);
  });

  it('checks no more than 5 passwords however many attempts race each other', async () => {
    const user = await readyUser('acme', 'race@example.com');
    // Twenty wrong guesses and the right password at once: the lock is taken before any password
    // is checked, so five attempts are checked and the rest are refused unchecked.
    const answers = await Promise.all([...Array.from({ length: 20 }, (_, i) => login('acme', 'race@example.com', `guess ${i}`)), login('acme', 'race@example.com', user.password)]);
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401 || s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 423)).toHaveLength(16);
    const checked = (await auditOf(await userId('acme', 'race@example.com'))).filter((a) => a.action === 'login.failed' || a.action === 'login');
    // readyUser logged in once before the race.
    expect(checked.length - 1).toBe(5);
  });

  it('refuses malformed, unknown-member, non-JSON and oversized bodies with governed problems', async () => {
    const post = (payload: string, contentType = 'application/json') =>
      app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': contentType }, payload });
    expectProblem(await post('{"tenant":'), 400, 'svc:request/malformed_json');
    expectProblem(await post('tenant=acme', 'application/x-www-form-urlencoded'), 415, 'svc:request/unsupported_media_type');
    const extra = await post(JSON.stringify({ tenant: 'acme', email: 'a@example.com', password: 'x', role: 'supervisor' }));
    expectProblem(extra, 400, 'svc:validation/schema');
    expect(extra.json().errors).toEqual([{ path: 'role', code: 'svc:validation/schema', message: 'unknown member' }]);
    const missing = await post(JSON.stringify({ tenant: 'acme', email: 'not an email' }));
    expectProblem(missing, 400, 'svc:validation/schema');
    expect(problemSchema.parse(missing.json()).errors?.map((e) => e.path).sort()).toEqual(['email', 'password']);
    expectProblem(await post(JSON.stringify({ tenant: 'acme', email: 'a@example.com', password: 'x'.repeat(3000) })), 413, 'svc:request/payload_too_large');
    expectProblem(await app.inject({ method: 'GET', url: '/console/v1/nothing' }), 404, 'svc:request/not_found');
  });
});

describe('sessions', () => {
  it('answers who am I with the same CSRF token, and 401 without a session or with a made-up one', async () => {
    const user = await readyUser('acme', 'me@example.com');
    const me = await as(user, 'GET', '/console/v1/session');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ user: { email: 'me@example.com', must_change_password: false }, csrf_token: user.csrf });
    expectProblem(await app.inject({ method: 'GET', url: '/console/v1/session' }), 401, 'svc:console/unauthenticated');
    expectProblem(await as({ cookie: 'A'.repeat(43), csrf: 'x' }, 'GET', '/console/v1/session'), 401, 'svc:console/unauthenticated');
    expectProblem(await as({ cookie: 'short', csrf: 'x' }, 'GET', '/console/v1/session'), 401, 'svc:console/unauthenticated');
  });

  it('ends after 30 idle minutes; requests keep it alive (last_seen_at written at most once a minute)', async () => {
    const user = await readyUser('acme', 'idle@example.com');
    const lastSeen = async () => (await db.pool.query<{ t: Date }>('SELECT last_seen_at AS t FROM console_sessions WHERE user_id = $1 AND revoked_at IS NULL', [await userId('acme', 'idle@example.com')])).rows[0]!.t.getTime();
    const before = await lastSeen();
    clock.advance(30);
    expect((await as(user, 'GET', '/console/v1/session')).statusCode).toBe(200);
    expect(await lastSeen()).toBe(before);
    clock.advance(29 * 60);
    expect((await as(user, 'GET', '/console/v1/session')).statusCode).toBe(200);
    expect(await lastSeen()).toBe(clock.now().getTime());
    clock.advance(30 * 60 - 1);
    expect((await as(user, 'GET', '/console/v1/session')).statusCode).toBe(200);
    clock.advance(30 * 60);
    const expired = await as(user, 'GET', '/console/v1/session');
    expectProblem(expired, 401, 'svc:console/unauthenticated');
    expect(expired.json().detail).toMatch(/inactivity/);
    expect(setCookie(expired)).toMatch(/^svc_console=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0/);
  });

  it('ends 12 hours after login however active it is', async () => {
    const user = await readyUser('acme', 'absolute@example.com');
    for (let i = 0; i < 47; i++) {
      clock.advance(15 * 60);
      expect((await as(user, 'GET', '/console/v1/session')).statusCode, `after ${(i + 1) * 15} min`).toBe(200);
    }
    clock.advance(15 * 60);
    const expired = await as(user, 'GET', '/console/v1/session');
    expectProblem(expired, 401, 'svc:console/unauthenticated');
    expect(expired.json().detail).toMatch(/maximum age/);
  });

  it('refuses a state-changing request without the CSRF token or with a forged one (403), before doing anything', async () => {
    const user = await readyUser('acme', 'csrf@example.com');
    expectProblem(await as(user, 'DELETE', '/console/v1/session', undefined, null), 403, 'svc:console/csrf_failed');
    expectProblem(await as(user, 'DELETE', '/console/v1/session', undefined, ''), 403, 'svc:console/csrf_failed');
    // One character changed (to something it is not already).
    const forged = `${user.csrf.slice(0, -1)}${user.csrf.endsWith('A') ? 'B' : 'A'}`;
    expectProblem(await as(user, 'DELETE', '/console/v1/session', undefined, forged), 403, 'svc:console/csrf_failed');
    expectProblem(await as(user, 'POST', '/console/v1/password', { current_password: user.password, new_password: 'another long password' }, 'forged'), 403, 'svc:console/csrf_failed');
    // Another session's token does not do either.
    const other = await login('acme', 'csrf@example.com', user.password);
    expectProblem(await as(user, 'DELETE', '/console/v1/session', undefined, other.json().csrf_token), 403, 'svc:console/csrf_failed');
    // Still logged in; the password unchanged.
    expect((await as(user, 'GET', '/console/v1/session')).statusCode).toBe(200);
    expect((await login('acme', 'csrf@example.com', user.password)).statusCode).toBe(200);
  });

  it('logout revokes the session and clears the cookie', async () => {
    const user = await readyUser('acme', 'logout@example.com');
    const out = await as(user, 'DELETE', '/console/v1/session');
    expect(out.statusCode).toBe(204);
    expect(setCookie(out)).toMatch(/^svc_console=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0$/);
    expectProblem(await as(user, 'GET', '/console/v1/session'), 401, 'svc:console/unauthenticated');
    expectProblem(await as(user, 'DELETE', '/console/v1/session'), 401, 'svc:console/unauthenticated');
    const actions = (await auditOf(await userId('acme', 'logout@example.com'))).map((a) => a.action);
    expect(actions).toEqual(['user.created', 'login', 'password.changed', 'logout']);
  });

  it('ends the session a browser still holds when it logs in again, as any user', async () => {
    const first = await readyUser('acme', 'first-in-browser@example.com');
    await readyUser('acme', 'second-in-browser@example.com');
    const second = await login('acme', 'second-in-browser@example.com', NEW_PASSWORD, { cookie: `${SESSION_COOKIE}=${first.cookie}` });
    expect(second.statusCode).toBe(200);
    expectProblem(await as(first, 'GET', '/console/v1/session'), 401, 'svc:console/unauthenticated');
    const audit = await auditOf(await userId('acme', 'first-in-browser@example.com'));
    expect(audit.at(-1)).toMatchObject({ action: 'logout', details: { reason: 'replaced_by_login' } });
  });
});

describe('the one-time password', () => {
  it('must be changed before anything else; the change ends other sessions and the old password stops working', async () => {
    const created = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'first@example.com', role: 'analyst' }, clock.now());
    if (created.kind !== 'created') throw new Error(created.kind);
    const first = await login('acme', 'first@example.com', created.password);
    const a = { cookie: tokenOf(first), csrf: first.json().csrf_token };
    const second = await login('acme', 'first@example.com', created.password);
    const b = { cookie: tokenOf(second), csrf: second.json().csrf_token };
    // Who am I and logout work; everything else waits for the change (a future console route
    // stands in: the hook applies to every /console/v1 route).
    expect((await as(a, 'GET', '/console/v1/session')).json().user.must_change_password).toBe(true);

    const tooShort = await as(a, 'POST', '/console/v1/password', { current_password: created.password, new_password: 'short' });
    expectProblem(tooShort, 400, 'svc:validation/schema');
    expect(tooShort.json().errors[0].path).toBe('new_password');
    expectProblem(await as(a, 'POST', '/console/v1/password', { current_password: created.password, new_password: created.password }), 400, 'svc:validation/schema');
    expectProblem(await as(a, 'POST', '/console/v1/password', { current_password: 'wrong wrong wrong', new_password: NEW_PASSWORD }), 401, 'svc:console/invalid_credentials');

    const changed = await as(a, 'POST', '/console/v1/password', { current_password: created.password, new_password: NEW_PASSWORD });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().user.must_change_password).toBe(false);
    expect((await as(a, 'GET', '/console/v1/session')).statusCode).toBe(200);
    expectProblem(await as(b, 'GET', '/console/v1/session'), 401, 'svc:console/unauthenticated');
    expectProblem(await login('acme', 'first@example.com', created.password), 401, 'svc:console/invalid_credentials');
    expect((await login('acme', 'first@example.com', NEW_PASSWORD)).json().user.must_change_password).toBe(false);
    const audit = await auditOf(created.user.user_id);
    expect(audit.find((r) => r.action === 'password.changed')!.details).toEqual({ other_sessions_revoked: 1, was_one_time: true });
  });

  it('blocks other console routes with 403 svc:console/password_change_required until changed', async () => {
    const created = await createConsoleUser(db.pool, { tenantId: 'acme', email: 'pending@example.com', role: 'analyst' }, clock.now());
    if (created.kind !== 'created') throw new Error(created.kind);
    const res = await login('acme', 'pending@example.com', created.password);
    const s = { cookie: tokenOf(res), csrf: res.json().csrf_token };
    // A route of the rest of the console (the alert queue), on a second app built the same way.
    const probe = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: db.pool, masterKey: randomBytes(32), clock, logger: false });
    try {
      const blocked = await probe.app.inject({ method: 'GET', url: '/console/v1/alerts', headers: { cookie: `${SESSION_COOKIE}=${s.cookie}` } });
      expectProblem(blocked, 403, 'svc:console/password_change_required');
      expect((await as(s, 'POST', '/console/v1/password', { current_password: created.password, new_password: NEW_PASSWORD })).statusCode).toBe(200);
      expect((await probe.app.inject({ method: 'GET', url: '/console/v1/alerts', headers: { cookie: `${SESSION_COOKIE}=${s.cookie}` } })).json()).toEqual({ data: [], has_more: false });
    } finally {
      await probe.app.close();
    }
  });
});

describe('changes and their audit rows commit together', () => {
  // The audit store refuses one action for one subject, as a failing database would mid-change.
  const withAuditRefused = (action: string, match: string, work: () => Promise<void>) =>
    withTrigger(
      db.pool,
      { table: 'console_audit', before: 'INSERT' },
      `IF NEW.action = '${action}' AND (NEW.subject = '${match}' OR NEW.details->>'email' = '${match}') THEN RAISE EXCEPTION 'audit store away'; END IF;`,
      work,
    );

  it('a password change that cannot be audited changes nothing: the old password and the other sessions stand', async () => {
    const user = await readyUser('acme', 'atomic@example.com');
    const otherLogin = await login('acme', 'atomic@example.com', NEW_PASSWORD);
    const other = { cookie: tokenOf(otherLogin), csrf: otherLogin.json().csrf_token as string };
    const id = await userId('acme', 'atomic@example.com');
    await withAuditRefused('password.changed', id, async () => {
      const refused = await as(user, 'POST', '/console/v1/password', { current_password: NEW_PASSWORD, new_password: 'a new and longer passphrase' });
      expect(refused.statusCode).toBeGreaterThanOrEqual(500);
    });
    expect((await as(other, 'GET', '/console/v1/session')).statusCode).toBe(200);
    expect((await login('acme', 'atomic@example.com', NEW_PASSWORD)).statusCode).toBe(200);
    expect((await auditOf(id)).filter((r) => r.action === 'password.changed')).toHaveLength(1);
  });

  it('a user whose creation cannot be audited is not created, so the operator can create it again', async () => {
    await withAuditRefused('user.created', 'unaudited@example.com', async () => {
      await expect(createConsoleUser(db.pool, { tenantId: 'acme', email: 'unaudited@example.com', role: 'analyst' }, clock.now())).rejects.toThrow('audit store away');
    });
    expect((await db.pool.query(`SELECT 1 FROM console_users WHERE lower(email) = 'unaudited@example.com'`)).rowCount).toBe(0);
    expect((await createConsoleUser(db.pool, { tenantId: 'acme', email: 'unaudited@example.com', role: 'analyst' }, clock.now())).kind).toBe('created');
  });

  it('a login that cannot be audited opens no session; a logout that cannot be audited ends none', async () => {
    const user = await readyUser('acme', 'unlogged@example.com');
    const id = await userId('acme', 'unlogged@example.com');
    const sessions = async () => (await db.pool.query('SELECT 1 FROM console_sessions WHERE user_id = $1 AND revoked_at IS NULL', [id])).rowCount;
    const open = await sessions();
    await withAuditRefused('login', id, async () => {
      expect((await login('acme', 'unlogged@example.com', NEW_PASSWORD)).statusCode).toBeGreaterThanOrEqual(500);
    });
    expect(await sessions()).toBe(open);
    await withAuditRefused('logout', id, async () => {
      expect((await as(user, 'DELETE', '/console/v1/session')).statusCode).toBeGreaterThanOrEqual(500);
    });
    expect((await as(user, 'GET', '/console/v1/session')).statusCode).toBe(200);
  });

  it('a user disabled without its audit row stays enabled', async () => {
    const user = await readyUser('acme', 'keep-enabled@example.com');
    const id = await userId('acme', 'keep-enabled@example.com');
    await withAuditRefused('user.disabled', id, async () => {
      await expect(disableConsoleUser(db.pool, 'acme', 'keep-enabled@example.com', clock.now())).rejects.toThrow('audit store away');
    });
    expect((await as(user, 'GET', '/console/v1/session')).statusCode).toBe(200);
    expect((await listConsoleUsers(db.pool, 'acme', clock.now())).find((u) => u.user_id === id)!.disabled).toBe(false);
  });
});

describe('the audit log', () => {
  it('is append-only: UPDATE, DELETE and TRUNCATE are refused', async () => {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM console_audit');
    expect(rows[0]!.n).toBeGreaterThan(10);
    await expect(db.pool.query("UPDATE console_audit SET action = 'nothing'")).rejects.toThrow(/append-only/);
    await expect(db.pool.query('DELETE FROM console_audit')).rejects.toThrow(/append-only/);
    await expect(db.pool.query('TRUNCATE console_audit')).rejects.toThrow(/append-only/);
    expect((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM console_audit')).rows[0]!.n).toBe(rows[0]!.n);
  });

  it('serves health without a session', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/v1/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('is ready while the database answers, and says it is not, with Retry-After, when it does not', async () => {
    expect((await app.inject({ method: 'GET', url: '/console/v1/ready' })).json()).toEqual({ status: 'ok' });
    const away = createPool('postgres://svc:none@127.0.0.1:1/none', 1);
    const probe = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: away, masterKey: randomBytes(32), clock, logger: false });
    try {
      const res = await probe.app.inject({ method: 'GET', url: '/console/v1/ready' });
      expectProblem(res, 503, 'svc:service/unavailable');
      expect(res.headers['retry-after']).toBeDefined();
      expect((await probe.app.inject({ method: 'GET', url: '/console/v1/health' })).statusCode).toBe(200);
    } finally {
      await probe.app.close();
      await away.end();
    }
  });
});

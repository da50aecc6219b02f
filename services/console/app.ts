import { createHmac, hkdfSync } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../platform/clock.ts';
import type { GraphStore } from '../../platform/graph/port.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { loginRequestSchema, passwordChangeRequestSchema, type LoginRequest, type PasswordChangeRequest } from '../../schemas/console/requests.ts';
import { consoleHealthSchema, consoleSessionSchema } from '../../schemas/console/routes.ts';
import { CursorCodec } from '../../platform/http/cursor.ts';
import { useRouteContracts } from '../../platform/http/contracts.ts';
import { createEdgeApp } from '../../platform/http/edge-app.ts';
import { sendProblem } from '../../platform/http/problem-reply.ts';
import { sendUnavailable } from '../../platform/http/error-handling.ts';
import { pingDatabase } from '../../platform/postgres/ping.ts';
import { registerConsoleRoutes } from './routes/index.ts';
import { dummyVerify, hashPassword, needsRehash, verifyPassword } from './password.ts';
import {
  changePassword,
  createSession,
  digestsEqual,
  findSession,
  findUser,
  findUserByEmail,
  claimAttempt,
  recordSuccess,
  revokeSession,
  revokeUserSessions,
  sha256,
  touchSession,
  writeAudit,
  type ConsoleSession,
  type ConsoleUser,
} from './store.ts';

// The analysts' console API, /console/v1/*: a Fastify app of its own on its own port, never the
// /v1 API's. It knows console sessions (an HttpOnly cookie) and nothing of API keys; the /v1 API
// knows signed requests and nothing of cookies. Decisions: docs/decisions/0017-console-auth.md.

export const SESSION_COOKIE = 'svc_console';
export const CSRF_HEADER = 'x-csrf-token';
const COOKIE_PATH = '/console';
// last_seen_at is written at most once a minute per session.
const TOUCH_EVERY_MS = 60_000;
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

interface ConsoleSettings {
  idleMs: number;
  absoluteMs: number;
  lockoutAttempts: number;
  lockoutMs: number;
  maxBodyBytes: number;
  // Believe X-Forwarded-Proto (and -For) from the proxy in front: it decides Secure.
  trustProxy: boolean;
}

export interface ConsoleDeps {
  pool: Pool;
  clock: Clock;
  masterKey: Buffer;
  settings: ConsoleSettings;
  logger: FastifyServerOptions['logger'];
  // The analysts' graph reads (network explorer) and the tenants' assets (money in the graph).
  graph: GraphStore;
  assets: TenantAssetRegistry;
}

export interface ConsoleContext {
  user: ConsoleUser;
  session: ConsoleSession;
  token: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    // Set by the session hook on every console route that needs a session.
    console?: ConsoleContext;
  }
  interface FastifyContextConfig {
    // 'public': no session (health, login); 'session' (the default under /console/v1): a live
    // session, a CSRF token on state-changing methods and no pending password change unless
    // duringPasswordChange.
    consoleAccess?: 'public' | 'session';
    duringPasswordChange?: boolean;
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      if (TOKEN.test(value)) return value;
    }
  }
  return undefined;
}

// The session of a request that passed the session guard (every /console/v1 route but the public
// ones): its user (and so its tenant) and session.
export function consoleContext(request: FastifyRequest): ConsoleContext {
  if (!request.console) throw new Error('console route without a session: it must not be public');
  return request.console;
}

const userView = (user: ConsoleUser) => ({
  id: user.user_id,
  tenant: user.tenant_id,
  email: user.email,
  role: user.role,
  must_change_password: user.must_change_password,
});

export async function buildConsoleApp(deps: ConsoleDeps): Promise<FastifyInstance> {
  const { pool, clock, settings } = deps;
  // The CSRF token of a session is an HMAC of its session token under a key derived from the
  // master key: the service can hand it out again (GET /console/v1/session after a reload)
  // without storing it; only its SHA-256 is stored and compared.
  const csrfKey = Buffer.from(hkdfSync('sha256', deps.masterKey, Buffer.alloc(0), 'svc console csrf v1', 32));
  const csrfTokenOf = (sessionToken: string) => createHmac('sha256', csrfKey).update(sessionToken).digest('base64url');
  const csrfHashOf = (sessionToken: string) => sha256(csrfTokenOf(sessionToken));

  const app = createEdgeApp({ logger: deps.logger, bodyLimit: settings.maxBodyBytes, trustProxy: settings.trustProxy });
  // Route schemas (schemas/console/): zod validates params, query and body and encodes every
  // declared response. A request that does not match still answers the console's own problems,
  // after the session guard (no session: 401 before any 400): a body that is not JSON 415 or 400
  // svc:request/malformed_json; a body that does not match 400 svc:validation/schema; a query
  // that does not match 400 svc:request/invalid_parameter, one error per parameter.
  useRouteContracts(app, { bodies: 'json', responses: 'encode', emptyQueryIsAbsent: false });
  app.addHook('onRequest', async (_request, reply) => {
    // Nothing of the console is cached or framed.
    reply.header('Cache-Control', 'no-store');
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('X-Frame-Options', 'DENY');
  });

  // Secure when the request reached us over TLS, or (SVC_CONSOLE_TRUST_PROXY) the proxy in front
  // says it reached it over TLS.
  const cookie = (request: FastifyRequest, value: string, clear = false) =>
    [
      `${SESSION_COOKIE}=${value}`,
      `Path=${COOKIE_PATH}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(clear ? ['Max-Age=0'] : []),
      ...(request.protocol === 'https' ? ['Secure'] : []),
    ].join('; ');
  const clearCookie = (request: FastifyRequest, reply: FastifyReply) => reply.header('Set-Cookie', cookie(request, '', true));

  const unauthenticated = (request: FastifyRequest, reply: FastifyReply, detail: string) => {
    clearCookie(request, reply);
    return sendProblem(request, reply, 'svc:console/unauthenticated', { detail });
  };

  app.addHook('preHandler', async (request, reply) => {
    const config = request.routeOptions.config;
    if (config.consoleAccess === 'public' || !request.routeOptions.url?.startsWith('/console/v1/')) return;
    const token = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (!token) return unauthenticated(request, reply, 'log in first: this endpoint needs a console session');
    const session = await findSession(pool, token);
    const now = clock.now();
    if (!session || session.revoked_at !== null) return unauthenticated(request, reply, 'the session has ended; log in again');
    if (now.getTime() >= session.expires_at.getTime()) return unauthenticated(request, reply, 'the session reached its maximum age; log in again');
    if (now.getTime() - session.last_seen_at.getTime() >= settings.idleMs) return unauthenticated(request, reply, 'the session expired after inactivity; log in again');
    const user = await findUser(pool, session.user_id);
    if (!user || user.disabled || user.tenant_id !== session.tenant_id) return unauthenticated(request, reply, 'the session has ended; log in again');
    if (STATE_CHANGING.has(request.method)) {
      const given = request.headers[CSRF_HEADER];
      if (typeof given !== 'string' || given.length === 0 || given.length > 128 || !digestsEqual(sha256(given), session.csrf_hash)) {
        return sendProblem(request, reply, 'svc:console/csrf_failed', { detail: 'send the session\'s CSRF token in X-CSRF-Token' });
      }
    }
    if (user.must_change_password && !config.duringPasswordChange) {
      return sendProblem(request, reply, 'svc:console/password_change_required', { detail: 'change the one-time password first: POST /console/v1/password' });
    }
    if (now.getTime() - session.last_seen_at.getTime() >= TOUCH_EVERY_MS) await touchSession(pool, session.session_id, now);
    request.console = { user, session, token };
  });
  // Requests that do not match their route's schemas are refused after this guard, once the
  // session is known (platform/http/contracts.ts answers after every preHandler).

  const sessionBody = (context: { user: ConsoleUser; session: ConsoleSession; token: string }, now: Date) => ({
    user: userView(context.user),
    csrf_token: csrfTokenOf(context.token),
    session: {
      expires_at: context.session.expires_at.toISOString(),
      idle_expires_at: new Date(Math.min(now.getTime() + settings.idleMs, context.session.expires_at.getTime())).toISOString(),
    },
  });

  // `db`: the transaction the audited step runs in, so that the step and its row commit together.
  const audit = (tenantId: string, actor: Parameters<typeof writeAudit>[1]['actor'], action: string, at: Date, subject?: string, details?: Record<string, unknown>, db: Pool | PoolClient = pool) =>
    writeAudit(db, { tenantId, actor, action, at, ...(subject ? { subject } : {}), ...(details ? { details } : {}) });

  const lockoutPolicy = { attempts: settings.lockoutAttempts, lockMs: settings.lockoutMs };
  // 423 with the lock's remaining time.
  const locked = async (request: FastifyRequest, reply: FastifyReply, userId: string, now: Date) => {
    const until = (await findUser(pool, userId))?.locked_until;
    if (until) reply.header('Retry-After', String(Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))));
    return sendProblem(request, reply, 'svc:console/locked', { detail: 'too many failed password attempts: try again later or ask the operator to unlock the user' });
  };

  app.get('/console/v1/health', { config: { consoleAccess: 'public' }, schema: { response: { 200: consoleHealthSchema } } }, async () => ({ status: 'ok' as const }));
  // Readiness: also the database, without which every other route fails (a replica that cannot
  // reach it takes no traffic). Liveness stays /health, which touches nothing.
  app.get('/console/v1/ready', { config: { consoleAccess: 'public' }, schema: { response: { 200: consoleHealthSchema } } }, async (request, reply) => {
    try {
      await pingDatabase(pool);
      return { status: 'ok' as const };
    } catch {
      return sendUnavailable(request, reply, 'the database is not reachable');
    }
  });

  // Login. Every failure answers the same 401 whether the tenant, the email or the password was
  // wrong (or the user is disabled), after the same scrypt work; a locked user gets 423.
  // The body is checked against its schema before the handler (platform/http/contracts.ts).
  const sessionRoute = { response: { 200: consoleSessionSchema } };
  app.post('/console/v1/session', { config: { consoleAccess: 'public' }, schema: { body: loginRequestSchema, ...sessionRoute } }, async (request, reply) => {
    const { tenant, email, password } = request.body as LoginRequest;
    const now = clock.now();
    const invalid = () => sendProblem(request, reply, 'svc:console/invalid_credentials', { detail: 'the tenant, email or password is wrong' });

    const user = await findUserByEmail(pool, tenant, email);
    if (!user || user.disabled) {
      await dummyVerify(password);
      await audit(tenant, user ? { kind: 'user', userId: user.user_id } : { kind: 'anonymous' }, 'login.failed', now, user?.user_id, {
        email: email.toLowerCase(),
        reason: user ? 'disabled' : 'unknown_user',
        ip: request.ip,
      });
      return invalid();
    }
    // The attempt is taken before the password is checked (see claimAttempt).
    const attempt = await claimAttempt(pool, user.user_id, lockoutPolicy, now);
    if (!attempt) {
      await audit(tenant, { kind: 'user', userId: user.user_id }, 'login.refused_locked', now, user.user_id, { ip: request.ip });
      return locked(request, reply, user.user_id, now);
    }
    if (!(await verifyPassword(password, user.password_hash))) {
      await withTransaction(pool, async (db) => {
        await audit(tenant, { kind: 'user', userId: user.user_id }, 'login.failed', now, user.user_id, { reason: 'wrong_password', ip: request.ip }, db);
        if (attempt.locksNow) await audit(tenant, { kind: 'user', userId: user.user_id }, 'user.locked', now, user.user_id, { until: attempt.lockedUntil?.toISOString() }, db);
      });
      return invalid();
    }
    const rehashed = needsRehash(user.password_hash) ? await hashPassword(password) : undefined;
    // The attempt's reset, the session and the login's row commit together: no session without it.
    // A session this browser still held (another user's, or its own) ends with the new one's start.
    const previous = cookieValue(request.headers.cookie, SESSION_COOKIE);
    const issued = await withTransaction(pool, async (db) => {
      const replaced = previous ? await findSession(db, previous) : undefined;
      if (replaced && replaced.revoked_at === null) {
        await revokeSession(db, replaced.session_id, now);
        await audit(replaced.tenant_id, { kind: 'user', userId: replaced.user_id }, 'logout', now, replaced.user_id, { reason: 'replaced_by_login' }, db);
      }
      await recordSuccess(db, user.user_id, rehashed);
      const created = await createSession(db, user, csrfHashOf, now, settings.absoluteMs);
      await audit(tenant, { kind: 'user', userId: user.user_id }, 'login', now, user.user_id, { ip: request.ip }, db);
      return created;
    });
    reply.header('Set-Cookie', cookie(request, issued.token));
    return sessionBody({ user, session: issued.session, token: issued.token }, now);
  });

  // Who am I, with the session's CSRF token again (for a reloaded page).
  app.get('/console/v1/session', { config: { duringPasswordChange: true }, schema: sessionRoute }, async (request) => sessionBody(request.console!, clock.now()));

  app.delete('/console/v1/session', { config: { duringPasswordChange: true } }, async (request, reply) => {
    const { user, session } = request.console!;
    const now = clock.now();
    await withTransaction(pool, async (db) => {
      await revokeSession(db, session.session_id, now);
      await audit(user.tenant_id, { kind: 'user', userId: user.user_id }, 'logout', now, user.user_id, undefined, db);
    });
    clearCookie(request, reply);
    return reply.code(204).send();
  });

  // Changing the password ends every other session of the user. A wrong current password counts
  // as a failed login (a stolen session cannot guess it without locking the user out).
  app.post('/console/v1/password', { config: { duringPasswordChange: true }, schema: { body: passwordChangeRequestSchema, ...sessionRoute } }, async (request, reply) => {
    const change = request.body as PasswordChangeRequest;
    const { user, session } = request.console!;
    const now = clock.now();
    const actor = { kind: 'user', userId: user.user_id } as const;
    const attempt = await claimAttempt(pool, user.user_id, lockoutPolicy, now);
    if (!attempt) {
      await audit(user.tenant_id, actor, 'password.change_refused_locked', now, user.user_id);
      return locked(request, reply, user.user_id, now);
    }
    if (!(await verifyPassword(change.current_password, user.password_hash))) {
      // A lock so caused ends every session of the user (decision 0017), with its rows.
      await withTransaction(pool, async (db) => {
        await audit(user.tenant_id, actor, 'password.change_failed', now, user.user_id, { reason: 'wrong_current_password' }, db);
        if (attempt.locksNow) {
          await revokeUserSessions(db, user.user_id, now);
          await audit(user.tenant_id, actor, 'user.locked', now, user.user_id, { until: attempt.lockedUntil?.toISOString() }, db);
        }
      });
      return sendProblem(request, reply, 'svc:console/invalid_credentials', { detail: 'the current password is wrong' });
    }
    await changePassword(pool, user, await hashPassword(change.new_password), session.session_id, now);
    return sessionBody({ ...request.console!, user: { ...user, must_change_password: false } }, now);
  });

  registerConsoleRoutes(app, { pool, clock, cursors: new CursorCodec(deps.masterKey), graph: deps.graph, assets: deps.assets });
  await (await import('./static.ts')).registerConsoleWeb(app); // the web app at /console/ (docs/decisions/0019-console-web.md)
  return app;
}

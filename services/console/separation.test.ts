// A console session can never call /v1/*, and an API key can never call /console/v1/*.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { SigningClient } from '../../test/support/signing-client.ts';
import { partyEvent } from '../../test/fixtures/events.ts';
import { CSRF_HEADER, SESSION_COOKIE } from './app.ts';
import { createConsoleUser } from './users.ts';
import { createConsole } from './wiring.ts';

let api: TestApi;
let consoleApp: FastifyInstance;
let cookie: string;
let csrf: string;

beforeAll(async () => {
  api = await startTestApi();
  ({ app: consoleApp } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: api.db.pool, masterKey: api.masterKey, clock: api.clock, logger: false }));
  await consoleApp.ready();
  const created = await createConsoleUser(api.db.pool, { tenantId: api.tenantId, email: 'analyst@example.com', role: 'supervisor' }, api.clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
  const login = await consoleApp.inject({
    method: 'POST',
    url: '/console/v1/session',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ tenant: api.tenantId, email: 'analyst@example.com', password: created.password }),
  });
  expect(login.statusCode).toBe(200);
  cookie = /svc_console=([^;]*)/.exec(String(login.headers['set-cookie']))![1]!;
  csrf = login.json().csrf_token;
  const changed = await consoleApp.inject({
    method: 'POST',
    url: '/console/v1/password',
    headers: { 'content-type': 'application/json', cookie: `${SESSION_COOKIE}=${cookie}`, [CSRF_HEADER]: csrf },
    payload: JSON.stringify({ current_password: created.password, new_password: 'a long enough new password' }),
  });
  expect(changed.statusCode).toBe(200);
});
afterAll(async () => {
  await consoleApp?.close();
  await api?.close();
});

const problem = (res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }) => ({
  status: res.statusCode,
  type: String(res.headers['content-type']).split(';')[0],
  code: (res.json() as { code?: unknown }).code,
});

describe('a console session on /v1', () => {
  it('is refused exactly as any unsigned request', async () => {
    const withCookie = { cookie: `${SESSION_COOKIE}=${cookie}`, [CSRF_HEADER]: csrf };
    for (const [method, url, payload] of [
      ['GET', '/v1/alerts', undefined],
      ['GET', '/v1/episodes', undefined],
      ['POST', '/v1/validate', JSON.stringify({ object: 'party', event: partyEvent() })],
    ] as const) {
      const headers = payload ? { 'content-type': 'application/json' } : {};
      const bare = await api.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
      const session = await api.app.inject({ method, url, headers: { ...headers, ...withCookie }, ...(payload ? { payload } : {}) });
      expect(problem(session), url).toEqual({ status: 401, type: 'application/problem+json', code: 'svc:auth/unauthenticated' });
      expect(problem(session)).toEqual(problem(bare));
      expect(session.json().detail).toBe(bare.json().detail);
    }
  });
});

describe('an API key on /console/v1', () => {
  it('is refused with 401: signed requests carry no session', async () => {
    const client = new SigningClient(consoleApp, () => api.clock.now());
    for (const scope of ['compliance', 'read'] as const) {
      const me = await client.send({ method: 'GET', url: '/console/v1/session', key: api.keys[scope] });
      expect(problem(me)).toEqual({ status: 401, type: 'application/problem+json', code: 'svc:console/unauthenticated' });
      const logout = await client.send({ method: 'DELETE', url: '/console/v1/session', key: api.keys[scope] });
      expect(problem(logout)).toEqual({ status: 401, type: 'application/problem+json', code: 'svc:console/unauthenticated' });
    }
    // The session itself still works on the console.
    const me = await consoleApp.inject({ method: 'GET', url: '/console/v1/session', headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
    expect(me.statusCode).toBe(200);
  });

  it('the /v1 API serves no console route and the console no /v1 route', async () => {
    expect((await api.app.inject({ method: 'GET', url: '/console/v1/session', headers: { cookie: `${SESSION_COOKIE}=${cookie}` } })).statusCode).toBe(404);
    expect((await consoleApp.inject({ method: 'GET', url: '/v1/alerts', headers: { cookie: `${SESSION_COOKIE}=${cookie}` } })).statusCode).toBe(404);
  });
});

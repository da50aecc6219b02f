// Access is denied by default: every route the API registers (as it registered them, not as the
// OpenAPI document lists them) is swept unauthenticated and with a key of each scope it does not
// declare. Only the declared public routes (health, readiness, metrics and the API's documents)
// answer without a signature; every other route refuses an unsigned request (401) and each wrong
// scope (403). A route that declares neither scopes nor public refuses even a valid key.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../platform/clock.ts';
import { SecretBox } from '../platform/crypto/secret-box.ts';
import { ApiKeyStore, type Scope } from '../platform/keys/api-keys.ts';
import { NonceLedger } from '../platform/keys/nonce-ledger.ts';
import { registerAuthentication, type RouteAccess } from '../services/api/http/authentication.ts';
import '../services/api/http/fastify-types.ts';
import { SigningClient } from './support/signing-client.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

const SCOPES: Scope[] = ['ingest', 'read', 'webhook_mgmt', 'compliance'];
const PUBLIC = /^\/(health|ready|metrics|openapi\.json|docs(\/.*)?)$/;

let api: TestApi;
let routes: readonly RouteAccess[];
beforeAll(async () => {
  api = await startTestApi();
  routes = api.app.routeAccess;
});
afterAll(async () => api?.close());

// A concrete URL for a route: each parameter and wildcard filled in.
const urlOf = (route: RouteAccess) => route.url.replace(/:[A-Za-z_]+/g, 'x1').replace(/\*$/, 'index.html');

describe('every registered route', () => {
  it('declares its access, and only health, readiness, metrics and the documents are public', () => {
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.filter((r) => r.access === 'nobody')).toEqual([]);
    const open = routes.filter((r) => r.access === 'public');
    expect(open.filter((r) => !PUBLIC.test(r.url))).toEqual([]);
    for (const url of ['/health', '/ready', '/metrics', '/openapi.json']) expect(open.map((r) => r.url)).toContain(url);
    // Every /v1 route is signed.
    expect(routes.filter((r) => r.url.startsWith('/v1') && r.access === 'public')).toEqual([]);
  });

  it('refuses an unsigned request on every route that is not public; public ones answer', async () => {
    const answers: string[] = [];
    for (const route of routes) {
      const res = await api.app.inject({ method: route.method as 'GET', url: urlOf(route), ...(route.method === 'GET' || route.method === 'HEAD' ? {} : { payload: '{}', headers: { 'content-type': 'application/json' } }) });
      if (route.access === 'public') {
        expect(res.statusCode, `${route.method} ${route.url}`).toBeLessThan(400);
      } else {
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
        if (route.method !== 'HEAD') expect(res.headers['content-type'], `${route.method} ${route.url}`).toMatch(/^application\/problem\+json/);
      }
      answers.push(`${route.method} ${route.url} ${res.statusCode}`);
    }
    expect(answers.length).toBe(routes.length);
  });

  it('refuses every scope a route does not declare', async () => {
    let refused = 0;
    for (const route of routes) {
      if (route.access === 'public' || route.access === 'nobody') continue;
      for (const scope of SCOPES.filter((s) => !(route.access as readonly Scope[]).includes(s))) {
        const body = route.method === 'GET' || route.method === 'HEAD' || route.method === 'DELETE' ? undefined : {};
        const res = await api.client.send({ method: route.method, url: urlOf(route), key: api.keys[scope], ...(body ? { body } : {}) });
        expect(res.statusCode, `${route.method} ${route.url} with ${scope}`).toBe(403);
        if (route.method !== 'HEAD') expect(res.json().type, `${route.method} ${route.url} with ${scope}`).toBe('urn:svc:problem:auth/insufficient_scope');
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
  });
});

describe('a route that declares neither scopes nor public', () => {
  it('refuses every request, a valid signed one of any scope included', async () => {
    const clock = new ManualClock('2026-09-01T12:00:00Z');
    const app = Fastify({ logger: false });
    const nonces = new NonceLedger(api.db.pool, { now: () => clock.now() });
    registerAuthentication(app, { keys: new ApiKeyStore(api.db.pool, new SecretBox(api.masterKey)), nonces, durableNonces: nonces, clock });
    app.get('/v1/forgotten', async () => ({ secret: 'data' }));
    app.get('/v1/declared', { config: { scopes: ['read'] } }, async () => ({ ok: true }));
    await app.ready();
    try {
      expect(app.routeAccess.filter((r) => r.method === 'GET')).toEqual([
        { method: 'GET', url: '/v1/forgotten', access: 'nobody' },
        { method: 'GET', url: '/v1/declared', access: ['read'] },
      ]);
      const client = new SigningClient(app, () => clock.now());
      expect((await app.inject({ method: 'GET', url: '/v1/forgotten' })).statusCode).toBe(403);
      for (const scope of SCOPES) {
        const res = await client.send({ url: '/v1/forgotten', key: api.keys[scope] });
        expect(res.statusCode).toBe(403);
        expect(res.body).not.toContain('data');
      }
      // The declared route, for contrast: the read key is admitted.
      expect((await client.send({ url: '/v1/declared', key: api.keys.read })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('the ledger a nonce is claimed on', () => {
  it('claims a write\'s nonce on the durable ledger and a read\'s on the fast one', async () => {
    const clock = new ManualClock('2026-09-01T12:00:00Z');
    const claimed: string[] = [];
    class Recorded extends NonceLedger {
      constructor(private readonly name: string) {
        super(api.db.pool, { now: () => clock.now() });
      }
      override async claim(...args: Parameters<NonceLedger['claim']>) {
        claimed.push(this.name);
        return super.claim(...args);
      }
    }
    const app = Fastify({ logger: false });
    registerAuthentication(app, { keys: new ApiKeyStore(api.db.pool, new SecretBox(api.masterKey)), nonces: new Recorded('fast'), durableNonces: new Recorded('durable'), clock });
    app.get('/v1/thing', { config: { scopes: ['read'] } }, async () => ({ ok: true }));
    app.post('/v1/thing', { config: { scopes: ['read'] } }, async () => ({ ok: true }));
    app.delete('/v1/thing', { config: { scopes: ['read'] } }, async () => ({ ok: true }));
    await app.ready();
    try {
      const client = new SigningClient(app, () => clock.now());
      for (const method of ['GET', 'POST', 'DELETE'] as const) expect((await client.send({ method, url: '/v1/thing', key: api.keys.read })).statusCode).toBe(200);
      expect(claimed).toEqual(['fast', 'durable', 'durable']);
    } finally {
      await app.close();
    }
  });
});

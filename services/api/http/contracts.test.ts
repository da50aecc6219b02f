// Every /v1 route declares its contract (zod schemas for its parts and responses), and a declared
// route answers a refused parameter exactly as the spec says: after authentication, as one 400
// svc:request/invalid_parameter naming every parameter.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { problemSchema } from '../../../schemas/problem.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { incompleteContracts, registerContracts } from './contracts.ts';
import './fastify-types.ts';
import { json } from './route-schema.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

describe('declared contracts', () => {
  it('every registered /v1 route declares a zod response schema for its success', () => {
    const v1 = api.app.routeContracts.filter((route) => route.url.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThan(40);
    expect(incompleteContracts(api.app.routeContracts)).toEqual([]);
  });

  it('a route without a response schema is reported', async () => {
    const app = Fastify();
    registerContracts(app);
    app.get('/v1/bare', async () => ({}));
    app.get('/v1/untyped', { schema: { response: { 200: { type: 'object' } } } }, async () => ({}));
    app.get('/v1/declared', { schema: { response: { 200: json(z.object({}), 'ok') } } }, async () => ({}));
    await app.ready();
    expect(incompleteContracts(app.routeContracts)).toEqual(['GET /v1/bare: no success response declared', 'GET /v1/untyped: response 200 is not a zod schema']);
    await app.close();
  });

  it('every route with path parameters declares them, and the document lists every /v1 operation', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { tags?: string[]; security?: unknown[] }>> };
    for (const route of api.app.routeContracts.filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD')) {
      if (route.url.includes(':')) expect(route.schema?.params, `${route.method} ${route.url}`).toBeDefined();
      const operation = doc.paths[route.url.replace(/:([a-z_]+)/g, '{$1}')]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.url}`).toBeDefined();
      expect(operation!.tags, `${route.method} ${route.url}`).toHaveLength(1);
      expect(operation!.security, `${route.method} ${route.url}`).toHaveLength(1);
    }
  });
  it('each JSON success answer carries an example its zod schema accepts', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>>;
    };
    let checked = 0;
    for (const route of api.app.routeContracts.filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD')) {
      const operation = doc.paths[route.url.replace(/:([a-z_]+)/g, '{$1}')]![route.method.toLowerCase()]!;
      for (const [status, declared] of Object.entries((route.schema?.response ?? {}) as Record<string, { content?: Record<string, { schema: z.ZodType }> }>)) {
        const schema = declared.content?.['application/json']?.schema;
        if (!status.startsWith('2') || !schema) continue;
        const example = operation.responses[status]?.content?.['application/json']?.example;
        expect(example, `${route.method} ${route.url} ${status}`).toBeDefined();
        expect(schema.safeParse(example).error, `${route.method} ${route.url} ${status}`).toBeUndefined();
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });
});

describe('a refused parameter', () => {
  it('is a 400 svc:request/invalid_parameter naming every refused parameter, each once', async () => {
    const res = await api.client.get('/v1/alerts?status=nope&since=yesterday&limit=0&detector=a&detector=b', api.keys.compliance);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = problemSchema.parse(res.json());
    expect(problem.code).toBe('svc:request/invalid_parameter');
    expect(problem.detail).toBe('invalid query parameters');
    expect(problem.errors).toEqual([
      { path: 'status', code: 'svc:request/invalid_parameter', message: 'unknown value(s) nope; allowed: open, closed' },
      { path: 'detector', code: 'svc:request/invalid_parameter', message: 'must be given once' },
      { path: 'since', code: 'svc:request/invalid_parameter', message: 'must be an RFC 3339 date-time with an offset' },
      { path: 'limit', code: 'svc:request/invalid_parameter', message: 'must be an integer 1-200' },
    ]);
  });

  it('names an unknown parameter instead of ignoring it, so a misspelt filter does not list everything', async () => {
    for (const [url, key] of [
      ['/v1/alerts?severity=critical', api.keys.compliance],
      ['/v1/episodes?detector=fan_in', api.keys.compliance],
      ['/v1/parties/anyone/movements?since=2026-09-01T00:00:00Z', api.keys.read],
      ['/v1/reconciliations?status=matched&limt=5', api.keys.read],
    ] as const) {
      const res = await api.client.get(url, key);
      const name = url.split('?')[1]!.split('&').at(-1)!.split('=')[0]!;
      expect([res.statusCode, problemSchema.parse(res.json()).errors], url).toEqual([400, [{ path: name, code: 'svc:request/invalid_parameter', message: 'unknown parameter' }]]);
    }
  });

  it('checks across parameters once each is valid', async () => {
    const kindAlone = (await api.client.get('/v1/episodes?subject_kind=party', api.keys.compliance)).json();
    expect(kindAlone.errors).toEqual([{ path: 'subject_kind', code: 'svc:request/invalid_parameter', message: 'needs subject' }]);
    const backwards = (await api.client.get('/v1/reconciliations?from=2026-09-02T00:00:00Z&to=2026-09-01T00:00:00Z', api.keys.read)).json();
    expect(backwards.errors).toEqual([{ path: 'from', code: 'svc:request/invalid_parameter', message: 'must not be after to' }]);
  });

  it('is answered after authentication, and after the route\'s own checks', async () => {
    const unsigned = await api.app.inject({ method: 'GET', url: '/v1/alerts?limit=0' });
    expect(unsigned.statusCode).toBe(401);
    const wrongScope = await api.client.get('/v1/alerts?limit=0', api.keys.read);
    expect(wrongScope.statusCode).toBe(403);
    const withKey = await api.client.get('/v1/reconciliation-breaks?limit=0', api.keys.read, { 'idempotency-key': 'k1' });
    expect(withKey.json().code).toBe('svc:request/bad_request');
  });

  it('an empty value is no value, and the declared default applies', async () => {
    const res = await api.client.get('/v1/webhook-endpoints?limit=&cursor=', api.keys.webhook_mgmt);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], has_more: false });
  });
});

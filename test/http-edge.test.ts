import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemSchema } from '../schemas/problem.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ SVC_MAX_BODY_BYTES: '2048' });
});
afterAll(async () => api?.close());

function expectGoverned(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = problemSchema.parse(res.json());
  expect(problem.code).toBe(code);
  expect(problem.status).toBe(status);
  return problem;
}

describe('framework failures come out as governed problems', () => {
  it('an unknown route is a 404 problem', async () => {
    const problem = expectGoverned(await api.app.inject({ method: 'GET', url: '/v1/nothing-here?x=1' }), 404, 'svc:request/not_found');
    expect(problem.instance).toBe('/v1/nothing-here');
  });

  it('malformed JSON is a 400 problem (after authentication)', async () => {
    const res = await api.client.send({ method: 'POST', url: '/v1/validate', body: '{"object": "party",', key: api.keys.ingest });
    expectGoverned(res, 400, 'svc:request/malformed_json');
  });

  it('an unauthenticated request is refused before its body is looked at', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/v1/validate', headers: { 'content-type': 'text/plain' }, payload: 'nonsense' });
    expectGoverned(res, 401, 'svc:auth/unauthenticated');
  });

  it('a wrong content type is a 415 problem', async () => {
    const res = await api.client.send({ method: 'POST', url: '/v1/validate', body: '{}', key: api.keys.ingest, headers: { 'content-type': 'text/plain' } });
    expectGoverned(res, 415, 'svc:request/unsupported_media_type');
  });

  it('invalid UTF-8 is a 400 problem', async () => {
    const res = await api.client.send({ method: 'POST', url: '/v1/validate', body: Buffer.from([0x7b, 0xff, 0x7d]), key: api.keys.ingest });
    expectGoverned(res, 400, 'svc:request/malformed_json');
  });

  it('a body over the cap is a 413 problem', async () => {
    const res = await api.client.send({ method: 'POST', url: '/v1/validate', body: { pad: 'x'.repeat(4096) }, key: api.keys.ingest });
    expectGoverned(res, 413, 'svc:request/payload_too_large');
  });

  it('a body over the cap sent without Content-Length (chunked) is a 413 problem', async () => {
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const address = api.app.server.address() as { port: number };
    const { status, type, body } = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: address.port, method: 'POST', path: '/v1/validate', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body: text }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 8; i++) req.write('x'.repeat(1024));
      req.end();
    });
    expect(status).toBe(413);
    expect(type).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(body).code).toBe('svc:request/payload_too_large');
  });

  it('what the HTTP parser refuses (a lower-case method, garbage, a bad header) is a 400 problem', async () => {
    if (!api.app.server.listening) await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as { port: number };
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port }, () => socket.end(bytes));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('utf8')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
    for (const wire of ['get /health HTTP/1.1\r\nHost: x\r\n\r\n', '\u0000\u0001garbage\r\n\r\n', 'GET /health HTTP/1.1\r\nHo st: x\r\n\r\n']) {
      const answer = await raw(wire);
      const [head, body] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toMatch(/\r\nContent-Type: application\/problem\+json\r\n/i);
      expect(problemSchema.parse(JSON.parse(body!)).code).toBe('svc:request/bad_request');
    }
  });

  // A party event within every bound, and the answer to a batch of it and another item.
  const valid = (id: string) =>
    `{"external_id":"${id}","occurred_at":"2026-09-01T12:00:00Z","schema_version":"2026-09-01","sequence":1,"data":{"type":"person","status":"active","created_at":"2026-01-01T00:00:00Z"}}`;
  const batchOf = (...events: string[]) => `{"events":[${events.map((event) => `{"object":"party","event":${event}}`).join(',')}]}`;
  const itemResults = async (url: '/v1/batches' | '/v1/validate', body: string) => {
    const res = await api.client.send({ method: 'POST', url, body, key: api.keys.ingest });
    const answer = res.json() as { results: Array<{ outcome: string; problem?: { code: string; errors: Array<{ path: string }> } }> };
    return { status: res.statusCode, results: answer.results.map((r) => [r.outcome, r.problem?.code, r.problem?.errors.map((e) => e.path)]) };
  };

  it('a body nested past the bounds (900 levels: this file caps bodies at 2 KiB) is a 400 problem with its path; in a batch, that item\'s own rejection', async () => {
    const event = `{"external_id":"p","data":{"metadata":${'['.repeat(900)}${']'.repeat(900)}}}`;
    for (const [url, body] of [
      ['/v1/validate', `{"object":"party","event":${event}}`],
      ['/v1/parties', event],
    ] as const) {
      const res = await api.client.send({ method: 'POST', url, body, key: api.keys.ingest });
      const problem = expectGoverned(res, 400, 'svc:validation/schema');
      expect(problem.errors[0]!.path, url).toMatch(/^event\.data\.metadata(\.0)+$/);
    }
    const deep = `{"external_id":"p","data":{"metadata":${'['.repeat(400)}${']'.repeat(400)}}}`;
    const path = ['events', '1', 'event', 'data', 'metadata', ...Array(27).fill('0')].join('.');
    const expected = [['accepted', undefined, undefined], ['rejected', 'svc:validation/schema', [path]]];
    expect(await itemResults('/v1/batches', batchOf(valid('deep-ok'), deep))).toEqual({ status: 202, results: expected });
    expect(await itemResults('/v1/validate', batchOf(valid('deep-ok'), deep))).toEqual({ status: 422, results: [['valid', undefined, undefined], expected[1]] });
  });

  it('refuses a member name repeated in one object, whose earlier value validation would never see, and stores nothing of it', async () => {
    const count = async () => (await api.db.pool.query('SELECT count(*)::int AS n FROM inbox_events')).rows[0].n;
    const before = await count();
    const data = '{"type":"person","status":"active","created_at":"2026-01-01T00:00:00Z","occupation":"card 4111 1111 1111 1111","occupation":"baker"}';
    const event = `{"external_id":"dup-1","occurred_at":"2026-09-01T12:00:00Z","schema_version":"2026-09-01","sequence":1,"data":${data}}`;
    for (const [url, body] of [
      ['/v1/parties', event],
      ['/v1/validate', `{"object":"party","event":${event}}`],
    ] as const) {
      const res = await api.client.send({ method: 'POST', url, body, key: api.keys.ingest });
      const problem = expectGoverned(res, 400, 'svc:validation/schema');
      expect(problem.errors.map((e) => e.path), url).toEqual(['event.data.occupation']);
      expect(res.body).not.toContain('4111');
    }
    // In a batch the item is rejected on its own; the others are taken.
    const expected = [['accepted', undefined, undefined], ['rejected', 'svc:validation/schema', ['events.1.event.data.occupation']]];
    expect(await itemResults('/v1/batches', batchOf(valid('dup-ok'), event))).toEqual({ status: 202, results: expected });
    expect(await itemResults('/v1/validate', batchOf(valid('dup-ok'), event))).toEqual({ status: 422, results: [['valid', undefined, undefined], expected[1]] });
    expect(await count()).toBe(before + 1);
    const stored = await api.db.pool.query<{ raw: string }>("SELECT convert_from(raw_event, 'UTF8') AS raw FROM inbox_events WHERE external_id IN ('dup-1', 'dup-ok')");
    expect(stored.rows.map((r) => r.raw)).toEqual([valid('dup-ok')]);
    // A name repeated in the envelope is the body's: events given twice, the first batch unseen.
    const twice = await api.client.send({ method: 'POST', url: '/v1/batches', body: `{"events":[{"object":"party","event":${valid('dup-3')}}],"events":${batchOf(valid('dup-2')).slice(10, -1)}}`, key: api.keys.ingest });
    expect(expectGoverned(twice, 400, 'svc:validation/schema').errors.map((e) => e.path)).toEqual(['events']);
    expect(await count()).toBe(before + 1);
  });

  it('a problem carries every member the spec lists', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/v1/validate' });
    const problem = res.json();
    expect(Object.keys(problem).sort()).toEqual(['code', 'correlation_id', 'detail', 'errors', 'instance', 'status', 'title', 'type']);
  });
});

describe('correlation ids', () => {
  it('records and echoes the caller correlation id', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/v1/validate', headers: { 'svc-correlation-id': 'trace-123' } });
    expect(res.headers['svc-correlation-id']).toBe('trace-123');
    expect(res.json().correlation_id).toBe('trace-123');
  });

  it('generates one when absent', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/health' });
    expect(res.headers['svc-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('documentation', () => {
  it('serves the OpenAPI 3.1 document with the family schemas and a docs page', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/v1/validate'].post.responses['422']).toBeDefined();
    const movement = doc.components.schemas.MovementEvent;
    expect(movement.additionalProperties).toBe(false);
    expect(movement.properties.schema_version.const).toBe('2026-09-01');
    expect(movement.properties.data.properties.amount.required).toEqual(['value', 'asset', 'scale']);
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/health', '/v1/accounts/{external_id}', '/v1/batches', '/v1/control-events', '/v1/events/{event_id}', '/v1/instruments',
        '/v1/instruments/{external_id}', '/v1/movements', '/v1/movements/{external_id}', '/v1/parties', '/v1/parties/{external_id}',
        '/v1/parties/{external_id}/movements', '/v1/posture/parties/{external_id}', '/v1/relationships', '/v1/validate', '/v1/accounts',
        '/v1/graph/parties/{external_id}/network', '/v1/graph/paths', '/v1/alerts', '/v1/alerts/{alert_id}', '/v1/episodes',
        '/v1/episodes/{episode_id}', '/v1/episodes/{episode_id}/case', '/v1/webhook-endpoints', '/v1/webhook-endpoints/{id}',
        '/v1/webhook-endpoints/{id}/disable', '/v1/webhook-endpoints/{id}/enable', '/v1/webhook-endpoints/{id}/rotate-secret',
        '/v1/webhook-endpoints/{id}/test', '/v1/webhook-deliveries', '/v1/webhook-deliveries/{id}', '/v1/webhook-deliveries/{id}/replay', '/v1/imports/dry-run',
        '/v1/imports', '/v1/imports/{id}', '/v1/imports/{id}/chunks/{chunk}', '/v1/imports/{id}/dry-run', '/v1/imports/{id}/submit',
        '/v1/imports/{id}/cancel', '/v1/imports/{id}/rejects', '/v1/reconciliations', '/v1/reconciliations/{id}',
        '/v1/reconciliations/{id}/items', '/v1/reconciliation-breaks', '/v1/reconciliation-breaks/{id}', '/v1/reconciliation-breaks/{id}/acknowledge',
        '/v1/reconciliation-breaks/{id}/comments', '/v1/reconciliation-breaks/{id}/resolve', '/v1/reconciliation-expectations',
        '/v1/reconciliation-expectations/{id}',
      ].sort(),
    );
    // Every operation the document shows is served.
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) {
        expect(api.app.hasRoute({ method: method.toUpperCase(), url: path.replace(/\{([a-z_]+)\}/g, ':$1') }), `${method} ${path}`).toBe(true);
      }
    }
    expect(doc.paths['/v1/movements'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/MovementEvent' });
    const page = await api.app.inject({ method: 'GET', url: '/docs' });
    expect([200, 302]).toContain(page.statusCode);
  });
});

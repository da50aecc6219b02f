// The fault proxy on its own, in front of a tiny upstream that records what reached it: so the
// retry suites can trust that "the service never saw it" and "the service processed it" mean what
// they say.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { problemSchema } from '../../schemas/problem.ts';
import { fault, startFaultProxy, type FaultProxy } from './fault-proxy.ts';

interface Seen {
  method: string;
  url: string;
  body: string;
  host: string | undefined;
}

let upstream: Server;
let proxy: FaultProxy;
const seen: Seen[] = [];

beforeAll(async () => {
  // Echoes what it got; answers 201 to POSTs, with a header of its own to show headers are relayed.
  upstream = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: request.method!, url: request.url!, body, host: request.headers.host });
      response.writeHead(request.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      response.end(JSON.stringify({ method: request.method, url: request.url, body }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  proxy = await startFaultProxy(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});
beforeEach(() => {
  proxy.reset();
  seen.length = 0;
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${proxy.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

// What undici reports for a connection the peer reset: the SDK's "reset" failure.
async function expectReset(request: Promise<Response>): Promise<void> {
  const error = (await request.then(
    () => expect.unreachable('the request should have failed'),
    (e: unknown) => e,
  )) as { cause?: { code?: string } };
  expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(error.cause?.code);
}

describe('pass-through', () => {
  it('relays method, path, query, body and the answer, and logs the signing and idempotency headers', async () => {
    const res = await post('/v1/things?b=2&a=1', '{"x":1}', { 'svc-nonce': 'n-1', 'svc-timestamp': '1788264000', 'idempotency-key': 'k-1' });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-upstream')).toBe('yes');
    expect(await res.json()).toEqual({ method: 'POST', url: '/v1/things?b=2&a=1', body: '{"x":1}' });
    expect(seen).toHaveLength(1);
    expect(proxy.log).toEqual([
      {
        seq: 1,
        method: 'POST',
        target: '/v1/things?b=2&a=1',
        path: '/v1/things',
        nonce: 'n-1',
        timestamp: '1788264000',
        idempotencyKey: 'k-1',
        bodySha256: sha256('{"x":1}'),
        bodyBytes: 7,
        action: 'forwarded',
        status: 201,
        upstreamStatus: 201,
      },
    ]);
  });

  it('logs a request without a body or those headers as such', async () => {
    expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    expect(proxy.log[0]).toMatchObject({ method: 'GET', nonce: undefined, idempotencyKey: undefined, bodyBytes: 0, bodySha256: sha256('') });
  });
});

describe('injected answers (the upstream never sees the request)', () => {
  it('answers 429 with Retry-After in seconds and a governed svc:rate_limit/exceeded problem', async () => {
    proxy.plan('POST', '/v1/things', fault.rateLimit(3));
    const res = await post('/v1/things', '{}');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(problemSchema.parse(await res.json())).toMatchObject({ code: 'svc:rate_limit/exceeded', status: 429, instance: '/v1/things' });
    expect(seen).toHaveLength(0);
    expect(proxy.log[0]).toMatchObject({ action: 'rate_limited', status: 429, upstreamStatus: undefined });
  });

  it('writes a Date Retry-After as an HTTP date (IMF-fixdate) and a string one verbatim', async () => {
    proxy.plan('POST', '/v1/things', fault.rateLimit(new Date('2026-09-01T12:00:05Z')), fault.rateLimit('whenever'));
    expect((await post('/v1/things', '{}')).headers.get('retry-after')).toBe('Tue, 01 Sep 2026 12:00:05 GMT');
    expect((await post('/v1/things', '{}')).headers.get('retry-after')).toBe('whenever');
  });

  it.each([500, 502, 503, 504] as const)('answers %i as a plain page or as a problem document', async (status) => {
    proxy.plan('POST', '/v1/things', fault.serverError(status), fault.serverError(status, { body: 'problem', retryAfter: 2 }));
    const plain = await post('/v1/things', '{}');
    expect(plain.status).toBe(status);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(plain.headers.get('retry-after')).toBeNull();
    const problem = await post('/v1/things', '{}');
    expect(problem.status).toBe(status);
    expect(problem.headers.get('retry-after')).toBe('2');
    expect(problemSchema.parse(await problem.json())).toMatchObject({ status, code: 'svc:internal/error' });
    expect(seen).toHaveLength(0);
    expect(proxy.log.map((e) => [e.action, e.status])).toEqual([['server_error', status], ['server_error', status]]);
  });
});

describe('connection resets', () => {
  it('resets before forwarding: the client gets a reset and the upstream saw nothing', async () => {
    proxy.plan('POST', '/v1/things', fault.resetBeforeForwarding());
    await expectReset(post('/v1/things', '{"a":1}'));
    expect(seen).toHaveLength(0);
    expect(proxy.log[0]).toMatchObject({ action: 'reset_before_forwarding', status: undefined, upstreamStatus: undefined, bodySha256: sha256('{"a":1}') });
  });

  it('resets after forwarding: the upstream processed the request, the client gets a reset instead of its answer', async () => {
    proxy.plan('POST', '/v1/things', fault.resetAfterForwarding());
    await expectReset(post('/v1/things', '{"a":1}'));
    expect(seen).toEqual([expect.objectContaining({ method: 'POST', url: '/v1/things', body: '{"a":1}' })]);
    expect(proxy.log[0]).toMatchObject({ action: 'reset_after_forwarding', status: undefined, upstreamStatus: 201 });
  });

  it('keeps serving after a reset', async () => {
    proxy.plan('POST', '/v1/things', fault.resetBeforeForwarding());
    await expectReset(post('/v1/things', '{}'));
    expect((await post('/v1/things', '{}')).status).toBe(201);
  });
});

describe('the fault plan', () => {
  it('plays a rule in order and passes requests through once it is used up', async () => {
    proxy.plan('POST', '/v1/things', fault.serverError(503), fault.pass(), fault.rateLimit(1));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post('/v1/things', '{}')).status);
    expect(statuses).toEqual([503, 201, 429, 201]);
    expect(proxy.log.map((e) => e.action)).toEqual(['server_error', 'forwarded', 'rate_limited', 'forwarded']);
    expect(proxy.pending()).toEqual([]);
  });

  it('matches on method and on a path prefix or a regular expression', async () => {
    proxy.plan('GET', '/v1/things', fault.serverError(500));
    proxy.plan('POST', /^\/v1\/things\/[^/]+\/chunks\/\d+$/, fault.serverError(502));
    proxy.plan('*', '/v1/other', fault.serverError(504));
    expect((await post('/v1/things/t-1', '{}')).status).toBe(201); // POST: not the GET rule; not a chunk path
    expect((await post('/v1/things/t-1/chunks/3?x=1', '{}')).status).toBe(502); // the query is not part of the path
    expect((await fetch(`${proxy.url}/v1/things/t-1`)).status).toBe(500); // prefix of the path
    expect((await fetch(`${proxy.url}/v1/other`)).status).toBe(504); // any method
  });

  it('gives a request the next fault of the first rule that still has one', async () => {
    proxy.plan('POST', '/v1', fault.serverError(500));
    proxy.plan('POST', '/v1/things', fault.serverError(503), fault.serverError(504));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post('/v1/things', '{}')).status);
    expect(statuses).toEqual([500, 503, 504, 201]);
  });

  it('shows faults not yet played, and forgets plan and log on reset', async () => {
    proxy.plan('POST', '/v1/things', fault.serverError(503), fault.resetAfterForwarding());
    await post('/v1/things', '{}');
    expect(proxy.pending()).toEqual([{ method: 'POST', path: '/v1/things', fault: { kind: 'reset_after_forwarding' } }]);
    expect(proxy.requests('POST', '/v1/things')).toHaveLength(1);
    expect(proxy.requests('GET', '/v1/things')).toHaveLength(0);
    proxy.reset();
    expect(proxy.pending()).toEqual([]);
    expect(proxy.log).toEqual([]);
    expect((await post('/v1/things', '{}')).status).toBe(201);
    expect(proxy.log[0]?.seq).toBe(1);
  });
});

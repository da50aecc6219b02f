import { describe, expect, it } from 'vitest';
import { canonicalString, sha256Hex, signatureHex, decodeSecret } from '../../../platform/crypto/request-signing.ts';
import { ApiClient, ApiProblemError, retryAfterMs, TransportError, type RetryNotice } from './api.ts';

const SECRET = Buffer.alloc(32, 7).toString('base64url');

type Reply = Response | Error;

/** A client over a scripted fetch; records each attempt and each pause. */
function scripted(replies: Reply[], random = () => 0.5) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const pauses: number[] = [];
  const notices: RetryNotice[] = [];
  const client = new ApiClient({
    baseUrl: 'http://api.test:8080/base/',
    credentials: { keyId: 'svc_test_k', secret: SECRET },
    fetch: (async (url: URL, init: RequestInit) => {
      calls.push({ url: String(url), init });
      const next = replies.shift();
      if (!next) throw new Error('no more replies');
      if (next instanceof Error) throw next;
      return next;
    }) as unknown as typeof fetch,
    sleep: async (ms) => {
      pauses.push(ms);
    },
    random,
    onRetry: (n) => notices.push(n),
  });
  return { client, calls, pauses, notices };
}

const problem = (status: number, body: object, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/problem+json', ...headers } });
const refused = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' }) });
const reset = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });

describe('ApiClient', () => {
  it('signs the exact target and bytes sent, afresh on every attempt', async () => {
    const { client, calls } = scripted([new Response('', { status: 503 }), new Response('{}', { status: 201 })]);
    const body = Buffer.from('id,at\n1,x\n');
    await client.request('PUT', '/v1/imports/imp_1/chunks/0', { body, contentType: 'text/csv', retry: 'idempotent' });
    expect(calls.map((c) => c.url)).toEqual(['http://api.test:8080/base/v1/imports/imp_1/chunks/0', 'http://api.test:8080/base/v1/imports/imp_1/chunks/0']);
    const [first, second] = calls.map((c) => c.init.headers as Record<string, string>);
    expect(first!['Svc-Nonce']).not.toBe(second!['Svc-Nonce']);
    expect(second!['content-type']).toBe('text/csv');
    const canonical = canonicalString({
      method: 'PUT',
      target: '/base/v1/imports/imp_1/chunks/0',
      bodySha256: sha256Hex(body),
      timestamp: second!['Svc-Timestamp']!,
      nonce: second!['Svc-Nonce']!,
      keyId: 'svc_test_k',
    });
    expect(second!['Svc-Signature']).toBe(`v1=${signatureHex(decodeSecret(SECRET), canonical)}`);
  });

  it('retries 429, 5xx and transport failures with full-jitter backoff, honouring Retry-After', async () => {
    const { client, pauses, notices } = scripted([
      reset(),
      new Response('', { status: 502 }),
      problem(429, { code: 'svc:request/rate_limited', detail: 'slow down' }, { 'retry-after': '7' }),
      new Response('', { status: 500 }),
      new Response('{"ok":true}', { status: 200 }),
    ]);
    expect(await client.json('GET', '/v1/imports/imp_1', { retry: 'idempotent' })).toEqual({ ok: true });
    // Ceilings 500, 1000, 2000, 4000 ms with random 0.5; the 429 waits its 7 s.
    expect(pauses).toEqual([250, 500, 7000, 2000]);
    expect(notices.map((n) => n.reason)).toEqual(['cannot reach http://api.test:8080: socket hang up', 'HTTP 502', 'HTTP 429', 'HTTP 500']);
  });

  it('gives up after the attempts, with the last problem', async () => {
    const { client, calls } = scripted(Array.from({ length: 5 }, () => problem(503, { code: 'svc:service/unavailable', detail: 'draining', errors: [] })));
    await expect(client.request('GET', '/v1/imports/imp_1', { retry: 'idempotent' })).rejects.toMatchObject({ status: 503, code: 'svc:service/unavailable' });
    expect(calls).toHaveLength(5);
  });

  it('retries a state-changing request only when the server certainly did not act on it', async () => {
    const created = scripted([refused(), problem(429, { code: 'x', detail: 'y' }), new Response('{"import_id":"imp_1"}', { status: 201 })]);
    expect(await created.client.json('POST', '/v1/imports', { json: {}, retry: 'unprocessed' })).toEqual({ import_id: 'imp_1' });
    const unsure = scripted([reset()]);
    await expect(unsure.client.request('POST', '/v1/imports', { body: '{}', retry: 'unprocessed' })).rejects.toBeInstanceOf(TransportError);
    const failed = scripted([new Response('', { status: 500 })]);
    await expect(failed.client.request('POST', '/v1/imports', { body: '{}', retry: 'unprocessed' })).rejects.toBeInstanceOf(ApiProblemError);
  });

  it('turns a problem into code: detail with its field errors, and never retries a 4xx', async () => {
    const { client, calls } = scripted([
      problem(400, {
        code: 'svc:validation/schema',
        detail: 'the import is not valid',
        errors: [{ path: 'mapping.fields.data.amout', code: 'svc:validation/schema', message: 'not a target of movement; did you mean data.amount?' }],
      }),
    ]);
    const error = await client.request('POST', '/v1/imports', { body: '{}', retry: 'idempotent' }).catch((e: unknown) => e);
    expect(calls).toHaveLength(1);
    expect(error).toBeInstanceOf(ApiProblemError);
    expect((error as ApiProblemError).describe()).toEqual([
      'svc:validation/schema: the import is not valid',
      '  mapping.fields.data.amout: not a target of movement; did you mean data.amount?',
    ]);
    const plain = scripted([new Response('<html>Bad gateway</html>', { status: 404, headers: { 'content-type': 'text/html' } })]);
    await expect(plain.client.request('GET', '/x', { retry: 'idempotent' })).rejects.toMatchObject({ code: 'HTTP 404', detail: '<html>Bad gateway</html>' });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

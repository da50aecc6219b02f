import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../platform/crypto/secret-box.ts';
import { revokeKey } from '../../../platform/keys/api-keys.ts';
import { createApi } from '../wiring.ts';
import { loadConfig } from '../../../platform/config.ts';
import { SigningClient } from '../../../test/support/signing-client.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { partyEvent } from '../../../test/fixtures/events.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

const body = { object: 'party', event: partyEvent() };
const nowS = () => Math.floor(api.clock.now().getTime() / 1000);

async function send(change: (headers: Record<string, string>) => void, options: { nonce?: string; payload?: unknown } = {}) {
  const payload = JSON.stringify(options.payload ?? body);
  const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate', body: payload, key: api.keys.ingest, nonce: options.nonce });
  change(headers);
  return api.app.inject({ method: 'POST', url: '/v1/validate', headers, payload });
}

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, status: number, code: string) {
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.statusCode).toBe(status);
  expect(res.json()).toHaveProperty('code', code);
}

describe('check 1: the four headers', () => {
  it.each(['Svc-Key-Id', 'Svc-Timestamp', 'Svc-Nonce', 'Svc-Signature'])('missing %s is svc:auth/unauthenticated', async (name) => {
    expectProblem(await send((h) => delete h[name]), 401, 'svc:auth/unauthenticated');
  });
  it.each(['Svc-Key-Id', 'Svc-Signature'])('empty %s is svc:auth/unauthenticated', async (name) => {
    expectProblem(await send((h) => (h[name] = '')), 401, 'svc:auth/unauthenticated');
  });
  it('comes before the timestamp check', async () => {
    expectProblem(await send((h) => { delete h['Svc-Nonce']; h['Svc-Timestamp'] = 'yesterday'; }), 401, 'svc:auth/unauthenticated');
  });
});

describe('check 2: timestamp', () => {
  it.each(['abc', '1788264000.5', '-1788264000', '+1788264000', '1788264000000'])('malformed or milliseconds %s is svc:auth/timestamp_skew', async (value) => {
    expectProblem(await send((h) => (h['Svc-Timestamp'] = value)), 401, 'svc:auth/timestamp_skew');
  });
  it('refuses 301 s of skew either way and accepts 300 s', async () => {
    const at = (offset: number) => api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, timestamp: nowS() + offset });
    expectProblem(await at(301), 401, 'svc:auth/timestamp_skew');
    expectProblem(await at(-301), 401, 'svc:auth/timestamp_skew');
    expect((await at(300)).statusCode).toBe(200);
    expect((await at(-300)).statusCode).toBe(200);
  });
  it('counts whole seconds of service time, so 300 s either way is accepted between two seconds too', async () => {
    const start = api.clock.now();
    api.clock.set(new Date(start.getTime() + 999));
    try {
      const at = (offset: number) => api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, timestamp: nowS() + offset });
      expect([(await at(300)).statusCode, (await at(-300)).statusCode]).toEqual([200, 200]);
      expectProblem(await at(-301), 401, 'svc:auth/timestamp_skew');
    } finally {
      api.clock.set(start);
    }
  });
  it('comes before the signature check', async () => {
    expectProblem(await send((h) => { h['Svc-Timestamp'] = String(nowS() - 1000); h['Svc-Signature'] = 'bogus'; }), 401, 'svc:auth/timestamp_skew');
  });
});

describe('check 3: nonce and signature', () => {
  it.each(['x'.repeat(65), 'has space', 'caf\u00e9', 'a/b'])('a malformed nonce is svc:auth/invalid_signature', async (nonce) => {
    expectProblem(await send(() => undefined, { nonce }), 401, 'svc:auth/invalid_signature');
  });
  it('accepts a 64-character nonce of every allowed character', async () => {
    const nonce = 'Az09._~-'.repeat(8);
    expect((await send(() => undefined, { nonce })).statusCode).toBe(200);
  });
  it.each([
    ['v2=', (s: string) => s.replace('v1=', 'v2=')],
    ['upper-case hex', (s: string) => s.toUpperCase().replace('V1=', 'v1=')],
    ['short', (s: string) => s.slice(0, -1)],
  ])('a malformed signature (%s) is svc:auth/invalid_signature', async (_, mutate) => {
    expectProblem(await send((h) => (h['Svc-Signature'] = mutate(h['Svc-Signature']!))), 401, 'svc:auth/invalid_signature');
  });
  it('refuses a body changed after signing', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest });
    const res = await api.app.inject({ method: 'POST', url: '/v1/validate', headers, payload: JSON.stringify({ ...body, object: 'account' }) });
    expectProblem(res, 401, 'svc:auth/invalid_signature');
  });
  it('refuses a signature made for another path or query', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate?x=1', body, key: api.keys.ingest });
    const res = await api.app.inject({ method: 'POST', url: '/v1/validate?x=2', headers, payload: JSON.stringify(body) });
    expectProblem(res, 401, 'svc:auth/invalid_signature');
  });
  it('refuses a target with a fragment, whose parameters after the # the signature would not cover', async () => {
    // Over a socket: inject drops a fragment before the server could see it.
    if (!api.app.server.listening) await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as { port: number };
    const payload = JSON.stringify(body);
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate?x=1', body: payload, key: api.keys.ingest });
    const res = await new Promise<{ statusCode: number; headers: Record<string, unknown>; json: () => unknown }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/validate?x=1#&y=2', headers: { ...headers, 'content-type': 'application/json' } }, (answer) => {
        let text = '';
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => resolve({ statusCode: answer.statusCode!, headers: answer.headers, json: () => JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end(payload);
    });
    expectProblem(res, 400, 'svc:request/bad_request');
  });
  it('verifies against the canonical query, so parameter order does not matter', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate?b=2&a=1', body, key: api.keys.ingest });
    const res = await api.app.inject({ method: 'POST', url: '/v1/validate?a=1&b=2', headers, payload: JSON.stringify(body) });
    expect(res.statusCode).toBe(200);
  });
  it('refuses an unknown key id and a wrong secret alike', async () => {
    const unknown = await api.client.send({ method: 'POST', url: '/v1/validate', body, key: { keyId: 'svc_test_nope', secret: api.keys.ingest.secret } });
    expectProblem(unknown, 401, 'svc:auth/invalid_signature');
    const wrong = await api.client.send({ method: 'POST', url: '/v1/validate', body, key: { keyId: api.keys.ingest.keyId, secret: api.keys.read.secret } });
    expectProblem(wrong, 401, 'svc:auth/invalid_signature');
  });
});

describe('check 4: nonce single use', () => {
  it('refuses a replayed nonce and the replay of a whole request', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest });
    const first = await api.app.inject({ method: 'POST', url: '/v1/validate', headers, payload: JSON.stringify(body) });
    expect(first.statusCode).toBe(200);
    const replay = await api.app.inject({ method: 'POST', url: '/v1/validate', headers, payload: JSON.stringify(body) });
    expectProblem(replay, 401, 'svc:auth/nonce_replayed');
  });

  it('a forged request cannot burn a real nonce', async () => {
    const forged = await send((h) => (h['Svc-Signature'] = `v1=${'0'.repeat(64)}`), { nonce: 'precious-nonce' });
    expectProblem(forged, 401, 'svc:auth/invalid_signature');
    const genuine = await send(() => undefined, { nonce: 'precious-nonce' });
    expect(genuine.statusCode).toBe(200);
  });

  it('keeps nonces per key', async () => {
    const a = await api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, nonce: 'shared-nonce' });
    const b = await api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.read, nonce: 'shared-nonce' });
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
  });

  it('lets exactly one of 20 concurrent requests with one nonce through', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, nonce: 'raced-nonce' })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 401).every((r) => r.json().code === 'svc:auth/nonce_replayed')).toBe(true);
  });

  it('holds across a restart (another API process on the same database)', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest });
    expect((await api.app.inject({ method: 'POST', url: '/v1/validate', headers, payload: JSON.stringify(body) })).statusCode).toBe(200);
    const second = await createApi({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: api.db.pool, databaseUrl: api.db.url, masterKey: api.masterKey, clock: api.clock, logger: false });
    try {
      const replay = await second.app.inject({ method: 'POST', url: '/v1/validate', headers, payload: JSON.stringify(body) });
      expectProblem(replay, 401, 'svc:auth/nonce_replayed');
    } finally {
      await second.app.close();
    }
  });

  it('holds a nonce for 600 s, the 600th included, and frees it after', async () => {
    const first = await api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, nonce: 'aging-nonce' });
    expect(first.statusCode).toBe(200);
    api.clock.advance(600);
    expectProblem(await api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, nonce: 'aging-nonce' }), 401, 'svc:auth/nonce_replayed');
    api.clock.advance(1);
    expect((await api.client.send({ method: 'POST', url: '/v1/validate', body, key: api.keys.ingest, nonce: 'aging-nonce' })).statusCode).toBe(200);
  });
});

describe('scopes, schemes and keys', () => {
  it('refuses a valid signature without the scope with 403', async () => {
    expectProblem(await api.client.post('/v1/validate', body, api.keys.webhook_mgmt), 403, 'svc:auth/insufficient_scope');
  });

  it('fails closed on an RFC 9421 signature, even beside a valid HMAC', async () => {
    const res = await send((h) => {
      h['Signature-Input'] = 'sig1=("@method");keyid="k"';
      h['Signature'] = 'sig1=:AAAA:';
    });
    expectProblem(res, 401, 'svc:auth/unsupported_scheme');
  });

  it('refuses a revoked key', async () => {
    const key = await api.issue(api.tenantId, 'ingest');
    await revokeKey(api.db.pool, key.keyId, new Date());
    const fresh = await createApi({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: api.db.pool, databaseUrl: api.db.url, masterKey: api.masterKey, clock: api.clock, logger: false });
    try {
      const res = await new SigningClient(fresh.app, () => api.clock.now()).post('/v1/validate', body, key);
      expectProblem(res, 401, 'svc:auth/invalid_signature');
    } finally {
      await fresh.app.close();
    }
  });

  it('stores the key secret sealed, never in plain text', async () => {
    const { rows } = await api.db.pool.query<{ secret_sealed: Buffer }>('SELECT secret_sealed FROM api_keys WHERE key_id = $1', [api.keys.ingest.keyId]);
    const raw = Buffer.from(api.keys.ingest.secret, 'base64url');
    const sealed = rows[0]!.secret_sealed;
    expect(sealed.includes(raw)).toBe(false);
    expect(sealed.toString('latin1')).not.toContain(api.keys.ingest.secret);
    expect(new SecretBox(api.masterKey).open(sealed, `api_key:${api.keys.ingest.keyId}`).equals(raw)).toBe(true);
  });

  it('serves health without a signature', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });
});

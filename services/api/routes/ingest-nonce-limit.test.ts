import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import { loadConfig } from '../../../platform/config.ts';
import { setTenantRateLimit } from '../../../platform/rate-limit/token-buckets.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { movementEvent } from '../../../test/fixtures/events.ts';
import { SigningClient } from '../../../test/support/signing-client.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { createApi } from '../wiring.ts';

// The nonce and the rate limit on the ingest routes themselves (authenticate.test.ts checks the
// nonce on /v1/validate): the checks' order (401 before anything the route answers, 403 after the
// claim), what a refused request costs, and both holding across API processes.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

const inboxCount = async (externalIdPrefix: string): Promise<number> => {
  const { rows } = await api.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_events WHERE external_id LIKE $1', [`${externalIdPrefix}%`]);
  return rows[0]!.n;
};

const tokensOf = async (tenantId: string): Promise<number> => {
  const { rows } = await api.db.pool.query<{ tokens: number }>('SELECT tokens FROM rate_limit_buckets WHERE tenant_id = $1', [tenantId]);
  return rows[0]!.tokens;
};

const postMovement = (client: SigningClient, externalId: string, options: { nonce?: string } = {}) =>
  client.send({ method: 'POST', url: '/v1/movements', body: movementEvent(externalId), key: api.keys.ingest, nonce: options.nonce });

const secondProcess = () =>
  createApi({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: api.db.pool, databaseUrl: api.db.url, masterKey: api.masterKey, clock: api.clock, logger: false });

describe('the nonce of an ingest request', () => {
  it('refuses a replayed request with 401, charges nothing for it and writes nothing', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/movements', body: movementEvent('adm-replay'), key: api.keys.ingest });
    const payload = JSON.stringify(movementEvent('adm-replay'));
    expect((await api.app.inject({ method: 'POST', url: '/v1/movements', headers, payload })).statusCode).toBe(202);
    const before = await tokensOf(api.tenantId);
    const replay = await api.app.inject({ method: 'POST', url: '/v1/movements', headers, payload });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().code).toBe('svc:auth/nonce_replayed');
    expect(replay.headers['svc-ratelimit-limit']).toBeUndefined();
    expect(await tokensOf(api.tenantId)).toBe(before);
    expect(await inboxCount('adm-replay')).toBe(1);
  });

  it('lets exactly one of 20 concurrent requests with one nonce through', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => postMovement(api.client, `adm-raced-${i}`, { nonce: 'adm-raced' })));
    expect(results.filter((r) => r.statusCode === 202)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 401 && r.json().code === 'svc:auth/nonce_replayed')).toHaveLength(19);
    expect(await inboxCount('adm-raced-')).toBe(1);
  });

  it('holds across API processes on the same database', async () => {
    const second = await secondProcess();
    try {
      const other = new SigningClient(second.app, () => api.clock.now());
      const results = await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => postMovement(api.client, `adm-across-a${i}`, { nonce: 'adm-across' })),
        ...Array.from({ length: 5 }, (_, i) => postMovement(other, `adm-across-b${i}`, { nonce: 'adm-across' })),
      ]);
      expect(results.filter((r) => r.statusCode === 202)).toHaveLength(1);
      expect(await inboxCount('adm-across-')).toBe(1);
    } finally {
      await second.app.close();
    }
  });

  it('is claimed by a request refused for its body or its Idempotency-Key, which costs nothing', async () => {
    const before = await tokensOf(api.tenantId);
    const body = Buffer.from('{"not json', 'utf8');
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/batches', body, key: api.keys.ingest });
    const malformed = await api.app.inject({ method: 'POST', url: '/v1/batches', headers, payload: body });
    expect(malformed.json().code).toBe('svc:request/malformed_json');
    expect(malformed.headers['svc-ratelimit-remaining']).toBe(String(before));
    expect((await api.app.inject({ method: 'POST', url: '/v1/batches', headers, payload: body })).json().code).toBe('svc:auth/nonce_replayed');

    const badKey = { method: 'POST', url: '/v1/movements', body: movementEvent('adm-bad-key'), key: api.keys.ingest, headers: { 'Idempotency-Key': 'caf\u00e9' } } as const;
    const badKeyHeaders = api.client.headersFor(badKey);
    const payload = JSON.stringify(movementEvent('adm-bad-key'));
    const refused = await api.app.inject({ method: 'POST', url: '/v1/movements', headers: badKeyHeaders, payload });
    expect(refused.json().code).toBe('svc:request/bad_request');
    // Reported, as on every ingest response, and not spent.
    expect(refused.headers['svc-ratelimit-remaining']).toBe(String(before));
    expect(refused.headers['svc-ratelimit-limit']).toMatch(/^\d+$/);
    expect((await api.app.inject({ method: 'POST', url: '/v1/movements', headers: badKeyHeaders, payload })).json().code).toBe('svc:auth/nonce_replayed');
    expect(await tokensOf(api.tenantId)).toBe(before);
  });

  it('is checked before an Idempotency-Key replay', async () => {
    const keyed = { method: 'POST', url: '/v1/movements', body: movementEvent('adm-keyed'), key: api.keys.ingest, headers: { 'Idempotency-Key': 'adm-k' } } as const;
    const headers = api.client.headersFor(keyed);
    const payload = JSON.stringify(movementEvent('adm-keyed'));
    expect((await api.app.inject({ method: 'POST', url: '/v1/movements', headers, payload })).statusCode).toBe(202);
    expect((await api.app.inject({ method: 'POST', url: '/v1/movements', headers, payload })).json().code).toBe('svc:auth/nonce_replayed');
    // A fresh nonce with the same key replays the stored response.
    const again = await api.client.send(keyed);
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('is claimed for a key without the ingest scope: 403, then 401 for its replay', async () => {
    const headers = api.client.headersFor({ method: 'POST', url: '/v1/movements', body: movementEvent('adm-scope'), key: api.keys.read });
    const payload = JSON.stringify(movementEvent('adm-scope'));
    expect((await api.app.inject({ method: 'POST', url: '/v1/movements', headers, payload })).statusCode).toBe(403);
    expect((await api.app.inject({ method: 'POST', url: '/v1/movements', headers, payload })).json().code).toBe('svc:auth/nonce_replayed');
  });

  it('is free again after 600 s', async () => {
    expect((await postMovement(api.client, 'adm-aging-1', { nonce: 'adm-aging' })).statusCode).toBe(202);
    api.clock.advance(599);
    expect((await postMovement(api.client, 'adm-aging-2', { nonce: 'adm-aging' })).statusCode).toBe(401);
    api.clock.advance(2);
    expect((await postMovement(api.client, 'adm-aging-3', { nonce: 'adm-aging' })).statusCode).toBe(202);
  });
});

describe('the rate limit of ingest', () => {
  it('refuses a tenant its bucket last showed empty before validating its batch', async () => {
    await createTenant(api.db.pool, 'adm-empty', 'USD');
    await setTenantRateLimit(api.db.pool, 'adm-empty', { capacity: 1000, refillPerS: 1 });
    const key = await api.issue('adm-empty', 'ingest');
    const batch = (prefix: string, n: number) => ({ events: Array.from({ length: n }, (_, i) => ({ object: 'movement', event: movementEvent(`${prefix}-${i}`) })) });
    expect((await api.client.post('/v1/batches', batch('adm-empty-a', 1000), key)).statusCode).toBe(202);
    // Validation reads the tenant's asset registry first; a request refused before it never does.
    const validated = vi.spyOn(TenantAssetRegistry.prototype, 'forTenant');
    try {
      const refused = await api.client.post('/v1/batches', batch('adm-empty-b', 10), key);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['svc-ratelimit-remaining']).toBe('0');
      expect(validated).not.toHaveBeenCalled();
    } finally {
      validated.mockRestore();
    }
    expect(await inboxCount('adm-empty-b')).toBe(0);
  });

  it('holds across API processes: 1000 tokens, six batches of 400 from two processes at once, two accepted', async () => {
    await createTenant(api.db.pool, 'adm-limited', 'USD');
    await setTenantRateLimit(api.db.pool, 'adm-limited', { capacity: 1000, refillPerS: 1 });
    const key = await api.issue('adm-limited', 'ingest');
    const second = await secondProcess();
    const batch = (prefix: string) => ({ events: Array.from({ length: 400 }, (_, i) => ({ object: 'movement', event: movementEvent(`${prefix}-${i}`) })) });
    try {
      const other = new SigningClient(second.app, () => api.clock.now());
      const results = await Promise.all([
        ...Array.from({ length: 3 }, (_, i) => api.client.post('/v1/batches', batch(`adm-limited-a${i}`), key)),
        ...Array.from({ length: 3 }, (_, i) => other.post('/v1/batches', batch(`adm-limited-b${i}`), key)),
      ]);
      const accepted = results.filter((r) => r.statusCode === 202);
      const refused = results.filter((r) => r.statusCode === 429);
      expect(accepted).toHaveLength(2);
      expect(refused).toHaveLength(4);
      for (const r of refused) {
        expect(r.json().code).toBe('svc:rate_limit/exceeded');
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        expect(r.headers['svc-ratelimit-remaining']).toBe('200');
      }
      expect(await inboxCount('adm-limited-')).toBe(800);
    } finally {
      await second.app.close();
    }
  });
});

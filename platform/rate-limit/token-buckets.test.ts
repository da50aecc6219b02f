import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createApi } from '../../services/api/wiring.ts';
import { movementEvent } from '../../test/fixtures/events.ts';
import { SigningClient } from '../../test/support/signing-client.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { setTenantRateLimit } from './token-buckets.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await setTenantRateLimit(api.db.pool, api.tenantId, { capacity: 1000, refillPerS: 10 });
});
afterAll(async () => api?.close());

const batchOf = (n: number, prefix: string) => ({ events: Array.from({ length: n }, (_, i) => ({ object: 'movement', event: movementEvent(`${prefix}-${i}`) })) });

describe('per-tenant token bucket, measured in events', () => {
  it('reports the bucket on ingest, batch, validate and status responses', async () => {
    const single = await api.client.post('/v1/movements', movementEvent('rl-1'), api.keys.ingest);
    expect(single.headers['svc-ratelimit-limit']).toBe('1000');
    expect(single.headers['svc-ratelimit-remaining']).toBe('999');
    expect(single.headers['svc-ratelimit-reset']).toBe('1');
    const batch = await api.client.post('/v1/batches', batchOf(9, 'rl-b'), api.keys.ingest);
    expect(batch.headers['svc-ratelimit-remaining']).toBe('990');
    const validate = await api.client.post('/v1/validate', batchOf(10, 'rl-v'), api.keys.ingest);
    expect(validate.headers['svc-ratelimit-remaining']).toBe('980');
    expect(validate.headers['svc-ratelimit-reset']).toBe('2');
    const status = await api.client.get(`/v1/events/${single.json().event_id}`, api.keys.ingest);
    expect(status.headers['svc-ratelimit-remaining']).toBe('980');
  });

  it('refuses with 429 and Retry-After once exhausted, and refills with time', async () => {
    api.clock.advance(100);
    expect((await api.client.post('/v1/batches', batchOf(1000, 'rl-full'), api.keys.ingest)).statusCode).toBe(202);
    const refused = await api.client.post('/v1/movements', movementEvent('rl-over'), api.keys.ingest);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('svc:rate_limit/exceeded');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['svc-ratelimit-remaining']).toBe('0');
    // Nothing was written for the refused request.
    const { rowCount } = await api.db.pool.query('SELECT 1 FROM inbox_events WHERE external_id = $1', ['rl-over']);
    expect(rowCount).toBe(0);

    // A batch of 50 needs 5 s of refill at 10 events/s.
    const batch = await api.client.post('/v1/batches', batchOf(50, 'rl-wait'), api.keys.ingest);
    expect(batch.statusCode).toBe(429);
    expect(batch.headers['retry-after']).toBe('5');
    api.clock.advance(5);
    expect((await api.client.post('/v1/batches', batchOf(50, 'rl-wait'), api.keys.ingest)).statusCode).toBe(202);
  });

  it('starts a bucket again, full, when a database crash emptied the unlogged table', async () => {
    api.clock.advance(100);
    expect((await api.client.post('/v1/movements', movementEvent('rl-before-crash'), api.keys.ingest)).statusCode).toBe(202);
    // What a crash leaves of an unlogged table: nothing, while this process believes its row exists.
    await api.db.pool.query('DELETE FROM rate_limit_buckets WHERE tenant_id = $1', [api.tenantId]);
    const after = await api.client.post('/v1/movements', movementEvent('rl-after-crash'), api.keys.ingest);
    expect(after.statusCode).toBe(202);
    expect(after.headers['svc-ratelimit-remaining']).toBe('999');
  });

  it('takes a tenant\'s new limits once its cached ones are 30 s old on the service\'s clock', async () => {
    api.clock.advance(100);
    const limit = async (id: string) => (await api.client.post('/v1/movements', movementEvent(id), api.keys.ingest)).headers['svc-ratelimit-limit'];
    expect(await limit('rl-limits-1')).toBe('1000');
    await setTenantRateLimit(api.db.pool, api.tenantId, { capacity: 2000, refillPerS: 10 });
    expect(await limit('rl-limits-2')).toBe('1000');
    api.clock.advance(31);
    try {
      expect(await limit('rl-limits-3')).toBe('2000');
    } finally {
      await setTenantRateLimit(api.db.pool, api.tenantId, { capacity: 1000, refillPerS: 10 });
      api.clock.advance(31);
    }
  });

  it('holds across API processes sharing the database', async () => {
    api.clock.advance(100);
    const second = await createApi({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: api.db.pool, databaseUrl: api.db.url, masterKey: api.masterKey, clock: api.clock, logger: false });
    try {
      const other = new SigningClient(second.app, () => api.clock.now());
      expect((await api.client.post('/v1/batches', batchOf(600, 'rl-p1'), api.keys.ingest)).statusCode).toBe(202);
      const fromSecond = await other.post('/v1/batches', batchOf(600, 'rl-p2'), api.keys.ingest);
      expect(fromSecond.statusCode).toBe(429);
      expect(fromSecond.headers['svc-ratelimit-remaining']).toBe('400');
    } finally {
      await second.app.close();
    }
  });
});

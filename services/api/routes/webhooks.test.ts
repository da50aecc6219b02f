import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEvents } from '../../webhooks/outgoing-events.ts';
import { sampleEvent } from '../../webhooks/sample-payloads.test-kit.ts';
import { sweepOutbox } from '../../webhooks/declared-payloads.test-kit.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { problemSchema } from '../../../schemas/problem.ts';
import {
  secretRotationSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
  webhookEndpointCreatedSchema,
  webhookEndpointPageSchema,
  webhookEndpointSchema,
} from '../../../schemas/webhooks/resources.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.ts';
import { createDeliveryWorker } from '../../webhooks/wiring.ts';
import type { DeliveryWorker } from '../../webhooks/worker.ts';

const problemOf = (res: { json: () => unknown; headers: Record<string, unknown> }) => {
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  return problemSchema.parse(res.json());
};

describe('webhook endpoint registration rules (production policy: public HTTPS only)', () => {
  let api: TestApi;
  // Names resolve through this table: never real DNS in tests.
  const names: Record<string, string[]> = { 'hooks.example': ['93.184.215.14'], 'inside.example': ['10.1.2.3'], 'mixed.example': ['93.184.215.14', '127.0.0.1'] };
  beforeAll(async () => {
    api = await startTestApi({}, { resolve: async (host) => (names[host] ?? []).map((address) => ({ address, family: 4 as const })) });
  });
  afterAll(() => api.close());
  const register = (body: unknown) => api.client.post('/v1/webhook-endpoints', body, api.keys.webhook_mgmt);

  it('registers an endpoint and shows its secret once', async () => {
    const res = await register({ url: 'https://hooks.example/svc', channel: 'compliance', event_types: ['alert.opened', 'coverage.degraded'], description: 'case system' });
    expect(res.statusCode).toBe(201);
    const created = webhookEndpointCreatedSchema.parse(res.json());
    expect(created).toMatchObject({ url: 'https://hooks.example/svc', channel: 'compliance', status: 'enabled', previous_secret_valid_until: null, verified_at: null });
    expect(created.secret).toMatch(/^whsec_/);

    const shown = await api.client.get(`/v1/webhook-endpoints/${created.endpoint_id}`, api.keys.webhook_mgmt);
    expect(webhookEndpointSchema.parse(shown.json())).not.toHaveProperty('secret');
    expect(shown.body).not.toContain(created.secret);
    const listed = webhookEndpointPageSchema.parse((await api.client.get('/v1/webhook-endpoints', api.keys.webhook_mgmt)).json());
    expect(listed.data.map((e) => e.endpoint_id)).toContain(created.endpoint_id);
    // The secret is stored sealed, never as text.
    const { rows } = await api.db.pool.query(`SELECT secret_sealed FROM webhook_endpoints`);
    expect(rows.every((r) => !Buffer.from(r.secret_sealed).includes(created.secret))).toBe(true);
  });

  it('registers what a view shows back: description null is no description', async () => {
    const res = await register({ url: 'https://hooks.example/null', channel: 'compliance', event_types: ['alert.opened'], description: null });
    expect(res.statusCode).toBe(201);
    expect(webhookEndpointCreatedSchema.parse(res.json()).description).toBeNull();
  });

  it('refuses a description PostgreSQL cannot store, with its path, and registers nothing', async () => {
    const { rows: before } = await api.db.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints');
    const res = await register({ url: 'https://hooks.example/svc', channel: 'compliance', event_types: ['alert.opened'], description: 'case\u0000system' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'svc:validation/schema', errors: [{ path: 'description', code: 'svc:validation/schema' }] });
    const { rows: after } = await api.db.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints');
    expect(after[0].n).toBe(before[0].n);
  });

  it.each([
    ['http://hooks.example/svc', 'must use https'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://[fd00::1]/', 'unique-local'],
    ['https://169.254.169.254/latest', 'link-local'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://0.0.0.0/', ''],
    // A name: one answer whatever it resolves to, or whether it does.
    ['https://inside.example/hook', 'host does not resolve to a public address'],
    ['https://mixed.example/hook', 'host does not resolve to a public address'],
    ['https://nowhere.example/hook', 'host does not resolve to a public address'],
    ['https://user:pw@hooks.example/hook', 'user name or password'],
  ])('refuses %s', async (url, reason) => {
    const res = await register({ url, channel: 'compliance', event_types: ['alert.opened'] });
    expect(res.statusCode).toBe(400);
    const problem = problemOf(res);
    expect(problem.code).toBe('svc:webhook/destination_refused');
    expect(problem.errors).toEqual([{ path: 'url', code: 'svc:webhook/destination_refused', message: expect.stringContaining(reason) }]);
    expect(res.body).not.toContain('pw@');
  });

  it('refuses an event type its channel may not carry, and says which', async () => {
    const res = await register({ url: 'https://hooks.example/ops', channel: 'operational', event_types: ['coverage.degraded', 'alert.opened', 'risk_state.changed'] });
    expect(res.statusCode).toBe(400);
    const problem = problemOf(res);
    expect(problem.code).toBe('svc:webhook/event_not_deliverable');
    expect(problem.errors.map((e) => [e.path, e.code])).toEqual([
      ['event_types.1', 'svc:webhook/event_not_deliverable'],
      ['event_types.2', 'svc:webhook/event_not_deliverable'],
    ]);
    // And the other way round: an operational-only event on a compliance endpoint.
    const back = await register({ url: 'https://hooks.example/c', channel: 'compliance', event_types: ['import.completed', 'recommendation.issued'] });
    expect(problemOf(back).errors).toEqual([
      { path: 'event_types.0', code: 'svc:webhook/event_not_deliverable', message: 'an operational event deliverable only on operational, not on compliance' },
      { path: 'event_types.1', code: 'svc:webhook/event_not_deliverable', message: 'an advisory event deliverable only on operational, not on compliance' },
    ]);
    expect(problem.errors[0]!.message).toBe('a restricted_aml event deliverable only on compliance, not on operational');
  });

  it.each([
    [{ url: 'https://hooks.example/x', channel: 'compliance', event_types: ['alert.opend'] }, 'event_types.0'],
    [{ url: 'https://hooks.example/x', channel: 'compliance', event_types: ['alert.opened', 'alert.opened'] }, 'event_types.1'],
    [{ url: 'https://hooks.example/x', channel: 'compliance', event_types: [] }, 'event_types'],
    [{ url: 'https://hooks.example/x', channel: 'both', event_types: ['alert.opened'] }, 'channel'],
    [{ url: 'https://hooks.example/x', channel: ['compliance'], event_types: ['alert.opened'] }, 'channel'],
    [{ url: 'https://hooks.example/x', event_types: ['alert.opened'] }, 'channel'],
    [{ url: 'https://hooks.example/x', channel: 'compliance', event_types: ['alert.opened'], secret: 'mine' }, 'secret'],
    [{ url: `https://hooks.example/${'x'.repeat(2048)}`, channel: 'compliance', event_types: ['alert.opened'] }, 'url'],
  ])('refuses a malformed registration %#', async (body, path) => {
    const res = await register(body);
    expect(res.statusCode).toBe(400);
    const problem = problemOf(res);
    expect(problem.code).toBe('svc:validation/schema');
    expect(problem.errors.map((e) => e.path)).toContain(path);
  });

  it('takes only JSON bodies, only webhook_mgmt keys and no Idempotency-Key', async () => {
    expect(problemOf(await api.client.post('/v1/webhook-endpoints', '{"url":', api.keys.webhook_mgmt)).code).toBe('svc:request/malformed_json');
    for (const key of [api.keys.read, api.keys.compliance, api.keys.ingest]) {
      const res = await api.client.get('/v1/webhook-endpoints', key);
      expect(problemOf(res).code).toBe('svc:auth/insufficient_scope');
    }
    const keyed = await api.client.post('/v1/webhook-endpoints', { url: 'https://hooks.example/k', channel: 'compliance', event_types: ['alert.opened'] }, api.keys.webhook_mgmt, {
      'idempotency-key': 'k-1',
    });
    expect(keyed.statusCode).toBe(400);
    expect(problemOf(keyed).code).toBe('svc:request/bad_request');
    const { rows } = await api.db.pool.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = 'https://hooks.example/k'`);
    expect(rows[0].n).toBe(0);
  });

  it('rotates a secret with an overlap, disables, enables and deletes, all within the tenant', async () => {
    const created = webhookEndpointCreatedSchema.parse(
      (await register({ url: 'https://hooks.example/life', channel: 'operational', event_types: ['recommendation.issued'] })).json(),
    );
    const path = `/v1/webhook-endpoints/${created.endpoint_id}`;
    const send = (suffix: string, body?: unknown) => api.client.send({ method: 'POST', url: `${path}${suffix}`, key: api.keys.webhook_mgmt, ...(body === undefined ? {} : { body }) });

    const rotated = secretRotationSchema.parse((await send('/rotate-secret')).json());
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previous_secret_valid_until).toBe(new Date(api.clock.now().getTime() + 86_400_000).toISOString());
    const short = secretRotationSchema.parse((await send('/rotate-secret', { previous_secret_valid_for_s: 600 })).json());
    expect(short.previous_secret_valid_until).toBe(new Date(api.clock.now().getTime() + 600_000).toISOString());
    expect(webhookEndpointSchema.parse((await api.client.get(path, api.keys.webhook_mgmt)).json()).previous_secret_valid_until).toBe(short.previous_secret_valid_until);
    expect(problemOf(await send('/rotate-secret', { previous_secret_valid_for_s: -1 })).errors[0]!.path).toBe('previous_secret_valid_for_s');
    expect(problemOf(await send('/rotate-secret', { overlap: 5 })).errors).toEqual([{ path: 'overlap', code: 'svc:validation/schema', message: 'unknown member' }]);

    expect(webhookEndpointSchema.parse((await send('/disable')).json()).status).toBe('disabled');
    expect(problemOf(await send('/test')).code).toBe('svc:webhook/endpoint_inactive');
    expect(webhookEndpointSchema.parse((await send('/enable')).json()).status).toBe('enabled');

    const stranger = await api.issue('globex', 'webhook_mgmt').catch(async () => {
      await createTenant(api.db.pool, 'globex', 'EUR');
      return api.issue('globex', 'webhook_mgmt');
    });
    expect(problemOf(await api.client.get(path, stranger)).code).toBe('svc:resource/not_found');
    expect(problemOf(await api.client.send({ method: 'DELETE', url: path, key: stranger })).code).toBe('svc:resource/not_found');

    expect((await api.client.send({ method: 'DELETE', url: path, key: api.keys.webhook_mgmt })).statusCode).toBe(204);
    expect(problemOf(await api.client.get(path, api.keys.webhook_mgmt)).code).toBe('svc:resource/not_found');
    expect(problemOf(await send('/rotate-secret')).code).toBe('svc:resource/not_found');
    expect(problemOf(await api.client.get('/v1/webhook-endpoints/whk_nonsense', api.keys.webhook_mgmt)).code).toBe('svc:resource/not_found');
  });

  it('refuses a body on test, disable, enable and replay, which take none (or {}), and does nothing', async () => {
    const created = webhookEndpointCreatedSchema.parse(
      (await register({ url: 'https://hooks.example/bodyless', channel: 'compliance', event_types: ['alert.opened'] })).json(),
    );
    const path = `/v1/webhook-endpoints/${created.endpoint_id}`;
    const targets = [`${path}/test`, `${path}/disable`, `${path}/enable`, '/v1/webhook-deliveries/whd_00000000-0000-7000-8000-000000000000/replay'];
    const deliveriesOf = async () => (await api.db.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0].n as number;
    const before = await deliveriesOf();
    for (const url of targets) {
      const send = (body: unknown, headers?: Record<string, string>) => api.client.send({ method: 'POST', url, body, key: api.keys.webhook_mgmt, ...(headers ? { headers } : {}) });
      expect(problemOf(await send('{bad')).code).toBe('svc:request/malformed_json');
      expect(problemOf(await send({ previous_secret_valid_for_s: 0 })).errors).toEqual([
        { path: 'previous_secret_valid_for_s', code: 'svc:validation/schema', message: 'unknown member' },
      ]);
      expect(problemOf(await send('[]')).code).toBe('svc:validation/schema');
      const plain = await send('x', { 'content-type': 'text/plain' });
      expect(plain.statusCode).toBe(415);
      expect(problemOf(plain).code).toBe('svc:request/unsupported_media_type');
    }
    // Nothing was done: still enabled, no probe queued.
    expect(webhookEndpointSchema.parse((await api.client.get(path, api.keys.webhook_mgmt)).json()).status).toBe('enabled');
    expect(await deliveriesOf()).toBe(before);
    // No body, or {}, is taken.
    expect(webhookEndpointSchema.parse((await api.client.post(`${path}/disable`, {}, api.keys.webhook_mgmt)).json()).status).toBe('disabled');
    expect(webhookEndpointSchema.parse((await api.client.send({ method: 'POST', url: `${path}/enable`, key: api.keys.webhook_mgmt })).json()).status).toBe('enabled');
  });

  it('pages the endpoint list with a cursor bound to it', async () => {
    await register({ url: 'https://hooks.example/page', channel: 'compliance', event_types: ['episode.updated'] });
    const first = webhookEndpointPageSchema.parse((await api.client.get('/v1/webhook-endpoints?limit=1', api.keys.webhook_mgmt)).json());
    expect(first.data).toHaveLength(1);
    expect(first.has_more).toBe(true);
    const second = webhookEndpointPageSchema.parse((await api.client.get(`/v1/webhook-endpoints?limit=1&cursor=${first.next_cursor}`, api.keys.webhook_mgmt)).json());
    expect(second.data[0]!.endpoint_id).not.toBe(first.data[0]!.endpoint_id);
    expect(problemOf(await api.client.get('/v1/webhook-endpoints?cursor=forged.x', api.keys.webhook_mgmt)).code).toBe('svc:request/invalid_parameter');
    expect(problemOf(await api.client.get('/v1/webhook-endpoints?limit=0', api.keys.webhook_mgmt)).code).toBe('svc:request/invalid_parameter');
  });
});

describe('webhook test, delivery log and replay (operator test mode, a receiver on this machine)', () => {
  let api: TestApi;
  let receiver: WebhookReceiver;
  let worker: { worker: DeliveryWorker; stop: () => Promise<void> };
  let dir: string;
  beforeAll(async () => {
    api = await startTestApi({ SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SVC_WEBHOOK_TEST_WAIT_MS: '5000', SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000' });
    receiver = await startWebhookReceiver({ now: () => api.clock.now().getTime() });
    dir = await mkdtemp(join(tmpdir(), 'svc-webhook-api-'));
    await writeFile(join(dir, 'ca.pem'), receiver.caPem);
    const config = loadConfig({ SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SVC_WEBHOOK_CA_FILE: join(dir, 'ca.pem'), SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000' });
    worker = await createDeliveryWorker({ config, pool: api.db.pool, masterKey: api.masterKey, clock: api.clock, random: () => 0.5, pollMs: 10 });
  });
  afterAll(async () => {
    await receiver.close();
    await worker.stop();
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  const register = async (path: string, channel: 'compliance' | 'operational', eventTypes: string[]) => {
    const res = await api.client.post('/v1/webhook-endpoints', { url: receiver.url(path), channel, event_types: eventTypes }, api.keys.webhook_mgmt);
    const created = webhookEndpointCreatedSchema.parse(res.json());
    receiver.setSecrets(path, [created.secret]);
    receiver.setChannel(path, channel);
    return created;
  };
  const deliveries = async (query = '') => webhookDeliveryPageSchema.parse((await api.client.get(`/v1/webhook-deliveries${query}`, api.keys.webhook_mgmt)).json());

  it('answers 504 when no worker observes the test in time, and the attempt is queued, not refused', async () => {
    const endpoint = await register('/unwatched', 'operational', ['coverage.degraded']);
    const res = await api.client.post(`/v1/webhook-endpoints/${endpoint.endpoint_id}/test`, undefined, api.keys.webhook_mgmt);
    expect(res.statusCode).toBe(504);
    const problem = problemOf(res);
    expect(problem.code).toBe('svc:webhook/test_timeout');
    const queued = await deliveries(`?endpoint_id=${endpoint.endpoint_id}`);
    expect(queued.data).toMatchObject([{ event_type: 'webhook.test', status: 'pending', attempt_count: 0, response_status: null, latency_ms: null }]);
    expect(problem.detail).toContain(queued.data[0]!.delivery_id);
    // Nothing stamped.
    expect(webhookEndpointSchema.parse((await api.client.get(`/v1/webhook-endpoints/${endpoint.endpoint_id}`, api.keys.webhook_mgmt)).json()).verified_at).toBeNull();
  });

  it('answers 200 once the worker delivered a verified webhook.test, and 502 when the endpoint fails it', async () => {
    worker.worker.start();
    const good = await register('/good', 'compliance', ['alert.opened']);
    const res = await api.client.post(`/v1/webhook-endpoints/${good.endpoint_id}/test`, undefined, api.keys.webhook_mgmt);
    expect(res.statusCode).toBe(200);
    const delivery = webhookDeliverySchema.parse(res.json());
    expect(delivery).toMatchObject({ endpoint_id: good.endpoint_id, event_type: 'webhook.test', status: 'succeeded', attempt_count: 1 });
    expect(delivery.attempts).toMatchObject([{ attempt: 1, response_status: 200, error: null, next_retry_at: null }]);
    // The row itself shows the latest answer, as the spec's delivery row does.
    expect(delivery).toMatchObject({ response_status: 200, latency_ms: delivery.attempts[0]!.latency_ms });
    const seen = receiver.deliveries.filter((d) => d.path === '/good');
    expect(seen.map((d) => d.verification.problems)).toEqual([[]]);
    expect(JSON.parse(seen[0]!.body.toString()).data).toMatchObject({ endpoint_id: good.endpoint_id, channel: 'compliance', sent_at: api.clock.now().toISOString() });
    expect(webhookEndpointSchema.parse((await api.client.get(`/v1/webhook-endpoints/${good.endpoint_id}`, api.keys.webhook_mgmt)).json()).verified_at).toBe(
      api.clock.now().toISOString(),
    );

    const bad = await register('/bad', 'operational', ['coverage.degraded']);
    receiver.setBehaviour('/bad', { status: 500, body: 'nope' });
    const failed = await api.client.post(`/v1/webhook-endpoints/${bad.endpoint_id}/test`, undefined, api.keys.webhook_mgmt);
    expect(failed.statusCode).toBe(502);
    const problem = problemOf(failed);
    expect(problem.code).toBe('svc:webhook/endpoint_failed');
    expect(problem.detail).toContain('answered 500');
    // A probe is one attempt: it is not retried.
    expect((await deliveries(`?endpoint_id=${bad.endpoint_id}`)).data).toMatchObject([{ status: 'failed', attempt_count: 1, response_status: 500, latency_ms: expect.any(Number), next_retry_at: null }]);
  });

  it('lists deliveries with every attempt, filtered and paged, and replays one under the same envelope id', async () => {
    const endpoint = await register('/log', 'compliance', ['alert.opened', 'episode.updated']);
    receiver.setBehaviour('/log', (attempt) => (attempt === 1 ? { status: 503, retryAfter: '30' } : { status: 200 }));
    await enqueueEvents(api.db.pool, [sampleEvent(api.tenantId, 'alert.opened')], api.clock.now());
    await receiver.waitFor((all) => all.filter((d) => d.path === '/log').length === 1, 5000);
    await waitUntil(async () => (await deliveries(`?endpoint_id=${endpoint.endpoint_id}`)).data[0]?.attempts.length === 1);
    const pendingOne = (await deliveries(`?endpoint_id=${endpoint.endpoint_id}&status=pending`)).data[0]!;
    expect(pendingOne.next_retry_at).toBe(new Date(api.clock.now().getTime() + 30_000).toISOString());
    expect(pendingOne.attempts).toMatchObject([{ attempt: 1, response_status: 503, next_retry_at: pendingOne.next_retry_at }]);

    api.clock.advance(30);
    await waitUntil(async () => (await deliveries(`?endpoint_id=${endpoint.endpoint_id}`)).data[0]?.status === 'succeeded');
    const [done] = (await deliveries(`?endpoint_id=${endpoint.endpoint_id}&status=succeeded&event_type=alert.opened`)).data;
    expect(done!.attempts.map((a) => a.response_status)).toEqual([503, 200]);
    expect(done!.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0);
    expect((await deliveries(`?endpoint_id=${endpoint.endpoint_id}&event_type=episode.updated`)).data).toEqual([]);
    expect((await deliveries(`?since=${new Date(api.clock.now().getTime() + 1000).toISOString()}`)).data).toEqual([]);

    const replayed = await api.client.post(`/v1/webhook-deliveries/${done!.delivery_id}/replay`, undefined, api.keys.webhook_mgmt);
    expect(replayed.statusCode).toBe(202);
    const replay = webhookDeliverySchema.parse(replayed.json());
    // (The running worker may already have taken it, so its status is not asserted here.)
    expect(replay).toMatchObject({ envelope_id: done!.envelope_id, replay_of: done!.delivery_id, event_type: 'alert.opened' });
    expect(replay.delivery_id).not.toBe(done!.delivery_id);
    await receiver.waitFor((all) => all.filter((d) => d.path === '/log').length === 3, 5000);
    const copies = receiver.deliveries.filter((d) => d.path === '/log');
    expect(new Set(copies.map((d) => d.headers['svc-webhook-id']))).toEqual(new Set([done!.envelope_id]));
    expect(JSON.parse(copies[2]!.body.toString()).delivery).toEqual({ attempt: 1, delivery_id: replay.delivery_id });
    expect(copies.every((d) => d.verification.verified)).toBe(true);

    // Pages, newest first, with a cursor bound to the filters.
    const page1 = await deliveries(`?endpoint_id=${endpoint.endpoint_id}&limit=1`);
    expect(page1.data[0]!.delivery_id).toBe(replay.delivery_id);
    const page2 = await deliveries(`?endpoint_id=${endpoint.endpoint_id}&limit=1&cursor=${page1.next_cursor}`);
    expect(page2.data[0]!.delivery_id).toBe(done!.delivery_id);
    expect(page2.has_more).toBe(false);
    const foreign = await api.client.get(`/v1/webhook-deliveries?limit=1&cursor=${page1.next_cursor}`, api.keys.webhook_mgmt);
    expect(problemOf(foreign).code).toBe('svc:request/invalid_parameter');
  });

  it('refuses bad filters, unknown deliveries, replay to a disabled endpoint and other tenants', async () => {
    for (const query of ['?status=lost', '?event_type=alert.closed', '?endpoint_id=nope', '?since=yesterday', '?limit=201']) {
      expect(problemOf(await api.client.get(`/v1/webhook-deliveries${query}`, api.keys.webhook_mgmt)).code).toBe('svc:request/invalid_parameter');
    }
    expect(problemOf(await api.client.post('/v1/webhook-deliveries/whd_00000000-0000-7000-8000-000000000000/replay', undefined, api.keys.webhook_mgmt)).code).toBe(
      'svc:resource/not_found',
    );
    const endpoint = await register('/paused', 'compliance', ['alert.opened']);
    await api.client.post(`/v1/webhook-endpoints/${endpoint.endpoint_id}/test`, undefined, api.keys.webhook_mgmt);
    const [probe] = (await deliveries(`?endpoint_id=${endpoint.endpoint_id}`)).data;
    await api.client.post(`/v1/webhook-endpoints/${endpoint.endpoint_id}/disable`, undefined, api.keys.webhook_mgmt);
    const refused = await api.client.post(`/v1/webhook-deliveries/${probe!.delivery_id}/replay`, undefined, api.keys.webhook_mgmt);
    expect(refused.statusCode).toBe(409);
    expect(problemOf(refused).code).toBe('svc:webhook/endpoint_inactive');

    await createTenant(api.db.pool, 'initech', 'USD');
    const stranger = await api.issue('initech', 'webhook_mgmt');
    expect((await api.client.get('/v1/webhook-deliveries', stranger)).json()).toEqual({ data: [], has_more: false });
    expect(problemOf(await api.client.get(`/v1/webhook-deliveries/${probe!.delivery_id}`, stranger)).code).toBe('svc:resource/not_found');
    expect(problemOf(await api.client.post(`/v1/webhook-deliveries/${probe!.delivery_id}/replay`, undefined, stranger)).code).toBe('svc:resource/not_found');
  });

  // Runs last: the probes are written around the outbox writer, so they are swept here.
  it('every webhook.test probe parses with its declared payload', async () => {
    const swept = await sweepOutbox(api.db.pool);
    expect(swept.refused).toEqual([]);
    expect(swept.types).toContain('webhook.test');
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

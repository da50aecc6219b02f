// The SDK's webhook endpoint management and delivery log against the real service over
// 127.0.0.1, with the delivery worker running and a real HTTPS receiver on this machine (operator
// test mode: private addresses allowed, the receiver's CA trusted), as the route tests set it up.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../platform/config.ts';
import { createDeliveryWorker } from '../../../services/webhooks/wiring.ts';
import type { DeliveryWorker } from '../../../services/webhooks/worker.ts';
import { apiError, startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.ts';
import { type SvcClient, type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointRegistration, type WithResponse } from '../src/index.ts';

let svc: SdkService;
let receiver: WebhookReceiver;
let worker: { worker: DeliveryWorker; stop: () => Promise<void> };
let dir: string;
let hooks: SvcClient;

beforeAll(async () => {
  // The service waits max(test wait, attempt timeout + 2 s) for a test: 4 s here.
  svc = await startSdkService({ SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SVC_WEBHOOK_TEST_WAIT_MS: '1000', SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000' });
  receiver = await startWebhookReceiver({ now: () => svc.api.clock.now().getTime() });
  dir = await mkdtemp(join(tmpdir(), 'svc-sdk-webhooks-'));
  await writeFile(join(dir, 'ca.pem'), receiver.caPem);
  const config = loadConfig({ SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SVC_WEBHOOK_CA_FILE: join(dir, 'ca.pem'), SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000' });
  // Made here, started only once the test of an unwatched endpoint has timed out (below).
  worker = await createDeliveryWorker({ config, pool: svc.api.db.pool, masterKey: svc.api.masterKey, clock: svc.api.clock, random: () => 0.5, pollMs: 10 });
  hooks = svc.client('webhook_mgmt');
});
afterAll(async () => {
  // The receiver first: it ends hanging requests, so stopping the worker does not wait them out.
  await receiver?.close();
  await worker?.stop();
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// Registers an endpoint at a receiver path through the SDK, and tells the receiver its secret.
async function register(path: string, registration: Partial<WebhookEndpointRegistration> = {}) {
  const created = await hooks.webhookEndpoints.create({ url: receiver.url(path), channel: 'compliance', event_types: ['alert.opened'], ...registration });
  receiver.setSecrets(path, [created.secret]);
  receiver.setChannel(path, created.channel);
  return created;
}

const at = (path: string) => receiver.deliveries.filter((d) => d.path === path);

describe('webhookEndpoints', () => {
  it('create answers 201 with the endpoint and its secret, shown once', async () => {
    const created = await register('/created', { description: 'case system', event_types: ['alert.opened', 'episode.updated'] });
    expect(created.lastResponse).toMatchObject({ status: 201, attempts: 1, idempotencyKey: undefined });
    expect(created).toMatchObject({
      url: receiver.url('/created'),
      channel: 'compliance',
      event_types: ['alert.opened', 'episode.updated'],
      description: 'case system',
      status: 'enabled',
      previous_secret_valid_until: null,
      verified_at: null,
    });
    expect(created.endpoint_id).toMatch(/^whk_/);
    expect(created.secret).toMatch(/^whsec_/);
  });

  it('retrieve answers the endpoint without its secret', async () => {
    const created = await register('/retrieved');
    const endpoint = await hooks.webhookEndpoints.retrieve(created.endpoint_id);
    expect(endpoint.lastResponse.status).toBe(200);
    const { secret: _secret, ...shown } = created;
    expect(endpoint).toEqual(shown);
    expect(endpoint).not.toHaveProperty('secret');
  });

  it('list iterates every endpoint, oldest first, across pages of one', async () => {
    // A second apart: endpoints made at one instant have no order of their own.
    svc.api.clock.advance(1);
    const one = await register('/list-1');
    svc.api.clock.advance(1);
    const ids = [one.endpoint_id, (await register('/list-2')).endpoint_id];
    const pages = [];
    for await (const page of hooks.webhookEndpoints.list({ limit: 1 }).pages()) pages.push(page);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.every((p) => p.data.length === 1 && p.lastResponse.status === 200)).toBe(true);
    const all: WebhookEndpoint[] = [];
    for await (const endpoint of hooks.webhookEndpoints.list({ limit: 1 })) all.push(endpoint);
    const listed = all.map((e) => e.endpoint_id);
    expect(listed).toEqual(pages.flatMap((p) => p.data.map((e) => e.endpoint_id)));
    expect(new Set(listed).size).toBe(listed.length);
    // The two registered last come last, in order.
    expect(listed.slice(-2)).toEqual(ids);
    const first = await hooks.webhookEndpoints.list({ limit: 1 }).firstPage();
    expect(first).toMatchObject({ has_more: true, data: [{ endpoint_id: listed[0] }] });
  });

  it('rotateSecret answers the new secret with the overlap, default or given', async () => {
    const created = await register('/rotated');
    const rotated = await hooks.webhookEndpoints.rotateSecret(created.endpoint_id);
    expect(rotated.lastResponse.status).toBe(200);
    expect(rotated).toEqual({ endpoint_id: created.endpoint_id, secret: expect.stringMatching(/^whsec_/), previous_secret_valid_until: new Date(svc.api.clock.now().getTime() + 86_400_000).toISOString() });
    expect(rotated.secret).not.toBe(created.secret);
    const short = await hooks.webhookEndpoints.rotateSecret(created.endpoint_id, { previous_secret_valid_for_s: 600 });
    expect(short.previous_secret_valid_until).toBe(new Date(svc.api.clock.now().getTime() + 600_000).toISOString());
    expect((await hooks.webhookEndpoints.retrieve(created.endpoint_id)).previous_secret_valid_until).toBe(short.previous_secret_valid_until);
    const bad = await apiError(hooks.webhookEndpoints.rotateSecret(created.endpoint_id, { previous_secret_valid_for_s: -1 }));
    expect(bad).toMatchObject({ status: 400, code: 'svc:validation/schema' });
    expect(bad.errors[0]!.path).toBe('previous_secret_valid_for_s');
  });

  it('disable and enable answer the endpoint in its new state; a disabled endpoint cannot be tested', async () => {
    const created = await register('/toggled');
    const disabled = await hooks.webhookEndpoints.disable(created.endpoint_id);
    expect(disabled.lastResponse.status).toBe(200);
    expect(disabled).toMatchObject({ endpoint_id: created.endpoint_id, status: 'disabled' });
    const inactive = await apiError(hooks.webhookEndpoints.test(created.endpoint_id));
    expect(inactive).toMatchObject({ status: 409, code: 'svc:webhook/endpoint_inactive' });
    const enabled = await hooks.webhookEndpoints.enable(created.endpoint_id);
    expect(enabled).toMatchObject({ endpoint_id: created.endpoint_id, status: 'enabled' });
    expect((await hooks.webhookEndpoints.retrieve(created.endpoint_id)).status).toBe('enabled');
  });

  it('delete resolves with nothing, and the endpoint is gone', async () => {
    const created = await register('/deleted');
    await expect(hooks.webhookEndpoints.delete(created.endpoint_id)).resolves.toBeUndefined();
    expect(await apiError(hooks.webhookEndpoints.retrieve(created.endpoint_id))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(hooks.webhookEndpoints.delete(created.endpoint_id))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
  });

  it('create throws the field problems of a refused registration', async () => {
    const refused = await apiError(hooks.webhookEndpoints.create({ url: 'http://hooks.example/svc', channel: 'compliance', event_types: ['alert.opened'] }));
    expect(refused).toMatchObject({ status: 400, code: 'svc:webhook/destination_refused' });
    expect(refused.errors).toEqual([{ path: 'url', code: 'svc:webhook/destination_refused', message: expect.stringContaining('https') }]);
    const undeliverable = await apiError(hooks.webhookEndpoints.create({ url: receiver.url('/ops'), channel: 'operational', event_types: ['coverage.degraded', 'alert.opened'] }));
    expect(undeliverable).toMatchObject({ status: 400, code: 'svc:webhook/event_not_deliverable' });
    expect(undeliverable.errors.map((e) => e.path)).toEqual(['event_types.1']);
  });

  it('needs the webhook_mgmt scope', async () => {
    expect(await apiError(svc.client('read').webhookEndpoints.list().firstPage())).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
    expect(await apiError(svc.client('compliance').webhookDeliveries.list().firstPage())).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
  });
});

describe('webhookEndpoints.test with no delivery worker running', () => {
  it('throws 504 svc:webhook/test_timeout, not retried; the attempt stays queued', async () => {
    const endpoint = await register('/unwatched');
    const timedOut = await apiError(hooks.webhookEndpoints.test(endpoint.endpoint_id));
    // 504 is a status the SDK retries, but this call takes no Idempotency-Key: sent once.
    expect(timedOut).toMatchObject({ status: 504, code: 'svc:webhook/test_timeout', attempts: 1 });
    const queued = await hooks.webhookDeliveries.list({ endpoint_id: endpoint.endpoint_id }).toArray();
    expect(queued).toMatchObject([{ event_type: 'webhook.test', status: 'pending', attempt_count: 0 }]);
    expect(timedOut.problem!.detail).toContain(queued[0]!.delivery_id);
  });
});

describe('webhookEndpoints.test and the delivery log', () => {
  let good: WithResponse<WebhookDelivery>;
  beforeAll(() => worker.worker.start());

  it('test resolves with the delivery once the endpoint answered a verified webhook.test with 2xx', async () => {
    const endpoint = await register('/good');
    good = await hooks.webhookEndpoints.test(endpoint.endpoint_id);
    expect(good.lastResponse.status).toBe(200);
    expect(good).toMatchObject({ endpoint_id: endpoint.endpoint_id, event_type: 'webhook.test', status: 'succeeded', attempt_count: 1, replay_of: null });
    expect(good.attempts).toMatchObject([{ attempt: 1, response_status: 200, error: null, next_retry_at: null }]);
    expect(at('/good').map((d) => d.verification.problems)).toEqual([[]]);
    expect((await hooks.webhookEndpoints.retrieve(endpoint.endpoint_id)).verified_at).toBe(svc.api.clock.now().toISOString());
  });

  it('test throws 502 svc:webhook/endpoint_failed when the endpoint fails, and is not retried', async () => {
    const endpoint = await register('/bad');
    receiver.setBehaviour('/bad', { status: 500, body: 'nope' });
    const failed = await apiError(hooks.webhookEndpoints.test(endpoint.endpoint_id));
    // 502 is a status the SDK retries, but only for calls that may be repeated: this one creates
    // a delivery, takes no Idempotency-Key, and so is sent once.
    expect(failed).toMatchObject({ status: 502, code: 'svc:webhook/endpoint_failed', attempts: 1 });
    expect(failed.problem!.detail).toContain('answered 500');
    expect(at('/bad')).toHaveLength(1);
    expect(await hooks.webhookDeliveries.list({ endpoint_id: endpoint.endpoint_id }).toArray()).toMatchObject([{ status: 'failed', attempt_count: 1 }]);
  });

  it('webhookDeliveries.retrieve answers one delivery with every attempt', async () => {
    const delivery = await hooks.webhookDeliveries.retrieve(good.delivery_id);
    expect(delivery.lastResponse.status).toBe(200);
    expect(delivery).toEqual(good);
    expect(await apiError(hooks.webhookDeliveries.retrieve('whd_00000000-0000-7000-8000-000000000000'))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
  });

  it('webhookDeliveries.replay sends the same envelope again as a new delivery', async () => {
    // A second later, so the replay is the newer of the two.
    svc.api.clock.advance(1);
    const replay = await hooks.webhookDeliveries.replay(good.delivery_id);
    expect(replay.lastResponse).toMatchObject({ status: 202, attempts: 1, idempotencyKey: undefined });
    expect(replay).toMatchObject({ envelope_id: good.envelope_id, replay_of: good.delivery_id, endpoint_id: good.endpoint_id, event_type: 'webhook.test' });
    expect(replay.delivery_id).not.toBe(good.delivery_id);
    const copies = await receiver.waitFor((all) => all.filter((d) => d.path === '/good').length === 2, 5000);
    const both = copies.filter((d) => d.path === '/good');
    expect(new Set(both.map((d) => d.headers['svc-webhook-id']))).toEqual(new Set([good.envelope_id]));
    expect(both.every((d) => d.verification.verified)).toBe(true);
    expect(await apiError(hooks.webhookDeliveries.replay('whd_00000000-0000-7000-8000-000000000000'))).toMatchObject({ status: 404 });
  });

  it('webhookDeliveries.list iterates the deliveries newest first across pages, filters kept', async () => {
    const pages = [];
    for await (const page of hooks.webhookDeliveries.list({ endpoint_id: good.endpoint_id, limit: 1 }).pages()) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([1, 1]);
    expect(pages.map((p) => p.has_more)).toEqual([true, false]);
    const [replay, original] = pages.map((p) => p.data[0]!);
    expect(replay).toMatchObject({ replay_of: good.delivery_id });
    expect(original!.delivery_id).toBe(good.delivery_id);
    expect(await hooks.webhookDeliveries.list({ endpoint_id: good.endpoint_id, event_type: 'alert.opened' }).toArray()).toEqual([]);
    const first = await hooks.webhookDeliveries.list({ status: 'failed' }).firstPage();
    expect(first.data.every((d) => d.status === 'failed')).toBe(true);
    expect(first.data.length).toBeGreaterThan(0);
    const bad = await apiError(hooks.webhookDeliveries.list({ limit: 201 }).toArray());
    expect(bad).toMatchObject({ status: 400, code: 'svc:request/invalid_parameter' });
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { enqueueEvents } from './outgoing-events.ts';
import { sampleEvent, samplePayload } from './sample-payloads.test-kit.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import type { WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import { verifyWebhookDelivery } from '../../test/support/spec-webhook-verifier.ts';
import { startWebhookWorld, type WebhookWorld } from '../../test/support/webhook-world.ts';
import { DeliveryStore } from './delivery-store.ts';
import { MAX_SIGNING_SECRETS } from './endpoints.ts';

let world: WebhookWorld;
beforeEach(async () => {
  world = await startWebhookWorld();
});
afterEach(async () => {
  await world.close();
});

const enqueue = (types: WebhookEventType[], tenantId = world.tenantId) =>
  enqueueEvents(
    world.db.pool,
    types.map((type, i) => sampleEvent(tenantId, type, i)),
    world.clock.now(),
  );

interface DeliveryState {
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  deadline_at: Date;
}
const deliveryOf = async (endpointId: string): Promise<DeliveryState[]> =>
  (
    await world.db.pool.query<DeliveryState>(
      `SELECT status, attempts, next_attempt_at, deadline_at FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at, delivery_id`,
      [endpointId],
    )
  ).rows;
const attemptsOf = async (endpointId: string) =>
  (
    await world.db.pool.query<{ attempt: number; started_at: Date; response_status: number | null; error: string | null; response_excerpt: string | null; next_retry_at: Date | null }>(
      `SELECT a.attempt, a.started_at, a.response_status, a.error, a.response_excerpt, a.next_retry_at
         FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id) WHERE d.endpoint_id = $1 ORDER BY a.attempt`,
      [endpointId],
    )
  ).rows;
const received = (path: string) => world.receiver.deliveries.filter((d) => d.path === path);
const envelopeOf = (body: Buffer) => JSON.parse(body.toString('utf8'));

describe('delivery worker', () => {
  it('delivers each event to the subscribed endpoints whose channel the catalog allows, signed and shaped as the spec says', async () => {
    const compliance = await world.register('/compliance', 'compliance', ['alert.opened', 'coverage.degraded']);
    await world.register('/operational', 'operational', ['recommendation.issued', 'coverage.degraded']);
    await createTenant(world.db.pool, 'other', 'EUR');
    const [alert, , coverage] = await enqueue(['alert.opened', 'recommendation.issued', 'coverage.degraded', 'episode.updated']);
    await enqueue(['alert.opened', 'coverage.degraded'], 'other');

    const worker = await world.startWorker();
    await world.deliverDue(worker);

    expect(world.receiver.deliveries.map((d) => d.verification.problems)).toEqual(world.receiver.deliveries.map(() => []));
    expect(received('/compliance').map((d) => envelopeOf(d.body).type).sort()).toEqual(['alert.opened', 'coverage.degraded']);
    expect(received('/operational').map((d) => envelopeOf(d.body).type).sort()).toEqual(['coverage.degraded', 'recommendation.issued']);
    // One envelope id per event, whichever endpoint it reaches; a delivery id per endpoint.
    const coverageCopies = world.receiver.deliveries.filter((d) => envelopeOf(d.body).type === 'coverage.degraded');
    expect(coverageCopies.map((d) => d.headers['svc-webhook-id'])).toEqual([coverage, coverage]);
    expect(new Set(coverageCopies.map((d) => envelopeOf(d.body).delivery.delivery_id)).size).toBe(2);
    // Delivery ids made by the fan-out statement are UUIDv7 carrying the instant of the fan-out.
    for (const copy of coverageCopies) {
      const id: string = envelopeOf(copy.body).delivery.delivery_id;
      expect(id).toMatch(/^whd_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(id.slice(4, 17).replace('-', ''), 16)).toBe(world.clock.now().getTime());
    }
    const first = received('/compliance').find((d) => envelopeOf(d.body).type === 'alert.opened')!;
    expect(envelopeOf(first.body)).toMatchObject({ id: alert, tenant_id: 'acme', classification: 'restricted_aml', delivery: { attempt: 1 } });
    expect(envelopeOf(first.body).data).toEqual(samplePayload('alert.opened', 0));
    expect(envelopeOf(first.body).data.summary).toBe('ünïcode & spaces  kept (0)');
    expect(await deliveryOf(compliance.id)).toMatchObject([{ status: 'succeeded', attempts: 1, next_attempt_at: null }, { status: 'succeeded' }]);
    // Every event left the outbox, including the one nobody subscribed to.
    const { rows } = await world.db.pool.query(`SELECT count(*)::int AS n FROM outgoing_events WHERE fanned_out_at IS NULL`);
    expect(rows[0].n).toBe(0);
  });

  it('signs with both secrets during a rotation overlap, and with the new one alone after it', async () => {
    const endpoint = await world.register('/rotating', 'compliance', ['alert.opened']);
    const rotated = (await world.endpoints.rotateSecret(world.tenantId, endpoint.id, 3600, world.clock.now()))!;
    world.receiver.setSecrets('/rotating', [rotated.secret]);
    const worker = await world.startWorker();
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);

    const during = received('/rotating')[0]!;
    expect(String(during.headers['svc-webhook-signature']).match(/v1=/g)).toHaveLength(2);
    const check = (secrets: string[], delivery = during) =>
      verifyWebhookDelivery({ body: delivery.body, headers: delivery.headers, secrets, channel: 'compliance', now: world.clock.now().getTime() }).verified;
    expect(check([endpoint.secret])).toBe(true);
    expect(check([rotated.secret])).toBe(true);
    expect(check(['whsec_neither'])).toBe(false);

    world.clock.advance(3601);
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);
    const after = received('/rotating')[1]!;
    expect(String(after.headers['svc-webhook-signature']).match(/v1=/g)).toHaveLength(1);
    expect(check([rotated.secret], after)).toBe(true);
    expect(check([endpoint.secret], after)).toBe(false);
  });

  it('keeps every promised overlap through a second rotation, and bounds the secrets that sign', async () => {
    const endpoint = await world.register('/twice', 'compliance', ['alert.opened']);
    const first = (await world.endpoints.rotateSecret(world.tenantId, endpoint.id, 3600, world.clock.now()))!;
    world.clock.advance(60);
    const second = (await world.endpoints.rotateSecret(world.tenantId, endpoint.id, 600, world.clock.now()))!;
    world.receiver.setSecrets('/twice', [second.secret]);
    const worker = await world.startWorker();
    const deliver = async () => {
      await enqueue(['alert.opened']);
      await world.deliverDue(worker);
      return received('/twice').at(-1)!;
    };
    const check = (secrets: string[], delivery: { body: Buffer; headers: Record<string, unknown> }) =>
      verifyWebhookDelivery({ body: delivery.body, headers: delivery.headers as never, secrets, channel: 'compliance', now: world.clock.now().getTime() }).verified;

    // The secret the first rotation retired still signs until the instant that rotation gave.
    let delivery = await deliver();
    expect(String(delivery.headers['svc-webhook-signature']).match(/v1=/g)).toHaveLength(3);
    for (const secret of [endpoint.secret, first.secret, second.secret]) expect(check([secret], delivery)).toBe(true);
    // Past the second overlap (600 s), before the first one's end (3600 s from the first rotation).
    world.clock.advance(601);
    delivery = await deliver();
    expect(check([endpoint.secret], delivery)).toBe(true);
    expect(check([first.secret], delivery)).toBe(false);
    world.clock.advance(3600);
    delivery = await deliver();
    expect(String(delivery.headers['svc-webhook-signature']).match(/v1=/g)).toHaveLength(1);
    expect(check([endpoint.secret], delivery)).toBe(false);

    // However many rotations overlap, at most MAX_SIGNING_SECRETS sign; the overlaps ending last stay.
    const secrets = [second.secret];
    for (let i = 0; i < MAX_SIGNING_SECRETS + 2; i++) {
      world.clock.advance(1);
      secrets.push((await world.endpoints.rotateSecret(world.tenantId, endpoint.id, 3600, world.clock.now()))!.secret);
    }
    delivery = await deliver();
    expect(String(delivery.headers['svc-webhook-signature']).match(/v1=/g)).toHaveLength(MAX_SIGNING_SECRETS);
    expect(secrets.map((secret) => check([secret], delivery))).toEqual(secrets.map((_, i) => i >= secrets.length - MAX_SIGNING_SECRETS));
    // Deleting the endpoint takes its retired secrets with it.
    await world.endpoints.delete(world.tenantId, endpoint.id, world.clock.now());
    const { rows } = await world.db.pool.query(`SELECT count(*)::int AS n FROM webhook_retired_secrets WHERE endpoint_id = $1`, [endpoint.id]);
    expect(rows[0].n).toBe(0);
  });

  it('retries a failed delivery on its schedule, honouring Retry-After, until it is accepted', async () => {
    const endpoint = await world.register('/flaky', 'compliance', ['alert.opened']);
    world.receiver.setBehaviour('/flaky', (attempt) => (attempt <= 2 ? { status: 503, retryAfter: '120', body: 'busy' } : { status: 204 }));
    const worker = await world.startWorker();
    await enqueue(['alert.opened']);
    const start = world.clock.now().getTime();

    await world.deliverDue(worker);
    expect(await deliveryOf(endpoint.id)).toMatchObject([{ status: 'pending', attempts: 1, next_attempt_at: new Date(start + 120_000) }]);
    // Nothing is due before the retry time.
    world.clock.advance(119);
    await world.deliverDue(worker);
    expect(received('/flaky')).toHaveLength(1);

    world.clock.advance(1);
    await world.deliverDue(worker);
    world.clock.advance(120);
    await world.deliverDue(worker);

    expect(await deliveryOf(endpoint.id)).toMatchObject([{ status: 'succeeded', attempts: 3, next_attempt_at: null }]);
    const log = await attemptsOf(endpoint.id);
    expect(log.map((a) => a.response_status)).toEqual([503, 503, 204]);
    expect(log.map((a) => a.response_excerpt)).toEqual(['busy', 'busy', null]);
    expect(log.map((a) => a.next_retry_at?.getTime() ?? null)).toEqual([start + 120_000, start + 240_000, null]);
    // The same envelope each time, its attempt counting up.
    expect(received('/flaky').map((d) => envelopeOf(d.body).delivery.attempt)).toEqual([1, 2, 3]);
    expect(new Set(received('/flaky').map((d) => envelopeOf(d.body).id)).size).toBe(1);
    expect(received('/flaky').every((d) => d.verification.verified)).toBe(true);
  });

  it('keeps retrying for the whole horizon with growing, capped delays, then dead-letters', async () => {
    const endpoint = await world.register('/down', 'compliance', ['alert.opened']);
    world.receiver.setBehaviour('/down', { status: 500 });
    const worker = await world.startWorker({ SVC_WEBHOOK_RETRY_HORIZON_H: '24' });
    await enqueue(['alert.opened']);
    const start = world.clock.now().getTime();
    const deadline = start + 24 * 3_600_000;

    for (let guard = 0; guard < 200; guard++) {
      await world.deliverDue(worker);
      const [state] = await deliveryOf(endpoint.id);
      if (state!.status !== 'pending') break;
      world.clock.set(state!.next_attempt_at!);
    }

    const [state] = await deliveryOf(endpoint.id);
    expect(state).toMatchObject({ status: 'dead_lettered', next_attempt_at: null, deadline_at: new Date(deadline) });
    const log = await attemptsOf(endpoint.id);
    const gaps = log.slice(1).map((a, i) => a.started_at.getTime() - log[i]!.started_at.getTime());
    // random() = 0.5: half of 10 s, 20 s, 40 s, ... up to half the one-hour cap.
    expect(gaps.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(Math.max(...gaps)).toBe(1_800_000);
    expect(log.at(-1)!.started_at.getTime()).toBe(deadline);
    expect(log.at(-1)!.next_retry_at).toBeNull();
    expect(log.slice(0, -1).every((a, i) => a.next_retry_at!.getTime() === log[i + 1]!.started_at.getTime())).toBe(true);
    expect(received('/down')).toHaveLength(log.length);
  });

  it('gives a hanging endpoint a few slots and keeps delivering to the others meanwhile', async () => {
    await world.register('/hangs', 'compliance', ['alert.opened']);
    await world.register('/answers', 'compliance', ['alert.opened']);
    world.receiver.setBehaviour('/hangs', { hang: true });
    const worker = await world.startWorker({ SVC_WEBHOOK_ENDPOINT_CONCURRENCY: '2', SVC_WEBHOOK_CONCURRENCY: '8', SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '60000' });
    await enqueue(Array.from({ length: 12 }, () => 'alert.opened' as const));
    worker.start();

    await world.receiver.waitFor((_, counts) => (counts.byPath['/answers'] ?? 0) === 12, 20_000);
    // Every delivery to the answering endpoint went through while the hanging one held its two
    // slots (its attempts are still open: nothing was recorded for them).
    expect(world.receiver.counts().byPath['/hangs']).toBe(2);
    const { rows } = await world.db.pool.query(`SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id) JOIN webhook_endpoints e USING (endpoint_id) WHERE e.url LIKE '%/hangs'`);
    expect(rows[0].n).toBe(0);
  });

  it('drops an endpoint that never answers to one slot, so that hanging endpoints with a backlog never hold them all', async () => {
    const hanging = ['/hangs-1', '/hangs-2', '/hangs-3', '/hangs-4'];
    for (const path of hanging) {
      await world.register(path, 'compliance', ['alert.opened']);
      world.receiver.setBehaviour(path, { hang: true });
    }
    // Four hanging endpoints at two slots each take all eight, and each has twenty deliveries due,
    // older than the one for the endpoint that answers.
    await enqueue(Array.from({ length: 20 }, () => 'alert.opened' as const));
    const worker = await world.startWorker({ SVC_WEBHOOK_ENDPOINT_CONCURRENCY: '2', SVC_WEBHOOK_CONCURRENCY: '8', SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000' });
    worker.start();
    await world.receiver.waitFor((_, counts) => hanging.every((path) => counts.byPath[path] === 2), 20_000);
    world.clock.advance(1);
    await world.register('/answers-behind', 'compliance', ['alert.opened']);
    await enqueue(['alert.opened']);

    await world.receiver.waitFor((_, counts) => (counts.byPath['/answers-behind'] ?? 0) === 1, 60_000);
    // It came after the first attempt to each hanging endpoint timed out and one more each, not
    // after all eighty.
    const tried = hanging.reduce((n, path) => n + (world.receiver.counts().byPath[path] ?? 0), 0);
    expect(tried).toBeLessThanOrEqual(16);
  });

  it('records an endpoint that answered 200 and never finished its body as having accepted the delivery', async () => {
    const endpoint = await world.register('/drips', 'compliance', ['alert.opened']);
    world.receiver.setBehaviour('/drips', { hangAfterHeaders: true, body: 'ok, and then' });
    const worker = await world.startWorker({ SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000' });
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);

    expect(await deliveryOf(endpoint.id)).toMatchObject([{ status: 'succeeded', attempts: 1 }]);
    expect(await attemptsOf(endpoint.id)).toMatchObject([{ response_status: 200, error: null, response_excerpt: 'ok, and then' }]);
  });

  it('re-checks the destination when it connects: a name re-pointed at a private address is never reached', async () => {
    const port = new URL(world.receiver.url('/')).port;
    const endpoint = await world.register('/rebound', 'compliance', ['alert.opened'], `https://hooks.example:${port}/rebound`);
    const literal = await world.register('/literal', 'compliance', ['alert.opened']);
    const worker = await world.startWorker(
      { SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' },
      { resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
    );
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);

    expect(world.receiver.deliveries).toHaveLength(0);
    for (const id of [endpoint.id, literal.id]) {
      const [attempt] = await attemptsOf(id);
      expect(attempt).toMatchObject({ response_status: null, error: expect.stringMatching(/^destination refused: .*loopback/) });
      expect(attempt!.error).not.toContain('127.0.0.1');
      expect((await deliveryOf(id))[0]!.status).toBe('pending');
    }
  });

  it('never follows a redirect and keeps only a short excerpt of a response body', async () => {
    const moved = await world.register('/moved', 'compliance', ['alert.opened']);
    const chatty = await world.register('/chatty', 'compliance', ['alert.opened']);
    world.receiver.setBehaviour('/moved', { redirectTo: world.receiver.url('/elsewhere') });
    world.receiver.setBehaviour('/chatty', { status: 400, body: 'é'.repeat(50_000) });
    const worker = await world.startWorker();
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);

    expect(received('/elsewhere')).toHaveLength(0);
    expect((await attemptsOf(moved.id))[0]).toMatchObject({ response_status: 302, error: 'redirect not followed' });
    const [attempt] = await attemptsOf(chatty.id);
    expect(attempt).toMatchObject({ response_status: 400, error: 'answered 400' });
    expect(Buffer.byteLength(attempt!.response_excerpt!)).toBeLessThanOrEqual(512);
    expect(attempt!.response_excerpt!.startsWith('éé')).toBe(true);
  });

  it('sends nothing to an endpoint disabled while its delivery was being claimed', async () => {
    const endpoint = await world.register('/off-during-claim', 'compliance', ['alert.opened']);
    const worker = await world.startWorker();
    await enqueue(['alert.opened']);
    // The disable commits after the claim's statement read the endpoint as enabled.
    const original = (Object.getOwnPropertyDescriptor(DeliveryStore.prototype, 'claim') as { value: DeliveryStore['claim'] }).value;
    const claim = vi.spyOn(DeliveryStore.prototype, 'claim').mockImplementation(async function (this: DeliveryStore, ...args) {
      const claimed = await original.apply(this, args);
      if (claimed.length > 0) await world.endpoints.setStatus(world.tenantId, endpoint.id, 'disabled', world.clock.now());
      return claimed;
    });
    try {
      await world.deliverDue(worker);
    } finally {
      claim.mockRestore();
    }

    expect(received('/off-during-claim')).toHaveLength(0);
    expect((await deliveryOf(endpoint.id)).map((d) => d.status)).toEqual(['cancelled']);
  });

  it('stops delivering to an endpoint once it is disabled: its pending deliveries are cancelled', async () => {
    const endpoint = await world.register('/off', 'compliance', ['alert.opened']);
    world.receiver.setBehaviour('/off', { status: 500 });
    const worker = await world.startWorker();
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);
    await world.endpoints.setStatus(world.tenantId, endpoint.id, 'disabled', world.clock.now());
    await enqueue(['alert.opened']);
    world.clock.advance(3600);
    await world.deliverDue(worker);

    expect(received('/off')).toHaveLength(1);
    expect((await deliveryOf(endpoint.id)).map((d) => d.status)).toEqual(['cancelled']);
  });

  it('attempts again a delivery whose worker died mid-attempt, once the lease runs out', async () => {
    const endpoint = await world.register('/lease', 'compliance', ['alert.opened']);
    await enqueue(['alert.opened']);
    const store = new DeliveryStore(world.db.pool);
    const now = world.clock.now();
    await store.fanOut(now, 10, 86_400_000);
    // A worker claims it and is never heard from again.
    expect(await store.claim({ now, limit: 10, perEndpoint: 4, free: new Map(), leaseMs: 40_000 })).toHaveLength(1);

    const worker = await world.startWorker();
    await world.deliverDue(worker);
    expect(received('/lease')).toHaveLength(0);
    world.clock.advance(40);
    await world.deliverDue(worker);

    expect(received('/lease').map((d) => envelopeOf(d.body).delivery.attempt)).toEqual([2]);
    expect(await deliveryOf(endpoint.id)).toMatchObject([{ status: 'succeeded', attempts: 2 }]);
  });

  it('records an attempt that fails inside the worker, so the retry schedule still applies', async () => {
    const endpoint = await world.register('/broken', 'compliance', ['alert.opened']);
    await world.db.pool.query(`UPDATE webhook_endpoints SET secret_sealed = '\\x0102'::bytea WHERE endpoint_id = $1`, [endpoint.id]);
    const errors: unknown[] = [];
    const worker = await world.startWorker({}, { onError: (error) => errors.push(error) });
    await enqueue(['alert.opened']);
    await world.deliverDue(worker);

    expect(errors).toHaveLength(1);
    expect(received('/broken')).toHaveLength(0);
    expect(await attemptsOf(endpoint.id)).toMatchObject([{ attempt: 1, response_status: null, error: 'internal error (logged by the service)' }]);
    expect(await deliveryOf(endpoint.id)).toMatchObject([{ status: 'pending', attempts: 1 }]);
  });

  it('reaches the other endpoints behind one whose backlog fills its slots', async () => {
    await world.register('/backlog', 'compliance', ['alert.opened']);
    await world.register('/behind', 'compliance', ['episode.updated']);
    world.receiver.setBehaviour('/backlog', { hang: true });
    const worker = await world.startWorker({ SVC_WEBHOOK_ENDPOINT_CONCURRENCY: '2', SVC_WEBHOOK_CONCURRENCY: '8', SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '60000' });
    // A's backlog fanned out first, B's a second later: the oldest due deliveries are all A's.
    const store = new DeliveryStore(world.db.pool);
    await enqueue(Array.from({ length: 300 }, () => 'alert.opened' as const));
    await store.fanOut(world.clock.now(), 500, 86_400_000);
    world.clock.advance(1);
    await enqueue(['episode.updated', 'episode.updated']);
    await store.fanOut(world.clock.now(), 500, 86_400_000);
    await worker.step();
    await world.receiver.waitFor((_, counts) => (counts.byPath['/behind'] ?? 0) === 2, 10_000);
    expect(world.receiver.counts().byPath['/backlog']).toBe(2);
  });

  it('never sends a single-attempt probe twice: one whose worker died is failed when its lease runs out', async () => {
    const endpoint = await world.register('/probe', 'operational', ['coverage.degraded']);
    const envelopeId = '01900000-0000-7000-8000-0000000000aa';
    await world.db.pool.query(
      `INSERT INTO outgoing_events (tenant_id, envelope_id, type, classification, created_at, data, fanned_out_at) VALUES ('acme', $1, 'webhook.test', 'operational', $2, '{}', $2)`,
      [envelopeId, world.clock.now()],
    );
    await world.db.pool.query(
      `INSERT INTO webhook_deliveries (tenant_id, delivery_id, endpoint_id, envelope_id, event_type, status, attempts, max_attempts, next_attempt_at, deadline_at, created_at)
       VALUES ('acme', '01900000-0000-7000-8000-0000000000ab', $1, $2, 'webhook.test', 'pending', 1, 1, $3, $3::timestamptz + interval '1 day', $3)`,
      [endpoint.id, envelopeId, world.clock.now()],
    );
    const worker = await world.startWorker();
    await world.deliverDue(worker);
    expect(received('/probe')).toHaveLength(0);
    expect(await deliveryOf(endpoint.id)).toMatchObject([{ status: 'failed', attempts: 1 }]);
  });
});

// A tenant, a real HTTPS receiver and the delivery worker on a database of their own, sharing a
// manual clock: what the webhook suites build on. The worker runs in operator test mode (private
// addresses allowed, the receiver's CA trusted through SVC_WEBHOOK_CA_FILE).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../platform/clock.ts';
import { loadConfig } from '../../platform/config.ts';
import { SecretBox } from '../../platform/crypto/secret-box.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import type { Channel, WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import type { Resolve } from '../../services/webhooks/destination.ts';
import { WebhookEndpoints } from '../../services/webhooks/endpoints.ts';
import { createDeliveryWorker } from '../../services/webhooks/wiring.ts';
import type { DeliveryWorker } from '../../services/webhooks/worker.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

export interface WebhookWorld {
  db: TestDatabase;
  clock: ManualClock;
  masterKey: Buffer;
  tenantId: string;
  receiver: WebhookReceiver;
  caFile: string;
  endpoints: WebhookEndpoints;
  // Registers an endpoint at the receiver's path, and tells the receiver its secret and channel.
  register: (path: string, channel: Channel, eventTypes: WebhookEventType[], url?: string) => Promise<{ id: string; secret: string }>;
  startWorker: (env?: Record<string, string>, options?: { resolve?: Resolve; random?: () => number; onError?: (error: unknown) => void }) => Promise<DeliveryWorker>;
  // Steps the worker until nothing is due now, waiting for every attempt and its record.
  deliverDue: (worker: DeliveryWorker) => Promise<void>;
  close: () => Promise<void>;
}

export async function startWebhookWorld(): Promise<WebhookWorld> {
  const db = await createTestDatabase();
  const clock = new ManualClock('2026-09-01T12:00:00Z');
  const masterKey = randomBytes(32);
  const tenantId = 'acme';
  await createTenant(db.pool, tenantId, 'USD');
  const receiver = await startWebhookReceiver({ now: () => clock.now().getTime() });
  const dir = await mkdtemp(join(tmpdir(), 'svc-webhook-ca-'));
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, receiver.caPem);
  const endpoints = new WebhookEndpoints(db.pool, new SecretBox(masterKey));
  const stops: Array<() => Promise<void>> = [];

  return {
    db,
    clock,
    masterKey,
    tenantId,
    receiver,
    caFile,
    endpoints,
    register: async (path, channel, eventTypes, url) => {
      const { row, secret } = await endpoints.register(tenantId, { url: url ?? receiver.url(path), channel, event_types: eventTypes }, clock.now());
      receiver.setSecrets(path, [secret]);
      receiver.setChannel(path, channel);
      return { id: row.endpoint_id, secret };
    },
    startWorker: async (env = {}, options = {}) => {
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        SVC_WEBHOOK_CA_FILE: caFile,
        ...env,
      });
      const { worker, stop } = await createDeliveryWorker({
        config,
        pool: db.pool,
        masterKey,
        clock,
        random: options.random ?? (() => 0.5),
        ...(options.resolve ? { resolve: options.resolve } : {}),
        pollMs: 20,
        onError:
          options.onError ??
          ((error) => {
            throw error;
          }),
      });
      stops.push(stop);
      return worker;
    },
    deliverDue: async (worker) => {
      for (;;) {
        const { fannedOut, claimed } = await worker.step();
        await worker.settle();
        if (fannedOut === 0 && claimed === 0) return;
      }
    },
    close: async () => {
      // The receiver first: it ends hanging requests, so stopping the worker does not wait them out.
      await receiver.close();
      for (const stop of stops) await stop();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

import { readFile } from 'node:fs/promises';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Resolve } from './destination.ts';
import { WebhookSender } from './sender.ts';
import { DeliveryWorker } from './worker.ts';

export type WebhookWorkerConfig = Pick<
  Config,
  | 'SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS'
  | 'SVC_WEBHOOK_CA_FILE'
  | 'SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS'
  | 'SVC_WEBHOOK_RETRY_HORIZON_H'
  | 'SVC_WEBHOOK_CONCURRENCY'
  | 'SVC_WEBHOOK_ENDPOINT_CONCURRENCY'
>;

// The one place the delivery worker's parts are made from configuration (`svc up`, `svc run
// webhooks`, tests and the benchmark).
export async function createDeliveryWorker(options: {
  config: WebhookWorkerConfig;
  pool: Pool;
  masterKey: Buffer;
  clock: Clock;
  resolve?: Resolve;
  random?: () => number;
  pollMs?: number;
  onError?: (error: unknown) => void;
}): Promise<{ worker: DeliveryWorker; stop: () => Promise<void> }> {
  const { config } = options;
  const sender = new WebhookSender({
    policy: { allowPrivateNetworks: config.SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS, ...(options.resolve ? { resolve: options.resolve } : {}) },
    timeoutMs: config.SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS,
    // Not the per-endpoint limit: endpoints on one host share an origin, and one hanging path must
    // not hold the sockets its neighbours need (the worker limits each endpoint itself).
    maxSocketsPerOrigin: config.SVC_WEBHOOK_CONCURRENCY,
    ...(config.SVC_WEBHOOK_CA_FILE ? { extraCaPem: await readFile(config.SVC_WEBHOOK_CA_FILE, 'utf8') } : {}),
  });
  const worker = new DeliveryWorker({
    pool: options.pool,
    clock: options.clock,
    box: new SecretBox(options.masterKey),
    sender,
    concurrency: config.SVC_WEBHOOK_CONCURRENCY,
    endpointConcurrency: config.SVC_WEBHOOK_ENDPOINT_CONCURRENCY,
    attemptTimeoutMs: config.SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS,
    horizonMs: config.SVC_WEBHOOK_RETRY_HORIZON_H * 3_600_000,
    ...(options.random ? { random: options.random } : {}),
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
  return {
    worker,
    stop: async () => {
      await worker.stop();
      sender.close();
    },
  };
}

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretBox } from '../../platform/crypto/secret-box.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../platform/postgres/embedded.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { createPool, type Pool } from '../../platform/postgres/pool.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { WebhookEndpoints } from '../../services/webhooks/endpoints.ts';
import { ANY_PATH, startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { freshDataDir } from '../lib/bench-service.ts';
import type { Teardown } from '../lib/teardown.ts';
import { ANSWER_DELAY_MS, CHANNEL, ENDPOINTS, log, TENANT } from './settings.ts';

// What the bench measures in, all started in this process: a fresh embedded PostgreSQL (migrated,
// tenant `bench`), the HTTPS receiver that answers after ANSWER_DELAY_MS and verifies every
// delivery, and the webhook endpoints registered at its paths.

export interface Bench {
  dataDir: string;
  server: EmbeddedServer;
  pool: Pool;
  receiver: WebhookReceiver;
  // The receiver's CA, for the worker and the baseline sender to trust.
  caFile: string;
  masterKey: Buffer;
}

// Each thing started here is closed by the teardown, after the worker (connected to both).
export async function setUp(teardown: Teardown): Promise<Bench> {
  const dataDir = await freshDataDir(teardown, 'svc-bench-webhooks-');
  log(`starting PostgreSQL in ${dataDir}...`);
  const server = await startEmbeddedPostgres({ dataDir, port: 0 });
  teardown.closers.push(() => server.stop());
  const pool = createPool(server.url(), 4);
  teardown.closers.push(() => pool.end());
  await migrate(pool);
  const tenant = await createTenant(pool, TENANT, 'USD');
  if (tenant.kind !== 'created') throw new Error(`tenant ${TENANT}: ${tenant.kind}`);
  const receiver = await startWebhookReceiver({ keep: false });
  teardown.closers.push(() => receiver.close());
  receiver.setBehaviour(ANY_PATH, { delayMs: ANSWER_DELAY_MS });
  const caFile = join(dataDir, 'receiver-ca.pem');
  await writeFile(caFile, receiver.caPem);
  return { dataDir, server, pool, receiver, caFile, masterKey: randomBytes(32) };
}

// 10 endpoints at 10 paths of the receiver, which learns each path's secret and channel.
export async function registerEndpoints(bench: Bench): Promise<void> {
  const endpoints = new WebhookEndpoints(bench.pool, new SecretBox(bench.masterKey));
  for (let i = 0; i < ENDPOINTS; i++) {
    const path = `/hooks/${i}`;
    const { secret } = await endpoints.register(TENANT, { url: bench.receiver.url(path), channel: CHANNEL, event_types: ['alert.opened'] }, new Date());
    bench.receiver.setSecrets(path, [secret]);
    bench.receiver.setChannel(path, CHANNEL);
  }
}

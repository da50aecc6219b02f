import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../platform/clock.ts';
import { loadConfig } from '../../platform/config.ts';
import { SecretBox } from '../../platform/crypto/secret-box.ts';
import { issueKey, type Scope } from '../../platform/keys/api-keys.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { createApi } from '../../services/api/wiring.ts';
import type { Resolve } from '../../services/webhooks/destination.ts';
import { SigningClient, type Credential } from './signing-client.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

export interface TestApi {
  app: FastifyInstance;
  db: TestDatabase;
  clock: ManualClock;
  masterKey: Buffer;
  tenantId: string;
  keys: Record<Scope, Credential>;
  client: SigningClient;
  issue: (tenantId: string, scope: Scope) => Promise<Credential>;
  close: () => Promise<void>;
}

const TEST_NOW = '2026-09-01T12:00:00Z';

// The API on a database of its own, with tenant "acme" (base USD), one key per scope and a
// manual clock that signing and the service share.
export async function startTestApi(env: Record<string, string> = {}, options: { resolve?: Resolve } = {}): Promise<TestApi> {
  const db = await createTestDatabase();
  const clock = new ManualClock(TEST_NOW);
  const masterKey = randomBytes(32);
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const { app } = await createApi({ config, pool: db.pool, databaseUrl: db.url, masterKey, clock, logger: false, ...options });
  await app.ready();
  const box = new SecretBox(masterKey);
  const issue = async (tenantId: string, scope: Scope): Promise<Credential> => {
    const outcome = await issueKey(db.pool, box, { tenantId, scope, environment: 'test' });
    if (outcome.kind !== 'issued') throw new Error(`cannot issue a key for ${tenantId}`);
    return { keyId: outcome.key.key_id, secret: outcome.key.secret };
  };
  const tenantId = 'acme';
  await createTenant(db.pool, tenantId, 'USD');
  const keys = {
    ingest: await issue(tenantId, 'ingest'),
    read: await issue(tenantId, 'read'),
    webhook_mgmt: await issue(tenantId, 'webhook_mgmt'),
    compliance: await issue(tenantId, 'compliance'),
  };
  return {
    app,
    db,
    clock,
    masterKey,
    tenantId,
    keys,
    client: new SigningClient(app, () => clock.now()),
    issue,
    close: async () => {
      await app.close();
      await db.drop();
    },
  };
}

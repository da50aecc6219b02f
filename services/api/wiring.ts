import type { FastifyInstance } from 'fastify';
import { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import { SecretBox } from '../../platform/crypto/secret-box.ts';
import { ApiKeyStore } from '../../platform/keys/api-keys.ts';
import { NonceLedger } from '../../platform/keys/nonce-ledger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { buildApp, type ApiDeps } from './app.ts';

// The one place the API's parts are created from configuration.
export async function createApi(options: {
  config: Pick<Config, 'SVC_MAX_BODY_BYTES' | 'SVC_OCCURRED_AT_FUTURE_SKEW_S' | 'LOG_LEVEL'>;
  pool: Pool;
  masterKey: Buffer;
  clock: Clock;
  logger?: ApiDeps['logger'];
}): Promise<{ app: FastifyInstance; nonces: NonceLedger }> {
  const nonces = new NonceLedger(options.pool, { now: () => options.clock.now() });
  const app = await buildApp({
    pool: options.pool,
    clock: options.clock,
    keys: new ApiKeyStore(options.pool, new SecretBox(options.masterKey)),
    nonces,
    assets: new TenantAssetRegistry(options.pool),
    settings: {
      maxBodyBytes: options.config.SVC_MAX_BODY_BYTES,
      occurredAtFutureSkewS: options.config.SVC_OCCURRED_AT_FUTURE_SKEW_S,
    },
    logger: options.logger ?? { level: options.config.LOG_LEVEL },
  });
  return { app, nonces };
}

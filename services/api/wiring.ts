import type { FastifyInstance } from 'fastify';
import { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import { SecretBox } from '../../platform/crypto/secret-box.ts';
import { AcceptanceQueue } from '../../platform/inbox/acceptance-queue.ts';
import { ApiKeyStore } from '../../platform/keys/api-keys.ts';
import { NonceLedger } from '../../platform/keys/nonce-ledger.ts';
import { createPool, type Pool } from '../../platform/postgres/pool.ts';
import { TokenBuckets } from '../../platform/rate-limit/token-buckets.ts';
import { buildApp, type ApiDeps } from './app.ts';
import { openEngineProbes } from '../../platform/engine-probes.ts';
import { openBus, openGraphStore, type EngineSettings } from '../../platform/engines.ts';
import { CONSUMER_GROUPS } from '../../pipelines/groups.ts';
import { CursorCodec } from '../../platform/http/cursor.ts';
import { sweepIdempotencyKeys } from './ingest/idempotency.ts';
import { WebhookDeliveries } from '../webhooks/deliveries.ts';
import type { Resolve } from '../webhooks/destination.ts';
import { WebhookEndpoints } from '../webhooks/endpoints.ts';
import { Imports } from '../imports/imports.ts';
import { Reconciliations } from '../reconciliations/reconciliations.ts';
import { ConformanceTally } from '../conformance/tally.ts';
import { flushTallies } from '../conformance/flush.ts';

export type ApiConfig = Pick<
  Config,
  | 'SVC_MAX_BODY_BYTES'
  | 'SVC_OCCURRED_AT_FUTURE_SKEW_S'
  | 'LOG_LEVEL'
  | 'SVC_RATE_LIMIT_CAPACITY'
  | 'SVC_RATE_LIMIT_REFILL_PER_S'
  | 'SVC_IDEMPOTENCY_RETENTION_H'
  | 'SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS'
  | 'SVC_WEBHOOK_RETRY_HORIZON_H'
  | 'SVC_WEBHOOK_TEST_WAIT_MS'
  | 'SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS'
  | 'SVC_IMPORT_BACKFILL_DAYS'
> &
  EngineSettings;

const SWEEP_EVERY_MS = 60_000;

// The one place the API's parts are created from configuration.
export async function createApi(options: {
  config: ApiConfig;
  pool: Pool;
  // The same database as `pool`, for the small pool of asynchronously committed nonce claims.
  databaseUrl: string;
  masterKey: Buffer;
  clock: Clock;
  logger?: ApiDeps['logger'];
  // Name resolution for webhook destinations (tests inject one; DNS otherwise).
  resolve?: Resolve;
}): Promise<{ app: FastifyInstance; startMaintenance: () => () => void }> {
  const { config, pool, clock } = options;
  // Nonce claims, and admissions that write no events, commit without waiting for the WAL flush:
  // an API restart loses none, a database crash can lose the last fraction of a second of claims
  // (docs/decisions/0004). Admissions of one tenant wait for each other's bucket row, so four
  // are in flight: their nonce claims overlap while one holds the row (decision 0059).
  const noncePool = createPool(options.databaseUrl, 4, { synchronousCommit: false });
  const nonces = new NonceLedger(noncePool, { now: () => clock.now() });
  const durableNonces = new NonceLedger(pool, { now: () => clock.now() });
  const buckets = new TokenBuckets(pool, clock, { capacity: config.SVC_RATE_LIMIT_CAPACITY, refillPerS: config.SVC_RATE_LIMIT_REFILL_PER_S });
  const box = new SecretBox(options.masterKey);
  // The graph answers the analysts' graph reads; the bus only reports consumer lag (no relay here).
  const graph = await openGraphStore(config, pool);
  const bus = await openBus(config, pool, { relay: false });
  const engines = await openEngineProbes(config, { pool });
  const conformance = new ConformanceTally();
  const app = await buildApp({
    pool,
    clock,
    keys: new ApiKeyStore(pool, box, clock),
    nonces,
    durableNonces,
    assets: new TenantAssetRegistry(pool, clock),
    queue: new AcceptanceQueue(pool, buckets),
    admissions: new AcceptanceQueue(noncePool, buckets, 4),
    buckets,
    cursors: new CursorCodec(options.masterKey),
    bus: bus.value,
    engines,
    graph: graph.value,
    consumerGroups: CONSUMER_GROUPS,
    webhooks: {
      endpoints: new WebhookEndpoints(pool, box),
      deliveries: new WebhookDeliveries(pool, { horizonMs: config.SVC_WEBHOOK_RETRY_HORIZON_H * 3_600_000 }),
      destinations: { allowPrivateNetworks: config.SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS, ...(options.resolve ? { resolve: options.resolve } : {}) },
      // Longer than one attempt, so an endpoint that times out is reported (502), not just waited on.
      testWaitMs: Math.max(config.SVC_WEBHOOK_TEST_WAIT_MS, config.SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS + 2000),
    },
    imports: new Imports(pool, { defaultBackfillDays: config.SVC_IMPORT_BACKFILL_DAYS }),
    reconciliations: new Reconciliations(pool),
    settings: {
      maxBodyBytes: config.SVC_MAX_BODY_BYTES,
      occurredAtFutureSkewS: config.SVC_OCCURRED_AT_FUTURE_SKEW_S,
      idempotencyRetentionS: config.SVC_IDEMPOTENCY_RETENTION_H * 3600,
    },
    conformance,
    logger: options.logger ?? { level: config.LOG_LEVEL },
  });
  const tallies = flushTallies(conformance, pool, (error) => app.log.warn({ err: error }, 'conformance tallies not stored'));
  app.addHook('onClose', async () => {
    await Promise.allSettled([tallies.stop(), noncePool.end(), graph.close(), bus.close(), engines.close()]);
  });
  // Housekeeping that runs by itself in every API process: expired nonces and idempotency keys.
  const startMaintenance = () => {
    const timer = setInterval(() => {
      void nonces.sweep().catch((error) => app.log.warn({ err: error }, 'nonce sweep failed'));
      void sweepIdempotencyKeys(pool, clock.now()).catch((error) => app.log.warn({ err: error }, 'idempotency sweep failed'));
    }, SWEEP_EVERY_MS);
    timer.unref();
    return () => clearInterval(timer);
  };
  return { app, startMaintenance };
}

import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../platform/clock.ts';
import type { ConsumerGroupSpec } from '../../pipelines/groups.ts';
import type { ApiKeyStore } from '../../platform/keys/api-keys.ts';
import type { NonceLedger } from '../../platform/keys/nonce-ledger.ts';
import type { Bus } from '../../platform/bus/port.ts';
import type { GraphStore } from '../../platform/graph/port.ts';
import type { AcceptanceQueue } from '../../platform/inbox/acceptance-queue.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { ParkedRecordStore } from '../../platform/bus/parking/store.ts';
import type { TokenBuckets } from '../../platform/rate-limit/token-buckets.ts';
import { registerAuthentication } from './http/authentication.ts';
import { registerContracts } from './http/contracts.ts';
import type { CursorCodec } from '../../platform/http/cursor.ts';
import { createEdgeApp } from '../../platform/http/edge-app.ts';
import './http/fastify-types.ts';
import { registerDocsRoutes } from './routes/docs.ts';
import { registerCanonicalReads } from './routes/canonical-reads.ts';
import { registerComplianceRoutes } from './routes/compliance.ts';
import { registerGraphRoutes } from './routes/graph.ts';
import { registerEventRoutes } from './routes/events.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerImportRoutes, type ImportRouteDeps } from './routes/imports.ts';
import { registerReconciliationRoutes } from './routes/reconciliations.ts';
import type { Reconciliations } from '../reconciliations/reconciliations.ts';
import type { ConformanceTally } from '../conformance/tally.ts';
import { registerIngestRoutes } from './routes/ingest.ts';
import { registerMetricsRoute, type MetricsEngines } from './routes/metrics.ts';
import { registerValidateRoute } from './routes/validate.ts';
import { registerWebhookRoutes, type WebhookRouteDeps } from './routes/webhooks.ts';

export interface ApiDeps {
  pool: Pool;
  clock: Clock;
  keys: ApiKeyStore;
  // Nonce claims of reads: committed without waiting for the WAL flush (decision 0004).
  nonces: NonceLedger;
  // Nonce claims of requests that change state: committed with it, so that no crash of the
  // database lets a captured write (a case action, a secret rotation) be replayed.
  durableNonces: NonceLedger;
  assets: TenantAssetRegistry;
  queue: AcceptanceQueue;
  // Admissions alone (a request admitted before it is validated, and /v1/validate): on the nonce
  // claims' asynchronously committed pool.
  admissions: AcceptanceQueue;
  buckets: TokenBuckets;
  cursors: CursorCodec;
  // Read for consumer lag only.
  bus: Bus;
  // Probed at each scrape of /metrics (svc_engine_up).
  engines: MetricsEngines;
  graph: GraphStore;
  consumerGroups: ConsumerGroupSpec[];
  webhooks: Omit<WebhookRouteDeps, 'clock' | 'cursors'>;
  imports: ImportRouteDeps['imports'];
  reconciliations: Reconciliations;
  settings: { maxBodyBytes: number; occurredAtFutureSkewS: number; idempotencyRetentionS: number };
  // Items answered on the ingest routes, counted for conformance drift (decision 0077).
  conformance: ConformanceTally;
  logger: FastifyServerOptions['logger'];
}

const CORRELATION_HEADER = 'svc-correlation-id';
const CORRELATION_ID = /^[\x21-\x7e]{1,128}$/;

export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  const app = createEdgeApp({
    logger: deps.logger,
    bodyLimit: deps.settings.maxBodyBytes,
    // The caller's correlation id (when well-formed) is the request id, so it is on every log line.
    requestId: (req) => {
      const given = req.headers[CORRELATION_HEADER];
      return typeof given === 'string' && CORRELATION_ID.test(given) ? given : randomUUID();
    },
  });
  // Bodies stay the raw bytes (createEdgeApp): the signature covers them, and they are parsed only
  // after the request is authenticated.
  registerAuthentication(app, deps);
  // Each route's declared zod contract validates its parameters (answered after authentication)
  // and generates the OpenAPI document, which collects the routes registered after it.
  registerContracts(app);
  await registerDocsRoutes(app);
  registerHealthRoutes(app, deps);
  registerMetricsRoute(app, { bus: deps.bus, groups: deps.consumerGroups, parked: new ParkedRecordStore(deps.pool), engines: deps.engines });
  registerValidateRoute(app, {
    clock: deps.clock,
    assets: deps.assets,
    buckets: deps.buckets,
    admissions: deps.admissions,
    nonces: deps.nonces,
    occurredAtFutureSkewS: deps.settings.occurredAtFutureSkewS,
  });
  registerIngestRoutes(app, {
    pool: deps.pool,
    clock: deps.clock,
    queue: deps.queue,
    admissions: deps.admissions,
    nonces: deps.nonces,
    buckets: deps.buckets,
    assets: deps.assets,
    occurredAtFutureSkewS: deps.settings.occurredAtFutureSkewS,
    idempotencyRetentionS: deps.settings.idempotencyRetentionS,
    conformance: deps.conformance,
  });
  registerEventRoutes(app, { pool: deps.pool, buckets: deps.buckets });
  registerCanonicalReads(app, { pool: deps.pool, clock: deps.clock, cursors: deps.cursors });
  registerGraphRoutes(app, { pool: deps.pool, graph: deps.graph, assets: deps.assets });
  registerComplianceRoutes(app, { pool: deps.pool, clock: deps.clock, cursors: deps.cursors });
  registerWebhookRoutes(app, { ...deps.webhooks, clock: deps.clock, cursors: deps.cursors });
  registerReconciliationRoutes(app, { clock: deps.clock, cursors: deps.cursors, assets: deps.assets, reconciliations: deps.reconciliations });
  registerImportRoutes(app, {
    pool: deps.pool,
    clock: deps.clock,
    assets: deps.assets,
    cursors: deps.cursors,
    imports: deps.imports,
    occurredAtFutureSkewS: deps.settings.occurredAtFutureSkewS,
  });
  return app;
}

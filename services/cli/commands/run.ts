import { PostgresLogBus } from '../../../platform/bus/postgres-log.ts';
import { systemClock } from '../../../platform/clock.ts';
import { createPool, type Pool } from '../../../platform/postgres/pool.ts';
import { PostgresAggregateStore } from '../../../platform/aggregates/postgres.ts';
import { PostgresGraphStore } from '../../../platform/graph/postgres/store.ts';
import { startAggregatesPipeline } from '../../../pipelines/aggregates/pipeline.ts';
import { startCanonicalPipeline } from '../../../pipelines/canonical/pipeline.ts';
import { startDetectPipeline } from '../../../pipelines/detect/pipeline.ts';
import { startGraphPipeline } from '../../../pipelines/graph/pipeline.ts';
import { createApi } from '../../api/wiring.ts';
import { createDeliveryWorker } from '../../webhooks/wiring.ts';
import { ImportWorker } from '../../../pipelines/imports/worker.ts';
import { startReconcilePipeline } from '../../../pipelines/reconcile/pipeline.ts';
import { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import { openContext, UsageError } from '../context.ts';

export const PIPELINES = ['canonical', 'graph', 'aggregates', 'detect', 'imports', 'reconcile'] as const;
export type Pipeline = (typeof PIPELINES)[number];
export type ProcessPart = 'api' | 'webhooks' | `pipeline:${Pipeline}`;
export const ALL_PARTS: ProcessPart[] = ['api', ...PIPELINES.map((p): ProcessPart => `pipeline:${p}`), 'webhooks'];

// Pipelines read through a pool of their own so a burst of ingest cannot starve them.
const PIPELINE_POOL_SIZE = 6;
// The delivery worker writes outcomes in batches and claims in one statement: a few connections.
const WEBHOOK_POOL_SIZE = 4;

// Runs the given parts of the service in this process until SIGINT or SIGTERM; `svc up` runs
// them all. On the way out the embedded database is stopped only if this process started it.
export async function runParts(parts: ProcessPart[]): Promise<void> {
  if (parts.length === 0) throw new UsageError('nothing to run');
  const { config, db, masterKey } = await openContext();
  const stops: Array<() => Promise<void>> = [];
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const logError = (error: unknown) => process.stderr.write(`svc: ${(error as Error).stack ?? String(error)}\n`);

  // Each pipeline reads through a pool and a bus of its own.
  const starters: Record<Pipeline, (pool: Pool, bus: PostgresLogBus) => Promise<{ stop: () => Promise<void> }>> = {
    canonical: (pool, bus) => startCanonicalPipeline({ pool, bus, clock: systemClock, masterKey, onError: logError }),
    graph: (pool, bus) => startGraphPipeline({ bus, store: new PostgresGraphStore(pool) }),
    aggregates: (pool, bus) => startAggregatesPipeline({ bus, store: new PostgresAggregateStore(pool) }),
    detect: (pool, bus) =>
      startDetectPipeline({
        bus,
        pool,
        graph: new PostgresGraphStore(pool),
        aggregates: new PostgresAggregateStore(pool),
        clock: systemClock,
        silence: { movement: config.SVC_COVERAGE_MOVEMENT_SILENCE_MIN, control_event: config.SVC_COVERAGE_CONTROL_EVENT_SILENCE_MIN },
        onError: logError,
      }),
    reconcile: (pool, bus) => startReconcilePipeline({ bus, pool, clock: systemClock, onError: logError }),
    imports: async (pool) => {
      const worker = new ImportWorker({
        pool,
        clock: systemClock,
        assets: new TenantAssetRegistry(pool),
        futureSkewMs: config.SVC_OCCURRED_AT_FUTURE_SKEW_S * 1000,
        onError: logError,
      });
      worker.start();
      return { stop: () => worker.stop() };
    },
  };
  for (const name of PIPELINES) {
    if (!parts.includes(`pipeline:${name}`)) continue;
    const pool = createPool(db.url, PIPELINE_POOL_SIZE, { customPlans: true });
    const pipeline = await starters[name](pool, new PostgresLogBus(pool, { onError: logError }));
    stops.push(async () => {
      await pipeline.stop();
      await pool.end();
    });
    log(`${name} pipeline running`);
  }

  if (parts.includes('webhooks')) {
    const pool = createPool(db.url, WEBHOOK_POOL_SIZE, { customPlans: true });
    const { worker, stop } = await createDeliveryWorker({ config, pool, masterKey, clock: systemClock, onError: logError });
    worker.start();
    stops.push(async () => {
      await stop();
      await pool.end();
    });
    log('webhook delivery worker running');
  }

  if (parts.includes('api')) {
    const { app, startMaintenance } = await createApi({ config, pool: db.pool, databaseUrl: db.url, masterKey, clock: systemClock });
    const stopMaintenance = startMaintenance();
    await app.listen({ host: config.HOST, port: config.PORT });
    stops.unshift(async () => {
      stopMaintenance();
      await app.close();
    });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
    log(`svc is up at http://${host}:${port} (database: ${db.mode}; docs at /docs)`);
  }

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const part of stops) await part().catch(logError);
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

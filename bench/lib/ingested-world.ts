// A data set taken in by a fresh service through the public API (API, canonical, graph and
// aggregates pipelines on its own embedded PostgreSQL; no detection pipeline: the learned model is
// judged by replay), and the stores detection reads it from. The AMLSim and Berka worlds
// (amlsim-world.ts, berka-world.ts) are this with their own events.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { PostgresAggregateStore } from '../../platform/aggregates/postgres.ts';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { PostgresGraphStore } from '../../platform/graph/postgres/store.ts';
import type { DetectionStores } from '../../services/detection/framework/context.ts';
import { AGGREGATES, CANONICAL, GRAPH } from '../../pipelines/groups.ts';
import { batchesOf, ingestBatches, startPipeline } from './batches.ts';
import { startService, type BenchService } from './bench-service.ts';
import { embeddedConnection, stopLeftoverPostgres } from './embedded-pg.ts';
import type { Log, Teardown } from './teardown.ts';

const DRAIN_TIMEOUT_MS = 3_600_000;
const BATCH = 250;

export interface IngestedWorld {
  service: BenchService;
  pool: pg.Pool;
  stores: DetectionStores;
}

async function drained(bus: PostgresLogBus, log: Log): Promise<void> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  let lastLog = performance.now();
  for (;;) {
    let behind = 0;
    for (const spec of [CANONICAL, GRAPH, AGGREGATES]) behind += (await bus.lag(spec.group, spec.topics, { upTo: 1 })).reduce((sum, p) => sum + p.records, 0);
    if (behind === 0) return;
    if (performance.now() > deadline) throw new Error('pipelines still behind');
    if (performance.now() - lastLog > 30_000) {
      log('waiting for the pipelines');
      lastLog = performance.now();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

// entities: party and account items, taken in first; movements: movement items, in time order.
export async function startIngestedWorld(teardown: Teardown, log: Log, name: string, entities: string[], movements: string[]): Promise<IngestedWorld> {
  const service = await startService(teardown, log, { name: `api-${name}` });
  // The teardown removes only the latest data directory; an earlier world's is removed here.
  const dataDir = service.dataDir;
  teardown.closers.push(async () => {
    await stopLeftoverPostgres(join(dataDir, 'pg'), log);
    await rm(dataDir, { recursive: true, force: true });
  });
  const pool = new pg.Pool({ ...(await embeddedConnection(service.dataDir)), max: 10 });
  // The service stops its database at teardown, under this pool's idle connections.
  pool.on('error', () => {});
  teardown.closers.push(() => pool.end());
  for (const pipeline of ['canonical', 'graph', 'aggregates'] as const) await startPipeline(teardown, service, pipeline, `${pipeline}-${name}`);
  const bus = new PostgresLogBus(pool);
  const t0 = performance.now();
  // Small batches on two connections: on a shared machine a large batch can outlast the load
  // library's per-request timeout. Throughput is not what these runs measure.
  await ingestBatches(service, 2, batchesOf(entities, BATCH));
  await drained(bus, log);
  await ingestBatches(service, 2, batchesOf(movements, BATCH));
  await drained(bus, log);
  log(`${name}: ${entities.length} entities and ${movements.length} movements taken in in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const stores: DetectionStores = { pool, graph: new PostgresGraphStore(pool), aggregates: new PostgresAggregateStore(pool) };
  return { service, pool, stores };
}

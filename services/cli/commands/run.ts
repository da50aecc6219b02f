import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bus, ConsumeOptions } from '../../../platform/bus/port.ts';
import { isTransient } from '../../../platform/bus/parking/transient.ts';
import { PARTITIONS, PostgresLogBus } from '../../../platform/bus/postgres-log.ts';
import { systemClock } from '../../../platform/clock.ts';
import { startHeartbeat } from '../heartbeat/heartbeat.ts';
import { ConfigError, loadConfig, type Config } from '../../../platform/config.ts';
import { describeFailure } from '../../../platform/failure-description.ts';
import { createPool, type Pool } from '../../../platform/postgres/pool.ts';
import { openAggregateStore, openBus, openDetectionStores, openGraphStore, type EngineSettings, type Opened } from '../../../platform/engines.ts';
import { CONSUMER_GROUPS } from '../../../pipelines/groups.ts';
import { parsePipelinesManifest, type PipelinesManifest, type Processor } from '../../../schemas/infra/pipelines.ts';
import { openContext, UsageError } from '../context.ts';

export const PIPELINES = ['canonical', 'graph', 'aggregates', 'detect', 'imports', 'reconcile'] as const;
export type Pipeline = (typeof PIPELINES)[number];
// The API and the analysts' console serve HTTP and read no bus: they are not processors of the
// pipeline manifest.
export type ProcessPart = 'api' | 'console' | 'webhooks' | `pipeline:${Pipeline}`;
export const ALL_PARTS: ProcessPart[] = ['api', 'console', ...PIPELINES.map((p): ProcessPart => `pipeline:${p}`), 'webhooks'];

// Every processor of the pipeline manifest (infra/pipelines.yaml): the pipelines and the webhook
// delivery worker, by the name `svc run` takes.
export const PROCESSORS = [...PIPELINES, 'webhooks'] as const;
export type ProcessorName = (typeof PROCESSORS)[number];

// The arguments of `svc` that start one processor alone.
export function processorCommand(name: ProcessorName): string[] {
  return name === 'webhooks' ? ['run', 'webhooks'] : ['run', 'pipeline', name];
}

export const DEFAULT_PIPELINES_MANIFEST = fileURLToPath(new URL('../../../infra/pipelines.yaml', import.meta.url));

// Pipelines read through a pool of their own so a burst of ingest cannot starve them: one
// connection per batch in flight (the manifest's parallelism), one for the partition leases
// and one for everything else (heartbeats, offsets, sweeps).
const PIPELINE_POOL_SIZE = 6;
// On Kafka a pipeline process also runs the relay: two outbox streams, each a lease connection and
// up to four batches in flight (the embedded log's default concurrency).
const RELAY_CONNECTIONS = 2 * (1 + 4);
const poolSizeFor = (processor: Processor | undefined, bus: Config['SVC_BUS']) =>
  Math.max(PIPELINE_POOL_SIZE, processor?.kind === 'consumer' ? processor.parallelism + 2 : 0) +
  (bus === 'kafka' && processor?.kind === 'consumer' ? RELAY_CONNECTIONS : 0);
// The delivery worker writes outcomes in batches and claims in one statement: a few connections.
const WEBHOOK_POOL_SIZE = 4;

// Reads and validates the pipeline manifest; every problem stops start-up, named with the file.
async function loadPipelinesManifest(path: string): Promise<PipelinesManifest> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`SVC_PIPELINES_MANIFEST: cannot read the pipeline manifest ${path}: ${(error as Error).message}`);
  }
  const parsed = parsePipelinesManifest(text);
  const problems = parsed.ok ? checkManifestAgainstCode(parsed.value) : parsed.problems;
  if (!parsed.ok || problems.length > 0) {
    throw new ConfigError(`invalid pipeline manifest ${path} (SVC_PIPELINES_MANIFEST)\n  ${problems.join('\n  ')}`);
  }
  return parsed.value;
}

// The manifest against the code, before anything starts: the same processors, and the same
// consumer groups reading the same topics as pipelines/groups.ts (which status and metrics report
// on). What each pipeline actually consumes, `after` included, is checked again as it starts
// (manifestBus below).
export function checkManifestAgainstCode(manifest: PipelinesManifest): string[] {
  const problems: string[] = [];
  const declared = Object.keys(manifest.processors);
  for (const name of PROCESSORS) if (!declared.includes(name)) problems.push(`processors.${name}: missing (svc run ${processorCommand(name).slice(1).join(' ')} exists)`);
  for (const name of declared) if (!(PROCESSORS as readonly string[]).includes(name)) problems.push(`processors.${name}: svc run has no such processor (${PROCESSORS.join(', ')})`);
  const consumers = Object.entries(manifest.processors).flatMap(([name, p]) => (p.kind === 'consumer' ? [{ name, ...p }] : []));
  for (const spec of CONSUMER_GROUPS) {
    const consumer = consumers.find((c) => c.group === spec.group);
    if (!consumer) {
      problems.push(`consumer group ${spec.group}: no processor declares it (its topics: ${spec.topics.join(', ')})`);
      continue;
    }
    const missing = spec.topics.filter((t) => !consumer.topics.includes(t));
    const extra = consumer.topics.filter((t) => !spec.topics.includes(t));
    if (missing.length > 0) problems.push(`processors.${consumer.name}.topics: group ${spec.group} also reads ${missing.join(', ')}`);
    if (extra.length > 0) problems.push(`processors.${consumer.name}.topics: group ${spec.group} does not read ${extra.join(', ')}`);
  }
  for (const consumer of consumers) {
    if (!CONSUMER_GROUPS.some((spec) => spec.group === consumer.group)) {
      problems.push(`processors.${consumer.name}.group: the code has no consumer group ${consumer.group} (${CONSUMER_GROUPS.map((g) => g.group).join(', ')})`);
    }
    if (consumer.parallelism > PARTITIONS) {
      problems.push(`processors.${consumer.name}.parallelism: ${consumer.parallelism} exceeds the log's ${PARTITIONS} partitions`);
    }
  }
  return problems;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

// The bus as one processor sees it: its consumer must be exactly the one the manifest declares
// (group, topics, upstream groups), and takes the manifest's parallelism and batch size.
export function manifestBus(inner: Bus, name: string, processor: Processor, onConsume: () => void = () => {}): Bus {
  return {
    consume: async (options: ConsumeOptions) => {
      const where = `pipeline manifest, processors.${name}`;
      if (processor.kind !== 'consumer') throw new ConfigError(`${where}: declared a worker, but it consumes group ${options.group} from the bus`);
      const after = options.after ?? [];
      const problems = [
        options.group !== processor.group && `group: declared ${processor.group}, the pipeline consumes as ${options.group}`,
        !sameSet(options.topics, processor.topics) && `topics: declared ${processor.topics.join(', ')}; the pipeline reads ${options.topics.join(', ')}`,
        !sameSet(after, processor.after) && `after: declared [${processor.after.join(', ')}]; the pipeline waits for [${after.join(', ')}]`,
      ].filter((p): p is string => typeof p === 'string');
      if (problems.length > 0) throw new ConfigError(`${where} disagrees with the code\n  ${problems.join('\n  ')}`);
      onConsume();
      return inner.consume({ ...options, concurrency: processor.parallelism, ...(processor.max_batch ? { maxBatch: processor.max_batch } : {}) });
    },
    lag: (group, topics, options) => inner.lag(group, topics, options),
    members: (group) => inner.members(group),
  };
}

type Starter = (pool: Pool, bus: Bus) => Promise<{ stop: () => Promise<void> }>;

// A pipeline that reads or writes a store: the store is opened for it (on the engine the config
// names) and closed after it stops.
async function withStore<S>(open: Promise<Opened<S>>, start: (store: S) => Promise<{ stop: () => Promise<void> }>) {
  const store = await open;
  const pipeline = await start(store.value).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  return {
    stop: async () => {
      await pipeline.stop();
      await store.close();
    },
  };
}

// How each pipeline starts, given its pool and bus. Each part's code is imported when it starts,
// so a process holds in memory only the parts it runs (the API's and the detectors' modules
// were a large share of a lone canonical pipeline's RSS; see docs/benchmarks.md).
export function pipelineStarters(options: {
  config: Pick<Config, 'SVC_COVERAGE_MOVEMENT_SILENCE_MIN' | 'SVC_COVERAGE_CONTROL_EVENT_SILENCE_MIN' | 'SVC_OCCURRED_AT_FUTURE_SKEW_S' | 'SVC_DETECT_CACHED_ROWS'> & EngineSettings;
  masterKey: Buffer;
  onError: (error: unknown) => void;
}): Record<Pipeline, Starter> {
  const { config, masterKey, onError } = options;
  return {
    canonical: async (pool, bus) => {
      const { startCanonicalPipeline } = await import('../../../pipelines/canonical/pipeline.ts');
      return startCanonicalPipeline({ pool, bus, clock: systemClock, masterKey, onError });
    },
    graph: async (pool, bus) => {
      const { startGraphPipeline } = await import('../../../pipelines/graph/pipeline.ts');
      return withStore(openGraphStore(config, pool), (store) => startGraphPipeline({ bus, store, pool, clock: systemClock }));
    },
    aggregates: async (pool, bus) => {
      const { startAggregatesPipeline } = await import('../../../pipelines/aggregates/pipeline.ts');
      return withStore(openAggregateStore(config, pool), (store) => startAggregatesPipeline({ bus, store, pool, clock: systemClock }));
    },
    detect: async (pool, bus) => {
      const { startDetectPipeline } = await import('../../../pipelines/detect/pipeline.ts');
      return withStore(openDetectionStores(config, pool), (stores) =>
        startDetectPipeline({
          bus,
          pool,
          ...stores,
          clock: systemClock,
          silence: { movement: config.SVC_COVERAGE_MOVEMENT_SILENCE_MIN, control_event: config.SVC_COVERAGE_CONTROL_EVENT_SILENCE_MIN },
          cachedRows: config.SVC_DETECT_CACHED_ROWS,
          onError,
        }),
      );
    },
    reconcile: async (pool, bus) => {
      const { startReconcilePipeline } = await import('../../../pipelines/reconcile/pipeline.ts');
      return startReconcilePipeline({ bus, pool, clock: systemClock, onError });
    },
    imports: async (pool) => {
      const [{ ImportWorker }, { TenantAssetRegistry }] = await Promise.all([
        import('../../../pipelines/imports/worker.ts'),
        import('../../../platform/assets/tenant-registry.ts'),
      ]);
      const worker = new ImportWorker({
        pool,
        clock: systemClock,
        assets: new TenantAssetRegistry(pool, systemClock),
        futureSkewMs: config.SVC_OCCURRED_AT_FUTURE_SKEW_S * 1000,
        onError,
      });
      worker.start();
      return { stop: () => worker.stop() };
    },
  };
}

// Runs the given parts of the service in this process until SIGINT or SIGTERM; `svc up` runs
// them all. On the way out the embedded database is stopped only if this process started it (at
// start, or again after it died: openContext watches it).
export async function runParts(parts: ProcessPart[]): Promise<void> {
  if (parts.length === 0) throw new UsageError('nothing to run');
  // The manifest first: a bad one stops start-up before any database is started.
  const processors = parts.flatMap((part): ProcessorName[] => (part === 'api' || part === 'console' ? [] : [part === 'webhooks' ? 'webhooks' : part.slice('pipeline:'.length) as Pipeline]));
  const manifest =
    processors.length > 0 ? await loadPipelinesManifest(resolve(loadConfig().SVC_PIPELINES_MANIFEST ?? DEFAULT_PIPELINES_MANIFEST)) : undefined;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const logStack = (error: unknown) => process.stderr.write(`svc: ${(error as Error).stack ?? String(error)}\n`);
  // A transient failure (an engine away: retried until it is back) in one line: during an outage
  // every worker reports each attempt, and a stack trace per attempt buried what the operator
  // needs, which engine and why.
  const logError = (error: unknown) => (isTransient(error) ? process.stderr.write(`svc: transient failure, retried: ${describeFailure(error)}\n`) : logStack(error));
  const { config, db, masterKey } = await openContext({
    watch: {
      onRestarted: () => process.stderr.write('svc: the embedded PostgreSQL server had stopped; started it again on its port and data\n'),
      onError: (error) => process.stderr.write(`svc: the embedded PostgreSQL server has stopped and did not start again (tried again shortly): ${describeFailure(error)}\n`),
    },
  });
  const stops: Array<() => Promise<void>> = [];
  let stopHeartbeat: () => Promise<void> = async () => undefined;
  // A bus consumer that cannot go on ends the process (exit 1): its supervisor restarts it, and
  // at-least-once delivery makes the restart safe; running on without the consumer would not be.
  const endOnFatal = (error: unknown) => {
    logStack(error);
    process.stderr.write('svc: a bus consumer stopped for good; exiting so that the process is restarted\n');
    process.exit(1);
  };

  try {
    // Each pipeline reads through a pool and a bus of its own.
    const starters = pipelineStarters({ config, masterKey, onError: logError });
    for (const name of PIPELINES) {
      if (!parts.includes(`pipeline:${name}`)) continue;
      const processor = manifest!.processors[name]!;
      const pool = createPool(db.url, poolSizeFor(processor, config.SVC_BUS), { customPlans: true });
      let consumed = false;
      // Only consumers open the bus (on Kafka, with a relay feeding it from the outbox).
      const opened = processor.kind === 'consumer' ? await openBus(config, pool, { relay: true, onError: logError, onFatal: endOnFatal }).catch(async (error: unknown) => {
        await pool.end();
        throw error;
      }) : undefined;
      const bus = manifestBus(opened?.value ?? new PostgresLogBus(pool, { onError: logError }), name, processor, () => (consumed = true));
      const pipeline = await starters[name](pool, bus).catch(async (error: unknown) => {
        await opened?.close();
        await pool.end();
        throw error;
      });
      stops.push(async () => {
        await pipeline.stop();
        await opened?.close();
        await pool.end();
      });
      if (processor.kind === 'consumer' && !consumed) {
        throw new ConfigError(`pipeline manifest, processors.${name}: declared a consumer of group ${processor.group}, but the pipeline consumes nothing from the bus`);
      }
      log(`${name} pipeline running${processor.kind === 'consumer' ? ` (group ${processor.group}, parallelism ${processor.parallelism})` : ''}`);
    }

    if (parts.includes('webhooks')) {
      const { createDeliveryWorker } = await import('../../webhooks/wiring.ts');
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
      const { createApi } = await import('../../api/wiring.ts');
      // One heap per process: where detection runs too, its own (lower) limit stands.
      if (!parts.includes('pipeline:detect')) (await import('../../api/node-options.ts')).limitApiHeapGrowth();
      const { app, startMaintenance } = await createApi({ config, pool: db.pool, databaseUrl: db.url, masterKey, clock: systemClock });
      const stopMaintenance = startMaintenance();
      stops.unshift(async () => {
        stopMaintenance();
        await app.close();
      });
      await app.listen({ host: config.HOST, port: config.PORT });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : config.PORT;
      const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
      log(`svc is up at http://${host}:${port} (database: ${db.mode}; docs at /docs)`);
    }

    if (parts.includes('console')) {
      const { createConsole } = await import('../../console/wiring.ts');
      const { app } = await createConsole({ config, pool: db.pool, masterKey, clock: systemClock });
      stops.unshift(() => app.close());
      await app.listen({ host: config.HOST, port: config.SVC_CONSOLE_PORT });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : config.SVC_CONSOLE_PORT;
      const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
      log(`console is up at http://${host}:${port}/console/v1 (database: ${db.mode})`);
    }
    // A worker's liveness probe reads it (`svc alive`): the process is alive while its loop turns.
    // Last, so that a path it cannot write stops what started, as any failed start does.
    if (config.SVC_HEARTBEAT_FILE) stopHeartbeat = await startHeartbeat(config.SVC_HEARTBEAT_FILE, logError);
  } catch (error) {
    // What started stops again, and the embedded database with it, before the error is reported.
    for (const part of stops) await part().catch(logError);
    await db.close().catch(logError);
    throw error;
  }

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stopHeartbeat();
    for (const part of stops) await part().catch(logError);
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

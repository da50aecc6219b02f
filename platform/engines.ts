// Which engine answers each port, from the config: PostgreSQL by default, or Kafka (the bus),
// Neo4j (the graph) and ClickHouse (the aggregates) for scale-out. Every process opens what it
// uses through here, so `svc run`, the API, `svc status` and backtests agree. The scale-out
// engines' adapters are imported only when configured: their drivers (kafkajs, avsc and the schema
// registry, neo4j-driver, @clickhouse/client) are tens of MB of every process's memory otherwise.
// A scale-out engine a process needs is probed before it is opened (engine-probes.ts): one that
// does not answer stops the start with a message naming its variable, at once, instead of a
// driver's error a minute later (neo4j-driver retries a migration's transactions for 30 s each).
import type { AggregateStore } from './aggregates/port.ts';
import { PostgresAggregateStore } from './aggregates/postgres.ts';
import type { Bus } from './bus/port.ts';
import { PostgresLogBus } from './bus/postgres-log.ts';
import type { Config } from './config.ts';
import type { GraphStore } from './graph/port.ts';
import { openReadPool } from './graph/postgres/budget.ts';
import { PostgresGraphStore } from './graph/postgres/store.ts';
import { DEFAULT_READ_BUDGET_MS } from './graph/shared/store.ts';
import { openProbe, requireReachable } from './engine-probes.ts';
import type { Pool } from './postgres/pool.ts';

export type EngineSettings = Pick<
  Config,
  | 'SVC_BUS' | 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID' | 'KAFKA_IDEMPOTENT_PRODUCER' | 'SCHEMA_REGISTRY_URL'
  | 'SVC_GRAPH_STORE' | 'NEO4J_URI' | 'NEO4J_USER' | 'NEO4J_PASSWORD' | 'NEO4J_DATABASE'
  | 'SVC_AGGREGATE_STORE' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_USER' | 'CLICKHOUSE_PASSWORD' | 'CLICKHOUSE_DATABASE'
>;

export interface Opened<T> {
  value: T;
  close: () => Promise<void>;
}

const nothingToClose = async () => {};

// Graph reads on PostgreSQL run on a pool of their own, at most this many at once per process:
// its connections carry the read budget, so a read of one statement is one round trip
// (graph/postgres/budget.ts). Connections are opened as reads need them.
const GRAPH_READ_CONNECTIONS = 8;

// The graph store; on Neo4j its constraints and indexes are applied first (idempotent).
export async function openGraphStore(settings: EngineSettings, pool: Pool): Promise<Opened<GraphStore>> {
  if (settings.SVC_GRAPH_STORE === 'postgres') {
    // A pool not opened from a connection string (none of the service's) reads through itself.
    const url = pool.options?.connectionString;
    if (!url) return { value: new PostgresGraphStore(pool), close: nothingToClose };
    const reads = openReadPool(url, GRAPH_READ_CONNECTIONS, DEFAULT_READ_BUDGET_MS);
    return { value: new PostgresGraphStore(pool, { readPool: reads }), close: () => reads.pool.end() };
  }
  await requireReachable(() => openProbe(settings, 'neo4j'));
  const { Neo4jGraphStore } = await import('./graph/neo4j/store.ts');
  const store = Neo4jGraphStore.connect({ uri: settings.NEO4J_URI!, user: settings.NEO4J_USER, password: settings.NEO4J_PASSWORD, database: settings.NEO4J_DATABASE });
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return { value: store, close: () => store.close() };
}

// The aggregate store; on ClickHouse its DDL (infra/clickhouse) is applied first.
export async function openAggregateStore(settings: EngineSettings, pool: Pool): Promise<Opened<AggregateStore>> {
  if (settings.SVC_AGGREGATE_STORE === 'postgres') return { value: new PostgresAggregateStore(pool), close: nothingToClose };
  await requireReachable(() => openProbe(settings, 'clickhouse'));
  const { openClickHouseAggregateStore } = await import('./aggregates/clickhouse.ts');
  const { store, close } = await openClickHouseAggregateStore(settings);
  return { value: store, close };
}

/**
 * The bus. On Kafka, `relay: true` also runs the relay that moves outbox rows to the topics: every
 * pipeline process runs one (the outbox partitions are leased, so relays share the work), while
 * readers of lag only (the API's metrics, `svc status`) run none.
 */
export async function openBus(
  settings: EngineSettings,
  pool: Pool,
  options: { relay: boolean; onError?: (error: unknown) => void; onFatal?: (error: unknown) => void },
): Promise<Opened<Bus>> {
  if (settings.SVC_BUS === 'postgres') return { value: new PostgresLogBus(pool, (options.onError ? { onError: options.onError } : {})), close: nothingToClose };
  // A writer (the relay) needs the registry and the brokers now; a reader of lag only does not
  // (the API and `svc status` report Kafka down rather than refuse to start).
  if (options.relay) {
    await requireReachable(() => openProbe(settings, 'schema-registry'));
    await requireReachable(() => openProbe(settings, 'kafka'));
  }
  const { createKafkaBus } = await import('./bus/kafka/index.ts');
  const kafka = createKafkaBus(settings, pool, {
    relay: options.relay,
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.onFatal ? { onFatal: options.onFatal } : {}),
  });
  try {
    await kafka.start();
  } catch (error) {
    await kafka.stop().catch(() => {});
    throw error;
  }
  return { value: kafka.bus, close: () => kafka.stop() };
}

// The stores detection and backtests read, opened together.
export async function openDetectionStores(settings: EngineSettings, pool: Pool): Promise<Opened<{ graph: GraphStore; aggregates: AggregateStore }>> {
  const graph = await openGraphStore(settings, pool);
  const aggregates = await openAggregateStore(settings, pool).catch(async (error: unknown) => {
    await graph.close();
    throw error;
  });
  return {
    value: { graph: graph.value, aggregates: aggregates.value },
    close: async () => {
      await Promise.allSettled([graph.close(), aggregates.close()]);
    },
  };
}

// bench/engines/kafka: relay throughput from the outbox to Kafka, against the embedded log's own
// consume throughput on the same rows.
//
//   Setup: a fresh embedded PostgreSQL (migrated), tenant "acme", `events` movement events (quick:
//   5 000, else 50 000) accepted through acceptEvents in batches of 1 000, exactly as the API
//   writes them (inbox rows with the raw JSON, outbox rows on inbox.movement). Kafka: KAFKA_BROKERS
//   (options.brokers), else Kafka 3.9 (KRaft, one node) started here by platform/local-engines;
//   the registry: SCHEMA_REGISTRY_URL (options.registryUrl), else Apicurio's Confluent API started
//   the same way.
//   (1) Embedded log: a fresh group of PostgresLogBus with a handler that does nothing reads every
//       row: events / (consume() to the group's lag being 0, polled every 20 ms).
//   (2) Relay: the value schemas are registered first (not timed); then KafkaRelay starts and
//       moves every row (Avro-encoded, keyed, acks=all): events / (start to its backlog being 0).
//       Cross-check: the Kafka topic's end offsets add up to the events.
//   (3) Kafka consume (for the record): a KafkaBus group with a handler that does nothing, from
//       its first delivery to its lag being 0 (the group join is left out).
//   Memory: the peak resident memory of each engine started here (bench/lib/engine-memory.ts), from
//   its start to the end of (3); none for engines given by address.
//   Both sides run in this one process, on the same machine as the broker, which writes its log
//   to disk (acks=all on one node): (2) measures the relay and one broker's append path.
//
// benchRelay() returns the figures; bench/engines.ts prints them.

import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { startKafkaHarness } from '../../platform/bus/kafka/testing.ts';
import { acceptEvents, type PreparedEvent } from '../../platform/inbox/accept-events.ts';
import { startEmbeddedPostgres } from '../../platform/postgres/embedded.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { createPool } from '../../platform/postgres/pool.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { movementEvent } from '../../test/fixtures/events.ts';
import { startLocalEngines } from '../../platform/local-engines/index.ts';
import { KAFKA } from '../../platform/local-engines/versions.ts';
import { watchEngineMemory, type EngineMemory } from '../lib/engine-memory.ts';

export interface RelayBenchOptions {
  quick?: boolean;
  // Events to relay (default: 5 000 quick, 50 000 otherwise).
  events?: number;
  // A broker list; else a local Kafka started for the bench.
  brokers?: string;
  // A Confluent-compatible registry; else a local Apicurio started for the bench.
  registryUrl?: string;
  log?: (line: string) => void;
}

interface Throughput {
  seconds: number;
  eventsPerSecond: number;
}

export interface RelayBenchResult {
  events: number;
  embeddedConsume: Throughput;
  relayToKafka: Throughput;
  kafkaConsume: Throughput;
  // relay events/s ÷ embedded consume events/s.
  ratio: number;
  broker: string;
  registry: string;
  kafkaPartitions: number;
  relayedOffsets: number;
  // The engines started for the run (none when both were given by address).
  engines: EngineMemory[];
}

const BATCH = 1_000;
const TOPIC = 'inbox.movement';

export async function benchRelay(options: RelayBenchOptions = {}): Promise<RelayBenchResult> {
  const events = options.events ?? (options.quick ? 5_000 : 50_000);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-kafka-'));
    await chmod(dataDir, 0o755);
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const server = await startEmbeddedPostgres({ dataDir, port: 0 });
    cleanup.push(() => server.stop());
    const pool = createPool(server.url(), 12);
    cleanup.push(() => pool.end());
    await migrate(pool);
    await createTenant(pool, 'acme', 'USD');

    // What is not given is started here, its data in the bench's directory, tied to this process.
    const wanted = [...(options.brokers ? [] : ['kafka' as const]), ...(options.registryUrl ? [] : ['schema-registry' as const])];
    const local = wanted.length > 0 ? await startLocalEngines({ dataDir: join(dataDir, 'local'), engines: wanted, detached: false, log }) : undefined;
    if (local) cleanup.push(() => local.stop({ graceMs: 5_000 }));
    const memory = watchEngineMemory(local?.engines ?? []);
    // Before the engines stop (cleanup runs newest first), also when the bench fails.
    cleanup.push(async () => memory.stop());
    const brokers = options.brokers ?? local!.env.KAFKA_BROKERS!;
    const registryUrl = options.registryUrl ?? local!.env.SCHEMA_REGISTRY_URL!;
    const broker = options.brokers ? `KAFKA_BROKERS=${brokers}` : `Apache Kafka ${KAFKA.version}, KRaft, 1 node (platform/local-engines)`;

    log(`writing ${events} movement events to the outbox`);
    const receivedAt = new Date();
    for (let i = 0; i < events; i += BATCH) {
      const batch: PreparedEvent[] = [];
      for (let j = i; j < Math.min(events, i + BATCH); j++) {
        const raw = Buffer.from(JSON.stringify(movementEvent(`mv-${j}`)), 'utf8');
        batch.push({
          tenantId: 'acme',
          eventId: randomUUID(),
          object: 'movement',
          externalId: `mv-${j}`,
          sequence: null,
          rawEvent: raw,
          contentHash: createHash('sha256').update(raw).digest(),
          occurredAt: new Date('2026-09-01T11:59:00Z'),
          receivedAt,
          correlationId: null,
          importId: null,
          historical: false,
        });
      }
      await acceptEvents(pool, batch);
    }
    await pool.query('ANALYZE outbox; ANALYZE inbox_events');

    log('(1) the embedded log');
    const embedded = new PostgresLogBus(pool);
    const started1 = performance.now();
    const reader = await embedded.consume({ group: 'bench-embedded', topics: [TOPIC], handle: async () => {} });
    await until(async () => total(await embedded.lag('bench-embedded', [TOPIC], { upTo: 1 })) === 0);
    const embeddedSeconds = (performance.now() - started1) / 1000;
    await reader.stop();

    log('(2) the relay');
    const errors: unknown[] = [];
    const harness = await startKafkaHarness({ brokers, registryUrl, pool, topics: [TOPIC], startRelay: false, onError: (e) => errors.push(e) });
    cleanup.push(() => harness.close());
    await harness.codec.register([TOPIC]);
    const started2 = performance.now();
    await harness.relay.start();
    await until(async () => total(await harness.relay.backlog([TOPIC], { upTo: 1 })) === 0);
    const relaySeconds = (performance.now() - started2) / 1000;
    const admin = harness.kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(harness.names.topic(TOPIC));
    await admin.disconnect();
    const relayedOffsets = ends.reduce((n, p) => n + Number(p.high), 0);

    log('(3) Kafka consume');
    let first = 0;
    await harness.bus.consume({
      group: 'bench-kafka',
      topics: [TOPIC],
      handle: async () => {
        first ||= performance.now();
      },
    });
    await until(async () => first > 0 && total(await harness.bus.lag('bench-kafka', [TOPIC], { upTo: 1 })) === 0);
    const kafkaSeconds = (performance.now() - first) / 1000;
    if (errors.length > 0) throw errors[0];

    const rate = (seconds: number): Throughput => ({ seconds: round(seconds, 3), eventsPerSecond: Math.round(events / seconds) });
    return {
      events,
      embeddedConsume: rate(embeddedSeconds),
      relayToKafka: rate(relaySeconds),
      kafkaConsume: rate(kafkaSeconds),
      ratio: round(embeddedSeconds / relaySeconds, 2),
      broker,
      registry: options.registryUrl ? `SCHEMA_REGISTRY_URL=${options.registryUrl}` : 'Apicurio Registry (Confluent API), platform/local-engines',
      kafkaPartitions: ends.length,
      relayedOffsets,
      engines: memory.stop(),
    };
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

function total(lag: Array<{ records: number }>): number {
  return lag.reduce((n, p) => n + p.records, 0);
}

async function until(check: () => Promise<boolean>, timeoutMs = 900_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function round(n: number, digits: number): number {
  return Number(n.toFixed(digits));
}

// npx tsx bench/engines/kafka.ts [--quick]
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchRelay({ quick: process.argv.includes('--quick'), brokers: process.env.KAFKA_BROKERS, registryUrl: process.env.SCHEMA_REGISTRY_URL })
    .then((result) => console.log(JSON.stringify(result, null, 2)))
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}

// The scale-out engines the test run can reach. Each is either pointed at by its environment
// variable (an operator proving a real deployment with `npm run test:engines`), or started on this
// machine by the test set-up (ClickHouse from Debian's clickhouse-server package, Kafka as
// librdkafka's mock cluster through kcat), or absent. Neo4j cannot run here: its suites run only
// when NEO4J_URI points at a server.
import { startClickHouse } from './clickhouse.ts';
import { startKafkaMock } from './kafka.ts';

export interface LocalEngine {
  // What the suites connect to: a URL, or a broker list.
  address: string;
  // Stops what the set-up started (nothing when the engine was given by the environment).
  stop: () => Promise<void>;
}

export interface TestEngines {
  clickhouseUrl: string;
  kafkaBrokers: string;
  schemaRegistryUrl: string;
  neo4jUri: string;
  stop: () => Promise<void>;
}

export async function startTestEngines(env: NodeJS.ProcessEnv = process.env): Promise<TestEngines> {
  const clickhouse = env.CLICKHOUSE_URL ? given(env.CLICKHOUSE_URL) : await startClickHouse();
  const kafka = env.KAFKA_BROKERS ? given(env.KAFKA_BROKERS) : await startKafkaMock();
  return {
    clickhouseUrl: clickhouse?.address ?? '',
    kafkaBrokers: kafka?.address ?? '',
    // Without one, Kafka suites use the registry double in test/support.
    schemaRegistryUrl: env.SCHEMA_REGISTRY_URL ?? '',
    neo4jUri: env.NEO4J_URI ?? '',
    stop: async () => {
      await Promise.allSettled([clickhouse?.stop(), kafka?.stop()]);
    },
  };
}

function given(address: string): LocalEngine {
  return { address, stop: async () => {} };
}

import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run test:engines`: the engine adapters' suites only (the bus, graph and aggregate store
// contracts on Kafka, Neo4j and ClickHouse, and the Avro contract), against whatever
// KAFKA_BROKERS, SCHEMA_REGISTRY_URL, NEO4J_URI and CLICKHOUSE_URL point at; an engine left unset
// is started on this machine by the test set-up (platform/local-engines), whose own suite runs too.
export default defineConfig({
  test: {
    ...base.test,
    include: ['platform/bus/**/*.test.ts', 'platform/graph/neo4j/**/*.test.ts', 'platform/aggregates/clickhouse*.test.ts', 'schemas/bus/**/*.test.ts', 'test/scale-out-stack.test.ts', 'test/engine-faults.test.ts', 'test/engine-outage.test.ts', 'platform/local-engines/**/*.test.ts'],
  },
});

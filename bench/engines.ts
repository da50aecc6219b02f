// npm run bench:engines [-- --quick]
// The scale-out engines against the embedded default, on the engines reachable in this run:
// - relay throughput from the outbox to Kafka (events/s) against the embedded log's consume
//   throughput on the same rows (KAFKA_BROKERS, or Kafka 3.9 started for the run by
//   platform/local-engines, with Apicurio as the registry unless SCHEMA_REGISTRY_URL);
// - ClickHouse aggregate reads (windows, baseline, snapshots) p95 against the PostgreSQL adapter on
//   the same activities (CLICKHOUSE_URL, or Debian's clickhouse-server started for the run).
// Each prints a ratio against its baseline measured in the same run; neither asserts a target.
import { benchClickHouseAggregates } from './engines/clickhouse.ts';
import { benchRelay } from './engines/kafka.ts';

const quick = process.argv.includes('--quick');

const relay = await benchRelay({ quick, brokers: process.env.KAFKA_BROKERS, registryUrl: process.env.SCHEMA_REGISTRY_URL });
console.log(`relay to Kafka: ${relay.relayToKafka.eventsPerSecond} events/s vs embedded log consume ${relay.embeddedConsume.eventsPerSecond} events/s; ratio ${relay.ratio} (${relay.events} events; ${relay.broker}; ${relay.kafkaPartitions} partitions; Kafka group consume ${relay.kafkaConsume.eventsPerSecond} events/s)`);

const aggregates = await benchClickHouseAggregates({ quick });
console.log(`aggregate reads p95: ClickHouse ${aggregates.clickhouse.p95} ms vs PostgreSQL ${aggregates.postgres.p95} ms; ratio ${aggregates.ratio} (ClickHouse ${aggregates.version}; ${aggregates.activities} activities over ${aggregates.subjects} subjects, ${aggregates.rounds} rounds)`);
for (const [read, figures] of Object.entries(aggregates.reads)) {
  console.log(`  ${read}: ClickHouse p50/p95 ${figures.clickhouse.p50}/${figures.clickhouse.p95} ms, PostgreSQL ${figures.postgres.p50}/${figures.postgres.p95} ms, ratio ${figures.ratio.toFixed(2)}`);
}

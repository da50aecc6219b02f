// npm run bench:engines [-- --quick]
// The scale-out engines against the embedded default, on the engines reachable in this run:
// - relay throughput from the outbox to Kafka (events/s) against the embedded log's consume
//   throughput on the same rows (KAFKA_BROKERS, or Kafka 3.9 started for the run by
//   platform/local-engines, with Apicurio as the registry unless SCHEMA_REGISTRY_URL);
// - ClickHouse aggregate reads (windows, baseline, snapshots) p95 against the PostgreSQL adapter on
//   the same activities (CLICKHOUSE_URL, or Debian's clickhouse-server started for the run);
// - Neo4j graph reads (depth-2 ego networks, cycle searches) p50/p95 against the PostgreSQL graph
//   adapter, both loaded through apply() with the same AMLSim 20K_fanin200 network (NEO4J_URI, or
//   Neo4j 5.26 started for the run);
// - the peak resident memory of each engine started for the run, with its version.
// Each prints a ratio against its baseline measured in the same run; none asserts a target. The
// parts run one after the other, each starting its engines and stopping them when done, so no
// engine runs beside another part's work on the two cores.
import { benchClickHouseAggregates } from './engines/clickhouse.ts';
import { benchRelay } from './engines/kafka.ts';
import { benchNeo4jGraph, type CpuPer } from './engines/neo4j.ts';
import type { EngineMemory } from './lib/engine-memory.ts';
import { mb } from './lib/rss.ts';

const quick = process.argv.includes('--quick');

const relay = await benchRelay({ quick, brokers: process.env.KAFKA_BROKERS, registryUrl: process.env.SCHEMA_REGISTRY_URL });
console.log(`relay to Kafka: ${relay.relayToKafka.eventsPerSecond} events/s vs embedded log consume ${relay.embeddedConsume.eventsPerSecond} events/s; ratio ${relay.ratio} (${relay.events} events; ${relay.broker}; ${relay.kafkaPartitions} partitions; Kafka group consume ${relay.kafkaConsume.eventsPerSecond} events/s)`);

const aggregates = await benchClickHouseAggregates({ quick });
console.log(`aggregate reads p95: ClickHouse ${aggregates.clickhouse.p95} ms vs PostgreSQL ${aggregates.postgres.p95} ms; ratio ${aggregates.ratio} (ClickHouse ${aggregates.version}; ${aggregates.activities} activities over ${aggregates.subjects} subjects, ${aggregates.rounds} rounds)`);
for (const [read, figures] of Object.entries(aggregates.reads)) {
  console.log(`  ${read}: ClickHouse p50/p95 ${figures.clickhouse.p50}/${figures.clickhouse.p95} ms, PostgreSQL ${figures.postgres.p50}/${figures.postgres.p95} ms, ratio ${figures.ratio.toFixed(2)}`);
}

const graph = await benchNeo4jGraph({ quick });
const cpu = (per: CpuPer) => `${per.server === undefined ? 'n/a' : per.server.toFixed(2)} server + ${per.bench.toFixed(2)} bench`;
console.log(
  `graph reads p95: ego network Neo4j ${graph.reads.ego.neo4j.p95} ms vs PostgreSQL ${graph.reads.ego.postgres.p95} ms, ratio ${graph.reads.ego.ratio}; ` +
    `cycles Neo4j ${graph.reads.cycles.neo4j.p95} ms vs PostgreSQL ${graph.reads.cycles.postgres.p95} ms, ratio ${graph.reads.cycles.ratio} ` +
    `(${graph.version}, ${graph.server}; ${graph.accounts} accounts, ${graph.movements} movements; ${graph.queried} accounts queried)`,
);
const readNames = { ego: 'ego network, depth 2, cap 500', cycles: 'cycles, 2-6 hops, ±10 %, limit 50' } as const;
for (const name of ['ego', 'cycles'] as const) {
  const figures = graph.reads[name];
  console.log(
    `  ${readNames[name]}: Neo4j p50/p95/max ${figures.neo4j.p50}/${figures.neo4j.p95}/${figures.neo4j.max} ms, ` +
      `PostgreSQL ${figures.postgres.p50}/${figures.postgres.p95}/${figures.postgres.max} ms, ratio ${figures.ratio.toFixed(2)}; ` +
      `truncated Neo4j ${figures.truncated.neo4j}, PostgreSQL ${figures.truncated.postgres}; answers compared ${graph.compared[name]}, all equal`,
  );
}
console.log(`  answers: ego networks of ${graph.answers.egoNodesMean} nodes and ${graph.answers.egoEdgesMean} edges on average; ${graph.answers.cycles} cycles, ${graph.answers.accountsWithCycles} accounts with any`);
console.log(`  CPU ms per read: Neo4j ${cpu(graph.cpuMsPerRead.neo4j)}, PostgreSQL ${cpu(graph.cpuMsPerRead.postgres)}`);
console.log(
  `  load through apply(), ${graph.changes} changes in batches of 500: Neo4j ${graph.load.neo4j.seconds} s (${graph.load.neo4j.changesPerSecond} changes/s, CPU ms per change ${cpu(graph.load.neo4j.cpuMsPerChange)}), ` +
    `PostgreSQL ${graph.load.postgres.seconds} s (${graph.load.postgres.changesPerSecond} changes/s, ${cpu(graph.load.postgres.cpuMsPerChange)}); ratio of rates ${(graph.load.neo4j.changesPerSecond / graph.load.postgres.changesPerSecond).toFixed(2)}`,
);

// Every engine the parts started; one given by address runs elsewhere and is not measured.
const engines: Array<[part: string, expected: string[], measured: EngineMemory[]]> = [
  ['relay', ['kafka', 'schema-registry'], relay.engines],
  ['aggregates', ['clickhouse'], aggregates.engines],
  ['graph', ['neo4j'], graph.engines],
];
console.log(`peak memory of each engine, MiB (the higher of VmHWM, the kernel's peak since the engine started for its part, and VmRSS sampled every 200 ms from when it answered to the end of its part):`);
for (const [part, expected, measured] of engines) {
  for (const name of expected) {
    const engine = measured.find((e) => e.engine === name);
    if (!engine) {
      console.log(`  ${name}: given by address, not started here: not measured`);
      continue;
    }
    console.log(`  ${name} ${engine.version} (pid ${engine.pid}, ${part} part): peak ${mb(engine.peakBytes)} (VmHWM ${mb(engine.hwmBytes)}, highest sampled VmRSS ${mb(engine.sampledMaxBytes)} over ${engine.samples} samples)`);
  }
}

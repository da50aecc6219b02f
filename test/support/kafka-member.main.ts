// One member of a Kafka bus consumer group as a process of its own, so that a test can crash it
// for real (SIGKILL): run as `node --import tsx test/support/kafka-member.main.ts` by
// kafka-member-process.ts. It applies every record once (applied-once.ts) through the same
// KafkaBus the service runs, and reports on stdout, one JSON object a line:
//
//   {"ready":true}          consume() returned (joining the group goes on in the background)
//   {"assigned":[0,2,...]}  its partitions, whenever they change
//   {"holding":n}           FAULT_HOLD_AFTER records are applied. The batch that got there is
//                           committed to PostgreSQL but its handler never returns, so its Kafka
//                           offset is never committed; a batch handed over later hangs too,
//                           unapplied (those in flight on other partitions finish). A kill
//                           now crashes the member at the worst moment: effects durable, offsets
//                           not, so whoever reads those partitions next gets those records again.
//
// Environment: DATABASE_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, FAULT_NAMESPACE, FAULT_GROUP,
// FAULT_TOPICS (comma-separated), FAULT_MEMBER (its name in the tables), FAULT_HOLD_AFTER.
import { Kafka, logLevel } from 'kafkajs';
import { AvroCodec, schemaRegistryClient } from '../../platform/bus/kafka/avro-codec.ts';
import { KafkaBus } from '../../platform/bus/kafka/kafka-bus.ts';
import { ParkingLot } from '../../platform/bus/parking/lot.ts';
import { ParkedRecordStore } from '../../platform/bus/parking/store.ts';
import { MemberBeats } from '../../platform/bus/member-beats.ts';
import { createPool } from '../../platform/postgres/pool.ts';
import { applyOnce } from './applied-once.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const report = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const onError = (error: unknown) => process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);

const namespace = env('FAULT_NAMESPACE');
const member = env('FAULT_MEMBER');
const holdAfter = Number(env('FAULT_HOLD_AFTER'));
const pool = createPool(env('DATABASE_URL'), 4);
const kafka = new Kafka({ clientId: `svc-test-${member}`, brokers: env('KAFKA_BROKERS').split(','), logLevel: logLevel.NOTHING });
// Timings as the test harness's (platform/bus/kafka/testing.ts), so a dead member leaves the
// group after the same 6 s session timeout.
const bus = new KafkaBus({
  kafka,
  codec: new AvroCodec(schemaRegistryClient(env('SCHEMA_REGISTRY_URL'), `svc-test-${member}`), (topic) => `${namespace}${topic}`),
  namespace,
  parking: new ParkingLot(new ParkedRecordStore(pool), onError),
  beats: new MemberBeats(pool, onError),
  onError,
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 300,
  maxWaitTimeMs: 100,
});

let applied = 0;
let holding = false;
const forever = new Promise<never>(() => undefined);

const consumer = await bus.consume({
  group: env('FAULT_GROUP'),
  topics: env('FAULT_TOPICS').split(','),
  handle: async (records) => {
    if (holding) return forever;
    // Not `applied += await …`: that reads `applied` before the await, and batches of other
    // partitions are handled meanwhile (concurrency), so their counts were lost.
    const now = await applyOnce(pool, member, records);
    applied += now;
    if (applied >= holdAfter) {
      holding = true;
      report({ holding: applied });
      return forever;
    }
  },
});
report({ ready: true });

let last = '';
setInterval(() => {
  const now = JSON.stringify(consumer.assignment());
  if (now !== last) report({ assigned: consumer.assignment() });
  last = now;
}, 50);

// Should the test process die without killing this one, its stdin ends: leave then too.
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();

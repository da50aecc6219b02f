// The Kafka bus wired for tests and benchmarks: a namespace of its own on the given brokers (so
// runs sharing a cluster never meet), the schema registry at the given URL (a real one: the test
// set-up starts one), the relay over the given database, and the bus with the relay's backlog.

import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Pool } from '../../postgres/pool.ts';
import { ParkingLot } from '../parking/lot.ts';
import { ParkedRecordStore } from '../parking/store.ts';
import { MemberBeats } from '../member-beats.ts';
import { AvroCodec, schemaRegistryClient } from './avro-codec.ts';
import { KafkaBus, type KafkaBusOptions } from './kafka-bus.ts';
import { KafkaRelay, type KafkaRelayOptions } from './relay.ts';
import { KafkaNames } from './topics.ts';

export interface KafkaHarness {
  namespace: string;
  names: KafkaNames;
  kafka: Kafka;
  codec: AvroCodec;
  registryUrl: string;
  relay: KafkaRelay;
  bus: KafkaBus;
  // Resolves once the relay has moved every outbox row of its topics written so far.
  settle: (timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

export async function startKafkaHarness(options: {
  brokers: string;
  registryUrl: string;
  pool: Pool;
  topics: string[];
  onError?: (error: unknown) => void;
  namespace?: string;
  bus?: Partial<KafkaBusOptions>;
  relay?: Partial<KafkaRelayOptions>;
  startRelay?: boolean;
}): Promise<KafkaHarness> {
  const namespace = options.namespace ?? `t${randomBytes(4).toString('hex')}.`;
  const registryUrl = options.registryUrl;
  const kafka = new Kafka({ clientId: 'svc-test', brokers: options.brokers.split(','), logLevel: logLevel.NOTHING });
  const codec = new AvroCodec(schemaRegistryClient(registryUrl, 'svc-test'), (topic) => `${namespace}${topic}`);
  const relay = new KafkaRelay({ pool: options.pool, kafka, codec, namespace, topics: options.topics, idempotent: true, onError: options.onError, ...options.relay });
  const bus = new KafkaBus({
    kafka,
    codec,
    namespace,
    parking: new ParkingLot(new ParkedRecordStore(options.pool), options.onError),
    beats: new MemberBeats(options.pool, options.onError),
    onError: options.onError,
    backlog: (topics, o) => relay.backlog(topics, o),
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 300,
    maxWaitTimeMs: 100,
    afterPollMs: 50,
    ...options.bus,
  });
  if (options.startRelay !== false) await relay.start();
  return {
    namespace,
    names: new KafkaNames(namespace),
    kafka,
    codec,
    registryUrl,
    relay,
    bus,
    settle: async (timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while ((await relay.backlog(options.topics)).some((p) => p.records > 0)) {
        if (Date.now() > deadline) throw new Error('the relay did not catch up');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: async () => {
      await bus.close();
      await relay.stop();
    },
  };
}

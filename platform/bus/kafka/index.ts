// SVC_BUS=kafka: the Kafka bus and the relay that feeds it from the outbox, from the config.
//
//   const kafka = createKafkaBus(config, pool, { onError });
//   await kafka.start();        // registers the value schemas, starts the relay
//   ... pipelines consume kafka.bus exactly as they consume PostgresLogBus ...
//   await kafka.stop();
//
// Every process that writes to the outbox may run the relay (its partitions are leased, so
// several relays share the work); consumers need only the bus.

import { ParkingLot } from '../parking/lot.ts';
import { ParkedRecordStore } from '../parking/store.ts';
import { MemberBeats } from '../member-beats.ts';
import { Kafka, logLevel } from 'kafkajs';
import { BUS_TOPICS } from '../../../schemas/bus/avro/index.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../clock.ts';
import type { Pool } from '../../postgres/pool.ts';
import { AvroCodec, schemaRegistryClient } from './avro-codec.ts';
import { KafkaBus, type KafkaBusOptions } from './kafka-bus.ts';
import { KafkaRelay } from './relay.ts';

;
export {   type KafkaBusOptions,  } from './kafka-bus.ts';
;
;

export interface KafkaBusDeployment {
  kafka: Kafka;
  codec: AvroCodec;
  bus: KafkaBus;
  relay: KafkaRelay | undefined;
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

export type KafkaSettings = Pick<Config, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID' | 'KAFKA_IDEMPOTENT_PRODUCER' | 'SCHEMA_REGISTRY_URL'>;

function kafkaClient(settings: Pick<Config, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID'>): Kafka {
  if (!settings.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set');
  return new Kafka({
    clientId: settings.KAFKA_CLIENT_ID,
    brokers: settings.KAFKA_BROKERS.split(',').map((b) => b.trim()).filter(Boolean),
    logLevel: logLevel.ERROR,
  });
}

export function createKafkaBus(
  settings: KafkaSettings,
  pool: Pool,
  options: { onError?: (error: unknown) => void; onFatal?: (error: unknown) => void; relay?: boolean; namespace?: string; bus?: Partial<KafkaBusOptions>; clock?: Clock } = {},
): KafkaBusDeployment {
  if (!settings.SCHEMA_REGISTRY_URL) throw new Error('SCHEMA_REGISTRY_URL is not set');
  const kafka = kafkaClient(settings);
  const namespace = options.namespace ?? '';
  const codec = new AvroCodec(schemaRegistryClient(settings.SCHEMA_REGISTRY_URL, settings.KAFKA_CLIENT_ID), (topic) => `${namespace}${topic}`);
  // The relay's backlog counts in every reader's lag (outbox rows not yet relayed), whether or not
  // this process runs the relay: a stalled relay must not read as caught up.
  const backlogReader = new KafkaRelay({ pool, kafka, codec, namespace, topics: BUS_TOPICS, idempotent: settings.KAFKA_IDEMPOTENT_PRODUCER, onError: options.onError, ...(options.clock ? { clock: options.clock } : {}) });
  const relay = options.relay === false ? undefined : backlogReader;
  const bus = new KafkaBus({
    kafka,
    codec,
    namespace,
    parking: new ParkingLot(new ParkedRecordStore(pool, options.clock), options.onError),
    beats: new MemberBeats(pool, options.onError),
    onError: options.onError,
    ...(options.onFatal ? { onFatal: options.onFatal } : {}),
    backlog: (topics, o) => backlogReader.backlog(topics, o),
    ...options.bus,
  });
  return {
    kafka,
    codec,
    bus,
    relay,
    start: async () => {
      // Registering the value schemas is the writer's (the relay's) part; a reader of lag only
      // (the API's metrics, svc status) needs neither the registry nor a producer.
      if (!relay) return;
      await codec.register(BUS_TOPICS);
      await relay.start();
    },
    stop: async () => {
      await bus.close();
      await relay?.stop();
    },
  };
}

// The relay: moves the outbox (the PostgreSQL log every write commits into) to Kafka, in order.
//
// It is a consumer group of the embedded log itself (PostgresLogBus), one group per stream
// (`kafka-relay.<ns><stream>`: `inbox`, `canonical`), so it reads exactly as the embedded bus's
// consumers do: rows in (writer_xid, position) order per outbox partition, only those written by
// transactions older than every one still running (a row can never appear behind a position
// already passed), partitions leased with advisory locks (two relay processes never interleave
// a partition) and its position stored in consumer_offsets, committed after Kafka acknowledged
// the batch. So a restart neither loses nor reorders: it resumes after the last batch Kafka
// acknowledged; the batch in flight at a crash is sent again (duplicates, which consumers absorb:
// they are idempotent; with KAFKA_IDEMPOTENT_PRODUCER the broker drops a retried send's copies).
// No table of its own is needed.
//
// Per-entity order: an entity's rows share the outbox partition key, hence one outbox partition,
// read in order, one batch at a time; each batch is one sendBatch whose messages per topic keep
// their order, keyed by that same partition key, so they land in one Kafka partition in order. The
// producer has one request in flight per broker (and is idempotent where the setting allows), so
// a retry cannot overtake.
//
// Batches go to Kafka one at a time, though the log hands over several outbox partitions' batches
// at once, and a send that failed transiently is repeated unchanged before anything else goes
// (serial-sender.ts): what kafkajs's idempotent producer needs to survive a broker restart.
//
// A row whose value the Avro schema cannot carry exactly (derive.ts: a lone UTF-16 surrogate, which
// the API refuses now but rows accepted before that may hold) goes to <ns>dlq.relay with its JSON
// as sent and the reason in headers: never altered, never blocking its partition; the error is
// reported, and the event says so (inbox/relay-refusals.ts: an accepted event is rejected with a
// `relay` stage entry, a change record's event gets a `failed` one), once the dead letter is on
// Kafka and before the batch's position is committed.

import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { AvroMappingError } from '../../../schemas/bus/avro/index.ts';
import { systemClock, type Clock } from '../../clock.ts';
import { recordRelayRefusals, RELAY_STAGE, type RelayRefusal } from '../../inbox/relay-refusals.ts';
import type { Pool } from '../../postgres/pool.ts';
import type { BusRecord, Consumer, PartitionLag } from '../port.ts';
import { PostgresLogBus, streamOf } from '../postgres-log.ts';
import type { AvroCodec } from './avro-codec.ts';
import { SerialSender } from './serial-sender.ts';
import { ensureTopics, KafkaNames } from './topics.ts';

export interface KafkaRelayOptions {
  pool: Pool;
  kafka: Kafka;
  codec: AvroCodec;
  namespace?: string;
  // The bus topics to relay, by stream (every topic of a stream must be listed: the relay reads
  // the stream's rows of these topics only).
  topics: string[];
  // KAFKA_IDEMPOTENT_PRODUCER: off against brokers without idempotent producers (the mock).
  idempotent: boolean;
  onError?: (error: unknown) => void;
  maxBatch?: number;
  concurrency?: number;
  partitions?: number;
  clock?: Clock;
}

export interface RelayStats {
  relayed: number;
  deadLettered: number;
}

const RELAY_GROUP_PREFIX = 'kafka-relay.';

export class KafkaRelay {
  readonly names: KafkaNames;
  readonly stats: RelayStats = { relayed: 0, deadLettered: 0 };
  private readonly log: PostgresLogBus;
  private producer: Producer | undefined;
  private readonly consumers: Consumer[] = [];
  private readonly streams: Map<string, string[]>;
  private sender: SerialSender | undefined;

  constructor(private readonly options: KafkaRelayOptions) {
    this.names = new KafkaNames(options.namespace);
    this.log = new PostgresLogBus(options.pool, { onError: (e) => options.onError?.(e) });
    this.streams = new Map();
    for (const topic of options.topics) {
      const stream = streamOf([topic]);
      this.streams.set(stream, [...(this.streams.get(stream) ?? []), topic]);
    }
  }

  // The log group that relays a stream.
  group(stream: string): string {
    return `${RELAY_GROUP_PREFIX}${this.names.namespace}${stream}`;
  }

  async start(): Promise<void> {
    const { kafka, codec } = this.options;
    await codec.register(this.options.topics);
    await ensureTopics(kafka, [...this.options.topics.map((t) => this.names.topic(t)), this.names.relayDeadLetterTopic()], this.options.partitions);
    const producer = kafka.producer({
      idempotent: this.options.idempotent,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: true,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    try {
      await producer.connect();
    } catch (error) {
      if (!this.options.idempotent) throw error;
      // librdkafka's mock cluster (and brokers older than 0.11) cannot give a producer id.
      throw new Error(`the broker refused an idempotent producer (${(error as Error).message}); set KAFKA_IDEMPOTENT_PRODUCER=false for brokers without idempotent producers`, { cause: error });
    }
    this.producer = producer;
    this.sender = new SerialSender(producer, this.options.onError);
    for (const [stream, topics] of this.streams) {
      this.consumers.push(
        await this.log.consume({
          group: this.group(stream),
          topics,
          maxBatch: this.options.maxBatch,
          concurrency: this.options.concurrency,
          handle: (records) => this.relay(records),
        }),
      );
    }
  }

  async stop(): Promise<void> {
    this.sender?.stop();
    await Promise.allSettled(this.consumers.splice(0).map((c) => c.stop()));
    await this.producer?.disconnect().catch(() => undefined);
    this.producer = undefined;
    this.sender = undefined;
  }

  // Outbox rows of these topics not yet relayed, per outbox partition.
  async backlog(topics: string[], options: { upTo?: number } = {}): Promise<PartitionLag[]> {
    const byStream = new Map<string, string[]>();
    for (const topic of topics) {
      const stream = streamOf([topic]);
      byStream.set(stream, [...(byStream.get(stream) ?? []), topic]);
    }
    const total = new Map<number, number>();
    for (const [stream, streamTopics] of byStream) {
      for (const { partition, records } of await this.log.lag(this.group(stream), streamTopics, options)) {
        total.set(partition, (total.get(partition) ?? 0) + records);
      }
    }
    return [...total].sort(([a], [b]) => a - b).map(([partition, records]) => ({ partition, records }));
  }

  private async relay(records: BusRecord[]): Promise<void> {
    const sender = this.sender;
    if (!sender) throw new Error('the relay is stopped');
    const byTopic = new Map<string, Message[]>();
    const add = (topic: string, message: Message) => {
      const list = byTopic.get(topic) ?? [];
      list.push(message);
      byTopic.set(topic, list);
    };
    const refused: RelayRefusal[] = [];
    for (const record of records) {
      const headers = { ...record.headers, 'svc.outbox.offset': record.offset };
      let value: Buffer;
      try {
        value = await this.options.codec.encode(record.topic, JSON.parse(record.value.toString('utf8')));
      } catch (error) {
        if (!(error instanceof AvroMappingError) && !(error instanceof SyntaxError)) throw error;
        this.options.onError?.(new Error(`relay: ${record.topic} ${record.offset} dead-lettered: ${error.message}`));
        add(this.names.relayDeadLetterTopic(), { key: record.key, value: record.value, headers: { ...headers, 'svc.relay.topic': record.topic, 'svc.relay.error': error.message } });
        refused.push(refusalOf(record, error.message));
        continue;
      }
      add(this.names.topic(record.topic), { key: record.key, value, headers });
    }
    // Sent in parts of at most SEND_BYTES, in order: kafkajs never splits a batch, and one request
    // above the broker's message size would be refused again at every retry of this batch.
    await sender.send(sendParts(byTopic));
    if (refused.length > 0) {
      const at = (this.options.clock ?? systemClock).now();
      await recordRelayRefusals(this.options.pool, refused, { at, worker: `${RELAY_STAGE}:${process.pid}`, deadLetterTopic: this.names.relayDeadLetterTopic() });
    }
    this.stats.relayed += records.length - refused.length;
    this.stats.deadLettered += refused.length;
  }
}

// A dead-lettered row's event: an inbox row is an accepted event the canonical pipeline will now
// never see; any other row is a change record of an event it already processed.
function refusalOf(record: BusRecord, error: string): RelayRefusal {
  const key = { tenantId: record.headers.tenant_id!, eventId: record.headers.event_id! };
  return { key, stream: streamOf([record.topic]) === 'inbox' ? 'inbox' : 'canonical', topic: record.topic, error };
}

// Bytes of message values per send (topics allow 5 MiB messages; the API's payload cap is 4 MiB).
const SEND_BYTES = 4 * 1024 * 1024;

// The messages of each topic in order, cut into consecutive sends of at most SEND_BYTES of values
// (a single larger message goes alone).
export function* sendParts(byTopic: Map<string, Message[]>): Generator<Array<{ topic: string; messages: Message[] }>> {
  let part: Array<{ topic: string; messages: Message[] }> = [];
  let bytes = 0;
  for (const [topic, messages] of byTopic) {
    let current: Message[] = [];
    part.push({ topic, messages: current });
    for (const message of messages) {
      const size = Buffer.byteLength(message.value as Buffer);
      if (bytes > 0 && bytes + size > SEND_BYTES) {
        yield part.filter((p) => p.messages.length > 0);
        current = [];
        part = [{ topic, messages: current }];
        bytes = 0;
      }
      current.push(message);
      bytes += size;
    }
  }
  if (bytes > 0) yield part.filter((p) => p.messages.length > 0);
}

// The Bus port on Kafka (kafkajs). A group is a Kafka consumer group; a record is a Kafka message
// whose Avro value (avro-codec.ts) is handed to the handler as the same JSON bytes the embedded
// log hands over, so the pipelines do not know which bus they read.
//
// Commit discipline: eachBatch, no auto-commit, no auto-resolve. Records of one topic-partition go
// to `handle` in order, at most maxBatch at a time; only when it resolves is the offset resolved
// and committed (OffsetCommit, awaited) before the next records. A rejection leaves the offset
// where it was and the records are delivered again: first in place, `attempts` times with an
// exponential backoff (the port's "a rejection is retried"); a batch that still fails is then
// retried one record at a time, so the records before the failing one are committed; a single
// record that fails every in-place attempt is parked on the group's retry topic (its bytes,
// key and headers, with the origin and the round in headers) and its offset committed, so one
// poison record does not stop its partition. The group reads its retry topic too and delivers a
// parked record again once its delay has passed; after `rounds` rounds it goes to the group's
// dead-letter topic, which nothing consumes. Parking costs the parked record its order relative
// to later records of its key, and an `after` group counts it as committed: both are the price
// of not blocking a partition forever (the embedded log retries in place without end). Handlers
// in this service catch what is not transient themselves, so a rejection normally means "the
// database is away": `attempts` and the backoff are sized to outlast a short outage in place.
//
// `after`: before delivering records, the committed offsets of the upstream groups in the same
// topic-partition are fetched (admin OffsetFetch); only the records below every upstream offset
// are delivered, and the rest wait (polling, heartbeating) until the upstream groups commit.
//
// `lag`: per partition, the log end offset (ListOffsets) minus the group's committed offset
// (OffsetFetch; the log start when it has none), over the topics and the group's retry topic;
// plus, when the bus is given the relay's backlog, the outbox rows not yet relayed (numbered by
// the outbox's partitions), so "caught up" means caught up with everything written.

import type { Admin, Consumer as KafkaConsumer, EachBatchPayload, Kafka, KafkaMessage, Producer, IHeaders } from 'kafkajs';
import type { Bus, BusRecord, ConsumeOptions, Consumer, PartitionLag } from '../port.ts';
import type { AvroCodec } from './avro-codec.ts';
import { ensureTopics, KafkaNames } from './topics.ts';

export interface KafkaBusOptions {
  kafka: Kafka;
  codec: AvroCodec;
  // Prefix of every topic and group id on the cluster ('' by default).
  namespace?: string;
  onError?: (error: unknown) => void;
  // A consumer kafkajs gave up on (it will not restart it): the process should end so that its
  // supervisor starts it again, rather than run on without the consumer. Reported to onError when
  // unset.
  onFatal?: (error: unknown) => void;
  retry?: Partial<RetryPolicy>;
  // kafkajs consumer timings.
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  maxWaitTimeMs?: number;
  // How often records held back by `after` look at the upstream offsets again.
  afterPollMs?: number;
  // Records of these topics written to the outbox but not yet relayed (KafkaRelay.backlog).
  backlog?: (topics: string[], options: { upTo?: number }) => Promise<PartitionLag[]>;
  // Topics are created with this many partitions where the cluster lets an admin create them.
  partitions?: number;
}

export interface RetryPolicy {
  // Deliveries of a batch (and then of each record) before it leaves its partition.
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  // Rounds through the retry topic before the dead-letter topic.
  rounds: number;
  // How long a parked record waits on the retry topic.
  delayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 10, backoffMs: 200, maxBackoffMs: 30_000, rounds: 3, delayMs: 60_000 };
const DEFAULT_MAX_BATCH = 500;
const DEFAULT_CONCURRENCY = 4;

// Headers of a parked record (retry and dead-letter topics).
export const RETRY_HEADERS = {
  topic: 'svc.retry.topic',
  partition: 'svc.retry.partition',
  offset: 'svc.retry.offset',
  round: 'svc.retry.round',
  notBefore: 'svc.retry.not_before',
  error: 'svc.retry.error',
} as const;

export class KafkaBus implements Bus {
  readonly names: KafkaNames;
  readonly retry: RetryPolicy;
  private admin: Promise<Admin> | undefined;
  private producer: Promise<Producer> | undefined;
  private readonly consumers = new Set<KafkaBusConsumer>();

  constructor(readonly options: KafkaBusOptions) {
    this.names = new KafkaNames(options.namespace);
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    const consumer = new KafkaBusConsumer(this, options);
    this.consumers.add(consumer);
    try {
      await consumer.start();
    } catch (error) {
      this.consumers.delete(consumer);
      await consumer.stop().catch(() => undefined);
      throw error;
    }
    return consumer;
  }

  async lag(group: string, topics: string[], options: { upTo?: number } = {}): Promise<PartitionLag[]> {
    const admin = await this.adminClient();
    const kafkaTopics = [...topics.map((t) => this.names.topic(t)), this.names.retryTopic(group)];
    const byPartition = new Map<number, number>();
    const ends = new Map<string, Array<{ partition: number; high: string; low: string }>>();
    for (const topic of kafkaTopics) {
      try {
        ends.set(topic, await admin.fetchTopicOffsets(topic));
      } catch (error) {
        if ((error as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error;
      }
    }
    const committed = ends.size === 0 ? [] : await admin.fetchOffsets({ groupId: this.names.group(group), topics: [...ends.keys()] });
    for (const { topic, partitions } of committed) {
      for (const { partition, offset } of partitions) {
        const end = ends.get(topic)?.find((e) => e.partition === partition);
        if (!end) continue;
        const from = Number(offset) >= 0 ? Number(offset) : Number(end.low);
        byPartition.set(partition, (byPartition.get(partition) ?? 0) + Math.max(0, Number(end.high) - from));
      }
    }
    for (const partitions of ends.values()) {
      for (const { partition } of partitions) if (!byPartition.has(partition)) byPartition.set(partition, 0);
    }
    if (this.options.backlog) {
      for (const { partition, records } of await this.options.backlog(topics, options)) {
        byPartition.set(partition, (byPartition.get(partition) ?? 0) + records);
      }
    }
    return [...byPartition]
      .sort(([a], [b]) => a - b)
      .map(([partition, records]) => ({ partition, records: options.upTo === undefined ? records : Math.min(options.upTo, records) }));
  }

  // Stops every consumer still running and closes the clients.
  async close(): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.stop()));
    const admin = this.admin;
    const producer = this.producer;
    this.admin = undefined;
    this.producer = undefined;
    await Promise.allSettled([admin?.then((a) => a.disconnect()), producer?.then((p) => p.disconnect())]);
  }

  forget(consumer: KafkaBusConsumer): void {
    this.consumers.delete(consumer);
  }

  adminClient(): Promise<Admin> {
    if (!this.admin) {
      const admin = this.options.kafka.admin();
      this.admin = admin.connect().then(() => admin);
      this.admin.catch(() => (this.admin = undefined));
    }
    return this.admin;
  }

  // The producer of parked records: acknowledged by every in-sync replica before the offset of
  // the record it parks is committed.
  producerClient(): Promise<Producer> {
    if (!this.producer) {
      const producer = this.options.kafka.producer({ allowAutoTopicCreation: true, maxInFlightRequests: 1 });
      this.producer = producer.connect().then(() => producer);
      this.producer.catch(() => (this.producer = undefined));
    }
    return this.producer;
  }

  onError(error: unknown): void {
    this.options.onError?.(error);
  }
}

class KafkaBusConsumer implements Consumer {
  private consumer: KafkaConsumer | undefined;
  private assigned: number[] = [];
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private joined: Promise<void> | undefined;
  private readonly retryTopic: string;
  private readonly maxBatch: number;

  constructor(
    private readonly bus: KafkaBus,
    private readonly options: ConsumeOptions,
  ) {
    this.retryTopic = bus.names.retryTopic(options.group);
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
  }

  assignment(): number[] {
    return [...this.assigned];
  }

  async start(): Promise<void> {
    const { kafka } = this.bus.options;
    const topics = [...this.options.topics.map((t) => this.bus.names.topic(t)), this.retryTopic];
    await ensureTopics(kafka, [...topics, this.bus.names.deadLetterTopic(this.options.group)], this.bus.options.partitions);
    const consumer = kafka.consumer({
      groupId: this.bus.names.group(this.options.group),
      allowAutoTopicCreation: true,
      sessionTimeout: this.bus.options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: this.bus.options.heartbeatIntervalMs ?? 3_000,
      maxWaitTimeInMs: this.bus.options.maxWaitTimeMs ?? 1_000,
    });
    this.consumer = consumer;
    // Joining a group takes the coordinator's initial rebalance delay (3 s on Kafka's defaults
    // and on the mock): consume() does not wait for it; assignment() is empty until then.
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const assignment = event.payload.memberAssignment as Record<string, number[]>;
      this.assigned = [...new Set(Object.entries(assignment).filter(([topic]) => topic !== this.retryTopic).flatMap(([, partitions]) => partitions))].sort((a, b) => a - b);
    });
    consumer.on(consumer.events.REBALANCING, () => (this.assigned = []));
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart || this.stopped) return this.bus.onError(event.payload.error);
      (this.bus.options.onFatal ?? ((error: unknown) => this.bus.onError(error)))(event.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    // run() resolves once the member has joined: not awaited here (see above).
    this.joined = consumer
      .run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.options.concurrency ?? DEFAULT_CONCURRENCY,
        eachBatch: (payload) => this.eachBatch(payload),
      })
      .catch((error) => this.bus.onError(error));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping ??= (async () => {
      await this.joined;
      await this.consumer?.disconnect().catch((error) => this.bus.onError(error));
      this.assigned = [];
      this.bus.forget(this);
    })();
    return this.stopping;
  }

  private running(payload: EachBatchPayload): boolean {
    return !this.stopped && payload.isRunning() && !payload.isStale();
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const messages = batch.messages;
    const retrying = batch.topic === this.retryTopic;
    let index = 0;
    // After a batch failed every attempt, records are delivered one by one up to its end.
    let isolateUntil = -1;
    while (index < messages.length && this.running(payload)) {
      let chunk: KafkaMessage[];
      if (retrying) {
        chunk = [messages[index]!];
        if (!(await this.waitUntilDue(chunk[0]!, payload))) return;
      } else {
        const size = index <= isolateUntil ? 1 : this.maxBatch;
        chunk = messages.slice(index, index + size);
        if (this.options.after?.length) {
          chunk = await this.deliverable(batch.topic, batch.partition, chunk);
          if (chunk.length === 0) {
            await sleep(this.bus.options.afterPollMs ?? 100);
            await payload.heartbeat();
            continue;
          }
        }
      }
      const outcome = await this.deliver(payload, chunk, retrying);
      if (outcome === 'abandoned') return;
      if (outcome === 'failed') {
        if (chunk.length > 1) {
          isolateUntil = index + chunk.length - 1;
          continue;
        }
        await this.park(batch.topic, batch.partition, chunk[0]!, retrying);
      }
      const last = chunk[chunk.length - 1]!;
      payload.resolveOffset(last.offset);
      await payload.commitOffsetsIfNecessary({
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(BigInt(last.offset) + 1n) }] }],
      });
      index += chunk.length;
    }
  }

  // Delivers the records, retrying in place with a backoff. 'abandoned' when the consumer stops
  // (or loses the partition) meanwhile: the records stay uncommitted, for whoever reads next.
  private async deliver(payload: EachBatchPayload, chunk: KafkaMessage[], retrying: boolean): Promise<'done' | 'failed' | 'abandoned'> {
    const policy = this.bus.retry;
    for (let attempt = 1; ; attempt++) {
      try {
        const records = await Promise.all(chunk.map((message) => this.record(payload.batch.topic, payload.batch.partition, message, retrying)));
        await this.options.handle(records);
        return 'done';
      } catch (error) {
        this.bus.onError(error);
        if (attempt >= policy.attempts) return 'failed';
        const backoff = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (attempt - 1));
        if (!(await this.pause(backoff, payload))) return 'abandoned';
      }
    }
  }

  // The bus record of a Kafka message: the Avro value decoded to JSON, the bus topic, the
  // headers other than the bus's own. A parked record keeps its origin's topic, partition, offset.
  private async record(topic: string, partition: number, message: KafkaMessage, retrying: boolean): Promise<BusRecord> {
    const headers = stringHeaders(message.headers);
    const origin = retrying
      ? { topic: headers[RETRY_HEADERS.topic]!, partition: Number(headers[RETRY_HEADERS.partition]), offset: headers[RETRY_HEADERS.offset]! }
      : { topic: this.bus.names.busTopic(topic), partition, offset: message.offset };
    const value = message.value ? await this.bus.options.codec.decode(origin.topic, message.value) : null;
    return {
      topic: origin.topic,
      partition: origin.partition,
      offset: origin.offset,
      key: message.key?.toString('utf8') ?? '',
      value: Buffer.from(JSON.stringify(value), 'utf8'),
      headers: Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('svc.'))),
    };
  }

  // Moves a record that failed every in-place attempt to the retry topic, or after the last
  // round to the dead-letter topic. Awaited (all in-sync replicas) before its offset is committed.
  private async park(topic: string, partition: number, message: KafkaMessage, retrying: boolean): Promise<void> {
    const headers = stringHeaders(message.headers);
    const round = retrying ? Number(headers[RETRY_HEADERS.round] ?? '1') + 1 : 1;
    const origin = retrying
      ? { [RETRY_HEADERS.topic]: headers[RETRY_HEADERS.topic]!, [RETRY_HEADERS.partition]: headers[RETRY_HEADERS.partition]!, [RETRY_HEADERS.offset]: headers[RETRY_HEADERS.offset]! }
      : { [RETRY_HEADERS.topic]: this.bus.names.busTopic(topic), [RETRY_HEADERS.partition]: String(partition), [RETRY_HEADERS.offset]: message.offset };
    const dead = round > this.bus.retry.rounds;
    const producer = await this.bus.producerClient();
    await producer.send({
      topic: dead ? this.bus.names.deadLetterTopic(this.options.group) : this.retryTopic,
      acks: -1,
      messages: [
        {
          key: message.key,
          value: message.value,
          headers: {
            ...headers,
            ...origin,
            [RETRY_HEADERS.round]: String(round),
            [RETRY_HEADERS.notBefore]: String(Date.now() + this.bus.retry.delayMs),
          },
        },
      ],
    });
  }

  // Of these consecutive records, the leading ones every upstream group has committed.
  private async deliverable(topic: string, partition: number, chunk: KafkaMessage[]): Promise<KafkaMessage[]> {
    const admin = await this.bus.adminClient();
    let limit = BigInt(chunk[chunk.length - 1]!.offset) + 1n;
    for (const upstream of this.options.after ?? []) {
      const [offsets] = await admin.fetchOffsets({ groupId: this.bus.names.group(upstream), topics: [topic] });
      const committed = BigInt(offsets?.partitions.find((p) => p.partition === partition)?.offset ?? '-1');
      if (committed < limit) limit = committed;
    }
    return chunk.filter((message) => BigInt(message.offset) < limit);
  }

  private async waitUntilDue(message: KafkaMessage, payload: EachBatchPayload): Promise<boolean> {
    const due = Number(stringHeaders(message.headers)[RETRY_HEADERS.notBefore] ?? 0);
    const wait = due - Date.now();
    return wait <= 0 || this.pause(wait, payload);
  }

  // Sleeps while heartbeating; false when the consumer stopped meanwhile.
  private async pause(ms: number, payload: EachBatchPayload): Promise<boolean> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (!this.running(payload)) return false;
      await sleep(Math.min(250, until - Date.now()));
      await payload.heartbeat();
    }
    return this.running(payload);
  }
}

function stringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}

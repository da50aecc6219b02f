// The Bus port on Kafka (kafkajs). A group is a Kafka consumer group; a record is a Kafka message
// whose Avro value (avro-codec.ts) is handed to the handler as the same JSON bytes the embedded
// log hands over, so the pipelines do not know which bus they read.
//
// Commit discipline: eachBatch, no auto-commit, no auto-resolve. Records of one topic-partition go
// to `handle` in order, at most maxBatch at a time; only when it resolves is the offset committed
// (OffsetCommit, awaited) and then resolved, before the next records. The handler is guarded by the
// parking lot (../parking/lot.ts), as on the embedded log: a record that fails alone, every
// attempt, with an error that is not transient is parked in PostgreSQL with its error and the
// group moves past it; `svc deadletters replay` hands it to the group again. A value that cannot
// be decoded is parked the same way, with its Avro bytes. What is left, a transient error (an
// engine away), is retried in place with a backoff for as long as it takes, heartbeating.
//
// `after`: before delivering records, the committed offsets of the upstream groups in the same
// topic-partition are fetched (admin OffsetFetch); only the records below every upstream offset
// are delivered, and the rest wait (polling, heartbeating) until the upstream groups commit.
//
// `lag`: per partition, the log end offset (ListOffsets) minus the group's committed offset
// (OffsetFetch; the log start when it has none), over the topics and the group's retry topic;
// plus, when the bus is given the relay's backlog, the outbox rows not yet relayed (numbered by
// the outbox's partitions), so "caught up" means caught up with everything written.

import type { Admin, Consumer as KafkaConsumer, EachBatchPayload, Kafka, KafkaMessage, IHeaders } from 'kafkajs';
import type { MemberBeats } from '../member-beats.ts';
import type { ParkingLot } from '../parking/lot.ts';
import { isTransient } from '../parking/transient.ts';
import type { Bus, BusRecord, ConsumeOptions, Consumer, PartitionLag } from '../port.ts';
import { isConfluentFramed, type AvroCodec } from './avro-codec.ts';
import { ensureTopics, KafkaNames } from './topics.ts';

export interface KafkaBusOptions {
  kafka: Kafka;
  codec: AvroCodec;
  // Prefix of every topic and group id on the cluster ('' by default).
  namespace?: string;
  // Where a record no handler can process goes (in the service's PostgreSQL).
  parking: ParkingLot;
  // Where each member says it is alive (in the service's PostgreSQL): the live members counted.
  beats: MemberBeats;
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

// Waits between in-place retries of a batch that failed with a transient error.
export interface RetryPolicy {
  backoffMs: number;
  maxBackoffMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { backoffMs: 200, maxBackoffMs: 30_000 };
const DEFAULT_MAX_BATCH = 500;
const DEFAULT_CONCURRENCY = 4;
// A member restarting after a transient crash: 1 s, doubling, at most 30 s between attempts.
const RESTART_BACKOFF_MS = 1_000;
const MAX_RESTART_BACKOFF_MS = 30_000;

export class KafkaBus implements Bus {
  readonly names: KafkaNames;
  readonly retry: RetryPolicy;
  private admin: Promise<Admin> | undefined;
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
    const kafkaTopics = topics.map((t) => this.names.topic(t));
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

  // The processes running a member of the group (member-beats.ts), not the broker's count, which
  // misreads them around an outage.
  async members(group: string): Promise<number> {
    return this.options.beats.count(this.beatsKey(group));
  }

  beatsKey(group: string): string {
    return `kafka:${this.names.group(group)}`;
  }

  // Stops every consumer still running and closes the clients.
  async close(): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.stop()));
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
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
  private replays: { stop: () => Promise<void> } | undefined;
  // Alive from the first start to stop, across restarts after a crash: one member all along.
  private beating: { stop: () => Promise<void> } | undefined;
  private readonly maxBatch: number;
  private readonly handle: (records: BusRecord[]) => Promise<void>;

  constructor(
    private readonly bus: KafkaBus,
    private readonly options: ConsumeOptions,
  ) {
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    this.handle = bus.options.parking.guard(options.group, options.handle, () => this.stopped);
  }

  assignment(): number[] {
    return [...this.assigned];
  }

  async start(): Promise<void> {
    const { kafka } = this.bus.options;
    const topics = this.options.topics.map((t) => this.bus.names.topic(t));
    await ensureTopics(kafka, topics, this.bus.options.partitions);
    this.beating ??= this.bus.options.beats.start(this.bus.beatsKey(this.options.group));
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
      this.assigned = [...new Set(Object.values(assignment).flat())].sort((a, b) => a - b);
    });
    consumer.on(consumer.events.REBALANCING, () => (this.assigned = []));
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart || this.stopped || consumer !== this.consumer) return this.bus.onError(event.payload.error);
      // kafkajs gives up on some conditions that pass (a coordinator still loading after a broker
      // restart): the member starts again rather than ending the process.
      if (isTransient(event.payload.error)) {
        this.bus.onError(event.payload.error);
        void this.restartAfterCrash();
        return;
      }
      (this.bus.options.onFatal ?? ((error: unknown) => this.bus.onError(error)))(event.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    this.replays = this.bus.options.parking.replays(this.options.group, async (records) =>
      this.options.handle(await Promise.all(records.map((record) => this.decodeParked(record)))),
    );
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

  // A new kafkajs consumer for this member after a transient crash (kafkajs has disconnected the
  // old one), with a capped backoff while the cluster is still not answering.
  private async restartAfterCrash(attempt = 1): Promise<void> {
    await sleep(Math.min(RESTART_BACKOFF_MS * 2 ** (attempt - 1), MAX_RESTART_BACKOFF_MS));
    if (this.stopped) return;
    await this.replays?.stop();
    this.assigned = [];
    try {
      await this.start();
      // Stopped while starting: stop() saw the old consumer only.
      if (this.stopped) await this.consumer?.disconnect().catch((error) => this.bus.onError(error));
    } catch (error) {
      this.bus.onError(error);
      if (!this.stopped) await this.restartAfterCrash(attempt + 1);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping ??= (async () => {
      await this.joined;
      await this.replays?.stop();
      await this.consumer?.disconnect().catch((error) => this.bus.onError(error));
      await this.beating?.stop();
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
    let index = 0;
    while (index < messages.length && this.running(payload)) {
      let chunk = messages.slice(index, index + this.maxBatch);
      if (this.options.after?.length) {
        chunk = await this.deliverable(batch.topic, batch.partition, chunk);
        if (chunk.length === 0) {
          await sleep(this.bus.options.afterPollMs ?? 100);
          await payload.heartbeat();
          continue;
        }
      }
      if (!(await this.deliver(payload, chunk))) return;
      const last = chunk[chunk.length - 1]!;
      await commitThenResolve(payload, last.offset);
      index += chunk.length;
    }
  }

  // Delivers the records (parking those that cannot be), retrying in place with a backoff while
  // the failure is transient. False when the consumer stops (or loses the partition) meanwhile:
  // the records stay uncommitted, for whoever reads next.
  private async deliver(payload: EachBatchPayload, chunk: KafkaMessage[]): Promise<boolean> {
    const policy = this.bus.retry;
    // Decoded (or parked) once across the retries: a message parked as undecodable is not parked
    // again, with another attempt and stage row, on every retry of a transient failure.
    const decoded = new Map<string, BusRecord | null>();
    for (let attempt = 1; ; attempt++) {
      try {
        const records = await this.decode(payload.batch.topic, payload.batch.partition, chunk, decoded);
        await this.handle(records);
        return true;
      } catch (error) {
        if (!this.running(payload)) return false;
        this.bus.onError(error);
        const backoff = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(attempt - 1, 16));
        if (!(await this.pause(backoff, payload))) return false;
      }
    }
  }

  // The bus records of Kafka messages: the Avro value decoded to JSON, the bus topic, the headers.
  // A value that cannot be decoded for a reason that is not transient is parked with its bytes
  // and left out.
  // Messages already decoded or parked, by offset, are taken from `done`.
  private async decode(topic: string, partition: number, chunk: KafkaMessage[], done: Map<string, BusRecord | null>): Promise<BusRecord[]> {
    const busTopic = this.bus.names.busTopic(topic);
    const records: BusRecord[] = [];
    for (const message of chunk) {
      const earlier = done.get(message.offset);
      if (earlier !== undefined) {
        if (earlier) records.push(earlier);
        continue;
      }
      const record: BusRecord = {
        topic: busTopic,
        partition,
        offset: message.offset,
        key: message.key?.toString('utf8') ?? '',
        value: message.value ?? Buffer.alloc(0),
        // The bus's own headers (the relay's outbox offset) are not the handler's.
        headers: Object.fromEntries(Object.entries(stringHeaders(message.headers)).filter(([name]) => !name.startsWith('svc.'))),
      };
      try {
        const value = message.value ? await this.bus.options.codec.decode(busTopic, message.value) : null;
        const decodedRecord = { ...record, value: Buffer.from(JSON.stringify(value), 'utf8') };
        done.set(message.offset, decodedRecord);
        records.push(decodedRecord);
      } catch (error) {
        if (isTransient(error)) throw error;
        await this.bus.options.parking.store.park(this.options.group, record, error, 1);
        done.set(message.offset, null);
        this.bus.onError(error);
      }
    }
    return records;
  }

  // A record parked by decode() holds the Avro bytes it could not decode (a schema the registry
  // did not give then); a replay decodes it as a delivery would, and throws as decode() does. A
  // record parked by its handler already holds the decoded JSON, which never starts with
  // Confluent's magic byte.
  private async decodeParked(record: BusRecord): Promise<BusRecord> {
    if (!isConfluentFramed(record.value)) return record;
    const value = await this.bus.options.codec.decode(record.topic, record.value);
    return { ...record, value: Buffer.from(JSON.stringify(value), 'utf8') };
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

// Where a group stands after handling a chunk ending at `offset`: committed first, then resolved.
// kafkajs fetches from the resolved offset, so one resolved before a commit that then failed (a
// broker lost mid-commit) would never be fetched again, and the group's committed offset would
// stay behind records long handled: lag that never drains, and records handled again after any
// restart. Unresolved, the records are fetched again, handled again (handlers are idempotent) and
// committed.
export async function commitThenResolve(payload: Pick<EachBatchPayload, 'batch' | 'commitOffsetsIfNecessary' | 'resolveOffset'>, offset: string): Promise<void> {
  const { topic, partition } = payload.batch;
  await payload.commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: String(BigInt(offset) + 1n) }] }] });
  payload.resolveOffset(offset);
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

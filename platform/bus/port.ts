// The bus as the pipelines see it: an ordered, partitioned log read by named consumer groups,
// at least once. The embedded adapter is the PostgreSQL outbox; a Kafka adapter fits behind the
// same interface (a record is a topic, a key, a value and headers; offsets are per partition).

export interface BusRecord {
  topic: string;
  partition: number;
  // Opaque, ordered within a partition.
  offset: string;
  key: string;
  value: Buffer;
  // tenant_id and event_id; an accepted event's record (value: its raw bytes) also received_at,
  // the ISO instant its inbox row was written (the canonical pipeline's change records carry it).
  headers: Record<string, string>;
}

export interface ConsumeOptions {
  group: string;
  topics: string[];
  // Called with at most maxBatch records of one or more partitions: each partition's next records,
  // in order, and no call for a partition before the one before it resolved. Its effects must be
  // durable when it resolves; only then are the offsets committed. A record may be delivered
  // again after a crash, so handlers are idempotent. A rejection is retried (no offset moves).
  handle: (records: BusRecord[]) => Promise<void>;
  maxBatch?: number;
  // How many batches one member handles at the same time.
  concurrency?: number;
  // How often an idle member looks for new records, where the bus polls (the embedded log; 50 ms
  // by default). Shorter for a group whose latency every later stage adds to.
  idlePollMs?: number;
  // Upstream groups reading the same topics: a record is delivered only once every one of them has
  // committed it, so a consumer that reads what they build (detection reads the graph and the
  // aggregates) never sees a record before its effects are there.
  after?: string[];
}

export interface Consumer {
  // The partitions this member reads now.
  assignment(): number[];
  stop(): Promise<void>;
}

export interface PartitionLag {
  partition: number;
  // Records written but not yet committed by the group.
  records: number;
}

export interface Bus {
  consume(options: ConsumeOptions): Promise<Consumer>;
  // Records of these topics not yet committed by the group, per partition; with upTo, counted
  // no further than that per partition (a caller asking "caught up yet?" needs no exact count).
  lag(group: string, topics: string[], options?: { upTo?: number }): Promise<PartitionLag[]>;
  // The group's live members: the processes running one, each saying so on a timer of its own, so
  // a member retrying a batch through an engine outage, or rejoining its Kafka group, counts once.
  members(group: string): Promise<number>;
}

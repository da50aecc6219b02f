import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Pool, PoolClient } from '../postgres/pool.ts';
import { ParkingLot, type ParkingPolicy } from './parking/lot.ts';
import { ParkedRecordStore } from './parking/store.ts';
import type { Bus, BusRecord, ConsumeOptions, Consumer, PartitionLag } from './port.ts';

// Fixed: the outbox computes each row's partition from its key with this modulus.
export const PARTITIONS = 16;
const IDLE_POLL_MS = 50;
const HEARTBEAT_MS = 2_000;
const MEMBER_TTL_S = 10;
const DEFAULT_MAX_BATCH = 500;
// And at most about this many bytes of record values per batch (always one record at least):
// an accepted event may be megabytes, and a batch of 500 such (every lane holding several copies
// of each) ran a member out of memory, which restarted on the same batch and failed again.
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
// Lanes of one member (see LogConsumer), each handling its partitions' records while the others
// do theirs: each holds a pooled connection while it works.
const DEFAULT_CONCURRENCY = 4;
// A lane whose batch failed with a transient error (parking/transient.ts) waits this long before
// it tries again, doubled after each further failure up to the cap.
const RETRY_BACKOFF_MS = 500;
const MAX_RETRY_BACKOFF_MS = 10_000;
// Advisory-lock namespace of partition leases (the first key of pg_try_advisory_lock(int, int)).
const LEASE_NAMESPACE = 0x5e7c;

interface LogRow {
  position: string;
  writer_xid: string;
  topic: string;
  partition_key: string;
  partition: number;
  tenant_id: string;
  event_id: string;
  // Null for an accepted event: its value is the event's raw bytes in inbox_events.
  payload: string | null;
}

// A topic's stream is its first segment (`inbox.party` → `inbox`). The log is indexed by stream,
// so one consumer's topics must share one: a group never scans past another stream's records.
export function streamOf(topics: string[]): string {
  const streams = new Set(topics.map((topic) => topic.split('.')[0]!));
  if (streams.size !== 1) throw new Error(`a consumer's topics must share one stream, got ${[...streams].join(', ') || 'none'}`);
  return [...streams][0]!;
}

// The embedded bus: the outbox table read as a log. A group's position in a partition is
// (writer_xid, position); a reader only takes rows written by transactions older than every
// transaction still running, so a row can never appear behind a position already passed.
// Partitions are leased with session advisory locks: a partition has one reader at a time, and
// a crashed reader's leases vanish with its connection. Members share partitions out fairly.
// A record a group cannot process is parked (parking/lot.ts) in the same database.
export class PostgresLogBus implements Bus {
  private readonly parking: ParkingLot;

  constructor(
    private readonly pool: Pool,
    private readonly options: { onError?: (error: unknown) => void; parking?: Partial<ParkingPolicy>; clock?: Clock } = {},
  ) {
    this.parking = new ParkingLot(new ParkedRecordStore(pool, options.clock), options.onError, options.parking);
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    const consumer = new LogConsumer(this.pool, options, this.parking, this.options.onError ?? (() => undefined));
    await consumer.start();
    return consumer;
  }

  async lag(group: string, topics: string[], options: { upTo?: number } = {}): Promise<PartitionLag[]> {
    const { rows } = await this.pool.query<{ partition: number; records: string }>(
      `SELECT p.partition, (SELECT count(*) FROM (SELECT 1 FROM outbox o
                              WHERE o.stream = $2 AND o.partition = p.partition AND o.topic = ANY($3::text[])
                                -- No offset yet: from the start. One row comparison (no OR), so
                                -- the scan starts at the offset in outbox_log instead of walking
                                -- the partition's consumed rows.
                                AND (o.writer_xid, o.position) > (coalesce(c.writer_xid, '0'::xid8), coalesce(c.position, -1))
                              LIMIT $4) behind) AS records
         FROM generate_series(0, ${PARTITIONS - 1}) AS p(partition)
         LEFT JOIN consumer_offsets c ON c.group_name = $1 AND c.partition = p.partition
        ORDER BY p.partition`,
      [group, streamOf(topics), topics, options.upTo ?? null],
    );
    return rows.map((r) => ({ partition: r.partition, records: Number(r.records) }));
  }

  // A member heartbeats every rebalance and is counted while its last beat is recent.
  async members(group: string): Promise<number> {
    const { rows } = await this.pool.query<{ members: number }>(
      `SELECT count(*)::int AS members FROM consumer_members
        WHERE group_name = $1 AND seen_at > now() - make_interval(secs => ${MEMBER_TTL_S})`,
      [group],
    );
    return rows[0]!.members;
  }
}

// A group's next records in each of a lane's partitions ($2-$4: partition, position), at most $6
// per partition: committed by a transaction older than every running one, and (for a group
// reading `after` others, $7) already taken by every upstream group. One index range per
// partition, as in the watch. The upstream test is left out of the text for groups without any:
// every poll is planned anew (see createPool's customPlans), and each subquery is planned with it.
const pollSql = (withUpstream: boolean): string =>
  `SELECT o.position::text, o.writer_xid::text, o.topic, o.partition_key, o.partition, o.tenant_id, o.event_id, o.payload
     FROM unnest($2::int[], $3::text[]::xid8[], $4::bigint[]) AS w(partition, xid, position)
    CROSS JOIN LATERAL (
      SELECT o.* FROM outbox o
       WHERE o.stream = $1
         AND o.partition = w.partition
         AND o.topic = ANY($5::text[])
         AND (o.writer_xid, o.position) > (w.xid, w.position)
         AND o.writer_xid < pg_snapshot_xmin(pg_current_snapshot())${
           withUpstream
             ? `
         AND NOT EXISTS (SELECT 1 FROM unnest($7::text[]) AS u(group_name)
                           LEFT JOIN consumer_offsets c ON c.group_name = u.group_name AND c.partition = w.partition
                          WHERE c.position IS NULL OR (c.writer_xid, c.position) < (o.writer_xid, o.position))`
             : ''
         }
       ORDER BY o.writer_xid, o.position
       LIMIT $6
    ) o
    ORDER BY o.partition, o.writer_xid, o.position`;
const POLL_SQL = pollSql(false);
const POLL_AFTER_SQL = pollSql(true);

// Where the group stands in each partition of a handled batch, in one statement; in partition
// order, so two members handing a partition over lock the rows in one order.
const COMMIT_SQL = `INSERT INTO consumer_offsets (group_name, partition, writer_xid, position, updated_at)
  SELECT $1, u.partition, u.xid::xid8, u.position, now()
    FROM unnest($2::int[], $3::text[], $4::bigint[]) AS u(partition, xid, position)
   ORDER BY u.partition
  ON CONFLICT (group_name, partition) DO UPDATE
    SET writer_xid = EXCLUDED.writer_xid, position = EXCLUDED.position, updated_at = EXCLUDED.updated_at
  WHERE (consumer_offsets.writer_xid, consumer_offsets.position) < (EXCLUDED.writer_xid, EXCLUDED.position)`;

// An accepted event of the log by its tenant and id (acceptedEvents).
const acceptedEventKey = (row: { tenant_id: string; event_id: string }): string => `${row.tenant_id}\u0000${row.event_id}`;

interface AcceptedEvent {
  // Null past the poll's byte budget (acceptedEvents): the poll stops before it.
  value_text: string | null;
  bytes: number;
  received_at: Date;
  historical: boolean;
}

function recordOf(row: LogRow, value: string, headers: Record<string, string>): BusRecord {
  return { topic: row.topic, partition: row.partition, offset: `${row.writer_xid}:${row.position}`, key: row.partition_key, value: Buffer.from(value, 'utf8'), headers };
}

// A member reads its partitions in lanes: lane i holds the partitions p with p % lanes = i, polls
// all of them in one statement, hands what it found over in one call and commits their offsets in
// one statement. A partition's lane never changes, so its records are handled in order, one batch
// at a time. Read a partition at a time, a group's batches were a few records each at 1,000
// movements/s (the records of one partition since its last poll), and every batch costs each
// pipeline a transaction of several statements: a large share of the machine's CPU in
// bench:detect (docs/benchmarks.md).
class LogConsumer implements Consumer {
  private readonly memberId = randomUUID();
  private leaseClient: PoolClient | undefined;
  private readonly held = new Set<number>();
  // Where this member is in each partition it holds, read from consumer_offsets on taking it.
  private readonly positions = new Map<number, { xid: string; position: string }>();
  private readonly lanes: number;
  private readonly running: Array<Promise<void>> = [];
  // Each lane's batch in progress, if any: a partition given back waits for it.
  private readonly inFlight = new Map<number, Promise<number>>();
  // Lanes waiting, each with what wakes it: their last poll found nothing (watch() looks for
  // news), or they hold no partition (rebalance wakes them when they take one).
  private readonly idle = new Map<number, () => void>();
  private watching: Promise<void> | undefined;
  private stopped = false;
  private rebalancing = false;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private readonly handle: (records: BusRecord[]) => Promise<void>;
  private replays: { stop: () => Promise<void> } | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly options: ConsumeOptions,
    private readonly parking: ParkingLot,
    private readonly onError: (error: unknown) => void,
  ) {
    this.lanes = Math.max(1, Math.min(PARTITIONS, options.concurrency ?? DEFAULT_CONCURRENCY));
    this.stream = streamOf(options.topics);
    this.handle = parking.guard(options.group, options.handle, () => this.stopped);
  }

  private readonly stream: string;

  async start(): Promise<void> {
    this.replays = this.parking.replays(this.options.group, this.options.handle);
    for (let lane = 0; lane < this.lanes; lane++) this.running.push(this.loop(lane));
    await this.rebalance();
    this.rebalanceTimer = setInterval(() => void this.rebalance().catch(this.onError), HEARTBEAT_MS);
    this.watching = this.watch();
  }

  assignment(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.rebalanceTimer);
    this.wakeAll();
    await Promise.allSettled([...this.running, this.watching, this.replays?.stop()]);
    await this.pool
      .query('DELETE FROM consumer_members WHERE group_name = $1 AND member_id = $2', [this.options.group, this.memberId])
      .catch(() => undefined);
    // Closing the session releases every lease it holds.
    this.leaseClient?.release(true);
    this.leaseClient = undefined;
    this.held.clear();
  }

  // Heartbeat, then hold this member's fair share of partitions: take free ones up to the share,
  // give back any above it so a newly started member can take them. Never runs twice at once:
  // advisory locks stack within a session, so a partition locked twice would never be freed.
  private async rebalance(): Promise<void> {
    if (this.stopped || this.rebalancing) return;
    this.rebalancing = true;
    try {
      await this.rebalanceOnce();
    } finally {
      this.rebalancing = false;
    }
  }

  private async rebalanceOnce(): Promise<void> {
    if (!this.leaseClient) {
      const client = await this.pool.connect();
      // A lost lease session means lost leases: stop reading every partition it held.
      client.on('error', () => {
        this.held.clear();
        this.wakeAll();
        // Released already when stop() closed it (closing is what raised the error): once only.
        if (this.leaseClient !== client) return;
        this.leaseClient = undefined;
        client.release(true);
      });
      this.leaseClient = client;
    }
    const leases = this.leaseClient;
    const group = this.options.group;
    const { rows } = await this.pool.query<{ members: number }>(
      `WITH beat AS (
         INSERT INTO consumer_members (group_name, member_id, seen_at) VALUES ($1, $2, now())
         ON CONFLICT (group_name, member_id) DO UPDATE SET seen_at = now()
       )
       SELECT count(*)::int + 1 AS members FROM consumer_members
        WHERE group_name = $1 AND member_id <> $2 AND seen_at > now() - make_interval(secs => ${MEMBER_TTL_S})`,
      [group, this.memberId],
    );
    const share = Math.ceil(PARTITIONS / Math.max(1, rows[0]!.members));
    const groupKey = hashGroup(group);
    for (const partition of [...this.held]) {
      if (this.held.size <= share) break;
      this.held.delete(partition);
      // A batch started before is still the partition's: the lease goes once it is committed.
      await this.inFlight.get(this.laneOf(partition))?.catch(() => undefined);
      await leases.query('SELECT pg_advisory_unlock($1, $2)', [groupKey, partition]);
    }
    const given = new Set<number>();
    for (let partition = 0; partition < PARTITIONS && this.held.size < share && !this.stopped; partition++) {
      if (this.held.has(partition)) continue;
      const { rows: lock } = await leases.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [groupKey, partition]);
      if (!lock[0]!.ok) continue;
      const { rows: offset } = await this.pool.query<{ xid: string; position: string }>(
        'SELECT writer_xid::text AS xid, position::text FROM consumer_offsets WHERE group_name = $1 AND partition = $2',
        [group, partition],
      );
      this.positions.set(partition, offset[0] ?? { xid: '0', position: '0' });
      this.held.add(partition);
      given.add(this.laneOf(partition));
    }
    // Once all are taken, so a lane's first poll reads every partition it was given.
    for (const lane of given) this.wake(lane);
  }

  private laneOf(partition: number): number {
    return partition % this.lanes;
  }

  // The partitions a lane holds now, in order.
  private partitionsOf(lane: number): number[] {
    return [...this.held].filter((partition) => this.laneOf(partition) === lane).sort((a, b) => a - b);
  }

  private async loop(lane: number): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const partitions = this.partitionsOf(lane);
      if (partitions.length === 0) {
        await this.news(lane);
        continue;
      }
      // Set before any await: a partition given back from now on waits for this batch.
      const batch = this.pollOnce(partitions);
      this.inFlight.set(lane, batch);
      try {
        const handled = await batch;
        failures = 0;
        if (handled === 0) await this.news(lane);
      } catch (error) {
        if (this.stopped) break;
        this.onError(error);
        await sleep(Math.min(MAX_RETRY_BACKOFF_MS, RETRY_BACKOFF_MS * 2 ** failures));
        failures = Math.min(failures + 1, 16);
      } finally {
        this.inFlight.delete(lane);
      }
    }
  }

  // Resolves once one of the lane's partitions has a record this group may take (or the lane
  // takes a partition, or the consumer stops): an idle lane is not polled on its own, watch()
  // looks for all of them in one statement.
  private news(lane: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.idle.set(lane, resolve));
  }

  private wake(lane: number): void {
    this.idle.get(lane)?.();
    this.idle.delete(lane);
  }

  private wakeAll(): void {
    for (const lane of [...this.idle.keys()]) this.wake(lane);
  }

  // Every IDLE_POLL_MS (or the group's idlePollMs), one statement asks, for every partition of the
  // idle lanes at once, whether its next record may be taken, and wakes the lanes of those whose can. Polling each idle
  // partition on its own cost a statement per partition per tick: 16 partitions per group, so
  // most of the log's reads found nothing (docs/benchmarks.md). Should the statement fail, every
  // idle lane is woken to poll for itself.
  private async watch(): Promise<void> {
    while (!this.stopped) {
      await sleep(this.options.idlePollMs ?? IDLE_POLL_MS);
      const partitions = [...this.idle.keys()].flatMap((lane) => this.partitionsOf(lane));
      if (partitions.length === 0 || this.stopped) continue;
      try {
        for (const partition of await this.withNews(partitions)) this.wake(this.laneOf(partition));
      } catch (error) {
        this.onError(error);
        this.wakeAll();
      }
    }
  }

  // Of these partitions, those whose first record past this group's position is committed (by
  // a transaction older than every running one) and taken by every upstream group. Records of a
  // partition are taken in order, so when the first is not yet taken upstream no later one is.
  private async withNews(partitions: number[]): Promise<number[]> {
    const positions = partitions.map((partition) => this.positions.get(partition)!);
    const { rows } = await this.pool.query<{ partition: number }>({
      name: 'bus-watch',
      text: `SELECT w.partition
               FROM unnest($2::int[], $3::text[]::xid8[], $4::bigint[]) AS w(partition, xid, position)
              CROSS JOIN LATERAL (
                SELECT o.writer_xid, o.position FROM outbox o
                 WHERE o.stream = $1 AND o.partition = w.partition AND o.topic = ANY($5::text[])
                   AND (o.writer_xid, o.position) > (w.xid, w.position)
                   AND o.writer_xid < pg_snapshot_xmin(pg_current_snapshot())
                 ORDER BY o.writer_xid, o.position
                 LIMIT 1
              ) first
              WHERE NOT EXISTS (SELECT 1 FROM unnest($6::text[]) AS u(group_name)
                                  LEFT JOIN consumer_offsets c ON c.group_name = u.group_name AND c.partition = w.partition
                                 WHERE c.position IS NULL OR (c.writer_xid, c.position) < (first.writer_xid, first.position))`,
      values: [this.stream, partitions, positions.map((p) => p.xid), positions.map((p) => p.position), this.options.topics, this.options.after ?? []],
    });
    return rows.map((row) => row.partition);
  }

  // One batch of a lane: its partitions' next records, handled in one call, then committed.
  // Returns how many records were handled.
  private async pollOnce(partitions: number[]): Promise<number> {
    const group = this.options.group;
    const maxBatch = this.options.maxBatch ?? DEFAULT_MAX_BATCH;
    const after = this.options.after ?? [];
    const from = partitions.map((partition) => this.positions.get(partition)!);
    const { rows: found } = await this.pool.query<LogRow>({
      name: after.length > 0 ? 'bus-poll-after' : 'bus-poll',
      text: after.length > 0 ? POLL_AFTER_SQL : POLL_SQL,
      values: [
        this.stream,
        partitions,
        from.map((p) => p.xid),
        from.map((p) => p.position),
        this.options.topics,
        // A fair share of the batch per partition; at least one, so a lane of more partitions
        // than maxBatch is cut below.
        Math.max(1, Math.floor(maxBatch / partitions.length)),
        ...(after.length > 0 ? [after] : []),
      ],
    });
    if (found.length === 0) return 0;
    // In partition order, so a cut keeps a leading run of every partition it keeps.
    let rows = found.slice(0, maxBatch);
    const accepted = await this.acceptedEvents(rows.filter((row) => row.payload === null));
    rows = withinBytes(rows, accepted);
    const records: BusRecord[] = rows.map((row) => {
      if (row.payload !== null) return recordOf(row, row.payload, { tenant_id: row.tenant_id, event_id: row.event_id });
      const event = accepted.get(acceptedEventKey(row))!;
      return recordOf(row, event.value_text!, { tenant_id: row.tenant_id, event_id: row.event_id, received_at: event.received_at.toISOString(), historical: String(event.historical) });
    });
    await this.handle(records);
    // The last row of each partition is where the group now stands in it.
    const last = new Map<number, LogRow>();
    for (const row of rows) last.set(row.partition, row);
    const ends = [...last.values()];
    await this.pool.query({
      name: 'bus-commit',
      text: COMMIT_SQL,
      values: [group, ends.map((row) => row.partition), ends.map((row) => row.writer_xid), ends.map((row) => row.position)],
    });
    for (const row of ends) this.positions.set(row.partition, { xid: row.writer_xid, position: row.position });
    return rows.length;
  }

  // The raw bytes of the accepted events among a poll's records, read as text (they are UTF-8
  // JSON, checked at ingest, and text skips bytea's hex form), by (tenant, event), with when each
  // was received and whether a historical import landed it (the record's `received_at` and
  // `historical` headers: the canonical pipeline's change records carry both, and so need not read
  // the inbox row again). Read apart from the poll: a subquery per record in the poll was planned
  // on every poll of every group, and only the groups reading the inbox stream have such records.
  // Inbox rows are never deleted.
  private async acceptedEvents(rows: LogRow[]): Promise<Map<string, AcceptedEvent>> {
    if (rows.length === 0) return new Map();
    const { rows: found } = await this.pool.query<AcceptedEvent & { tenant_id: string; event_id: string }>({
      name: 'bus-accepted-events',
      text: `SELECT tenant_id, event_id, received_at, historical, bytes,
                    CASE WHEN ord = 1 OR before < $3 THEN convert_from(raw_event, 'UTF8') END AS value_text
               FROM (
                 SELECT k.tenant_id, k.event_id, k.ord, i.raw_event, i.bytes, i.received_at, i.historical,
                        sum(i.bytes) OVER (ORDER BY k.ord) - i.bytes AS before
                   FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS k(tenant_id, event_id, ord)
                  CROSS JOIN LATERAL (
                    SELECT e.raw_event, octet_length(e.raw_event) AS bytes, e.received_at, e.historical FROM inbox_events e
                     WHERE e.tenant_id = k.tenant_id AND e.event_id = k.event_id
                     LIMIT 1
                  ) i
               ) b`,
      values: [rows.map((row) => row.tenant_id), rows.map((row) => row.event_id), MAX_BATCH_BYTES],
    });
    const values = new Map(found.map((row) => [acceptedEventKey(row), row]));
    const missing = rows.find((row) => !values.has(acceptedEventKey(row)));
    if (missing) throw new Error(`outbox record ${missing.writer_xid}:${missing.position} names accepted event ${missing.event_id} of tenant ${missing.tenant_id}, which inbox_events does not hold`);
    return values;
  }
}

// The leading rows of a poll whose values fit MAX_BATCH_BYTES (one row at least). An accepted
// event without its value lay past the budget of its own read (acceptedEvents), which counts only
// accepted events: the cut is made again here over every value.
function withinBytes(rows: LogRow[], accepted: Map<string, AcceptedEvent>): LogRow[] {
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const event = row.payload === null ? accepted.get(acceptedEventKey(row)) : undefined;
    if (event && event.value_text === null) return rows.slice(0, i);
    bytes += event ? event.bytes : Buffer.byteLength(row.payload!);
    if (bytes > MAX_BATCH_BYTES && i > 0) return rows.slice(0, i);
  }
  return rows;
}

function hashGroup(group: string): number {
  let hash = LEASE_NAMESPACE;
  for (let i = 0; i < group.length; i++) hash = (Math.imul(hash, 31) + group.charCodeAt(i)) | 0;
  return hash;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

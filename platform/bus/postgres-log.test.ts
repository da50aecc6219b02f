import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptEvents } from '../inbox/accept-events.ts';
import { INBOX_TOPICS } from '../../pipelines/groups.ts';
import { partyEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { drain } from '../../test/support/test-pipeline.ts';
import type { BusRecord, Consumer } from './port.ts';
import { PostgresLogBus } from './postgres-log.ts';

let api: TestApi;
const consumers: Consumer[] = [];
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  for (const consumer of consumers) await consumer.stop();
  await api?.close();
});

describe('a consumer that reads after upstream groups', () => {
  it('is given a record only once every upstream group has committed it', async () => {
    const errors: unknown[] = [];
    const bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
    for (let i = 0; i < 6; i++) {
      const res = await api.client.post('/v1/parties', partyEvent(`after-${i}`), api.keys.ingest);
      expect(res.statusCode).toBe(202);
    }
    const upstreamHandled = new Set<string>();
    const downstream: BusRecord[] = [];
    const early: string[] = [];
    consumers.push(
      await bus.consume({
        group: 'downstream',
        topics: INBOX_TOPICS,
        after: ['upstream'],
        handle: async (records) => {
          for (const record of records) if (!upstreamHandled.has(`${record.partition}/${record.offset}`)) early.push(record.offset);
          downstream.push(...records);
        },
      }),
    );
    // No upstream offsets yet: nothing may be delivered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(downstream).toEqual([]);
    consumers.push(
      await bus.consume({
        group: 'upstream',
        topics: INBOX_TOPICS,
        maxBatch: 1,
        handle: async (records) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          for (const record of records) upstreamHandled.add(`${record.partition}/${record.offset}`);
        },
      }),
    );
    await drain(bus, errors, [{ group: 'upstream', topics: INBOX_TOPICS }, { group: 'downstream', topics: INBOX_TOPICS }]);
    expect(early).toEqual([]);
    expect(downstream.map((r) => JSON.parse(r.value.toString()).external_id).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `after-${i}`));
  });
});

describe('lag', () => {
  it('counts the records a group has not committed, per partition, no further than upTo when asked', async () => {
    const bus = new PostgresLogBus(api.db.pool);
    for (let i = 0; i < 40; i++) {
      const res = await api.client.post('/v1/parties', partyEvent(`lag-${i}`), api.keys.ingest);
      expect(res.statusCode).toBe(202);
    }
    const exact = await bus.lag('nobody-reads-this', INBOX_TOPICS);
    const total = exact.reduce((n, p) => n + p.records, 0);
    expect(total).toBeGreaterThanOrEqual(40);
    const capped = await bus.lag('nobody-reads-this', INBOX_TOPICS, { upTo: 1 });
    expect(capped.map((p) => p.partition)).toEqual(exact.map((p) => p.partition));
    expect(capped.map((p) => p.records)).toEqual(exact.map((p) => Math.min(1, p.records)));
  });
});

describe('an idle consumer', () => {
  it('watches its idle partitions with one statement per tick, and takes a new record at once', async () => {
    const statements = new Map<string, number>();
    const pool = api.db.pool;
    // The pool as the consumer sees it, counting its statements by name.
    const counting = {
      query: (config: { name?: string }, values?: unknown[]) => {
        const name = typeof config === 'object' && config.name ? config.name : 'other';
        statements.set(name, (statements.get(name) ?? 0) + 1);
        return pool.query(config as never, values as never);
      },
      connect: () => pool.connect(),
    } as unknown as typeof pool;
    const received: string[] = [];
    const bus = new PostgresLogBus(counting);
    consumers.push(
      await bus.consume({
        group: 'idle-watcher',
        topics: INBOX_TOPICS,
        handle: async (records) => {
          received.push(...records.map((r) => JSON.parse(r.value.toString()).external_id));
        },
      }),
    );
    // Catch up with what the other cases left in the log, then sit idle for a second.
    await new Promise((resolve) => setTimeout(resolve, 500));
    statements.clear();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // 16 idle partitions polled every 50 ms would be about 320 polls; watched, about 20 statements.
    expect(statements.get('bus-poll') ?? 0).toBe(0);
    expect(statements.get('bus-watch')).toBeGreaterThan(5);
    expect(statements.get('bus-watch')).toBeLessThan(40);

    const res = await api.client.post('/v1/parties', partyEvent('idle-then-busy'), api.keys.ingest);
    expect(res.statusCode).toBe(202);
    const sent = Date.now();
    while (!received.includes('idle-then-busy') && Date.now() - sent < 5_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(received).toContain('idle-then-busy');
    // Woken by the watch, polled once for the new record (and once more, finding nothing).
    expect(statements.get('bus-poll')).toBeLessThanOrEqual(3);
  });
});

describe("a member's lanes", () => {
  // The position of a record in its partition, comparable: (writer xid, position).
  const rank = (r: BusRecord): [bigint, bigint] => {
    const [xid, position] = r.offset.split(':');
    return [BigInt(xid!), BigInt(position!)];
  };
  const before = (a: BusRecord, b: BusRecord) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
  };

  it('read all their partitions in one statement and hand their records over in one call, cut at maxBatch', async () => {
    for (let i = 0; i < 48; i++) {
      const res = await api.client.post('/v1/parties', partyEvent(`lanes-${i}`), api.keys.ingest);
      expect(res.statusCode).toBe(202);
    }
    const errors: unknown[] = [];
    const polls = { count: 0 };
    const pool = api.db.pool;
    const counting = {
      query: (config: { name?: string }, values?: unknown[]) => {
        if (typeof config === 'object' && config.name === 'bus-poll') polls.count++;
        return pool.query(config as never, values as never);
      },
      connect: () => pool.connect(),
    } as unknown as typeof pool;
    const bus = new PostgresLogBus(counting, { onError: (e) => errors.push(e) });
    const read = async (group: string, options: { concurrency: number; maxBatch?: number }) => {
      const calls: BusRecord[][] = [];
      consumers.push(await bus.consume({ group, topics: INBOX_TOPICS, ...options, handle: async (records) => void calls.push(records) }));
      await drain(bus, errors, [{ group, topics: INBOX_TOPICS }]);
      return calls;
    };

    // One lane holds all 16 partitions: the whole log so far in its first poll and call, bar a
    // record whose writer was not yet older than every running transaction (it waits for the next).
    polls.count = 0;
    const whole = await read('lanes-one', { concurrency: 1 });
    const partitions = new Set(whole.flat().map((r) => r.partition));
    expect(partitions.size).toBeGreaterThan(8);
    expect(new Set(whole[0]!.map((r) => r.partition)).size).toBeGreaterThan(8);
    expect(polls.count).toBeLessThanOrEqual(4);

    // Cut at maxBatch: every call holds at most 3 records, and each partition's records still
    // arrive in order, each once.
    const cut = await read('lanes-cut', { concurrency: 1, maxBatch: 3 });
    expect(cut.every((call) => call.length <= 3)).toBe(true);
    const flat = cut.flat();
    expect(flat.map((r) => `${r.partition}/${r.offset}`).sort()).toEqual(whole.flat().map((r) => `${r.partition}/${r.offset}`).sort());
    for (const partition of partitions) {
      const mine = flat.filter((r) => r.partition === partition);
      for (let i = 1; i < mine.length; i++) expect(before(mine[i - 1]!, mine[i]!)).toBe(true);
    }

    // Four lanes: each call holds the partitions of one lane only.
    const four = await read('lanes-four', { concurrency: 4 });
    for (const call of four) expect(new Set(call.map((r) => r.partition % 4)).size).toBe(1);
    expect(four.length).toBeLessThanOrEqual(10);
    expect(errors).toEqual([]);
  });
});

describe('an accepted event on the log', () => {
  it('is handed over with its raw bytes and, in its headers, its tenant, id, when it was received and that it is live', async () => {
    const event = partyEvent('received-at-1');
    const res = await api.client.post('/v1/parties', event, api.keys.ingest);
    expect(res.statusCode).toBe(202);
    const { rows } = await api.db.pool.query<{ tenant_id: string; event_id: string; received_at: Date; raw_event: Buffer }>(
      `SELECT tenant_id, event_id, received_at, raw_event FROM inbox_events WHERE external_id = 'received-at-1'`,
    );
    const errors: unknown[] = [];
    const bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
    const seen: BusRecord[] = [];
    consumers.push(await bus.consume({ group: 'received-at', topics: INBOX_TOPICS, handle: async (records) => void seen.push(...records) }));
    await drain(bus, errors, [{ group: 'received-at', topics: INBOX_TOPICS }]);
    const record = seen.find((r) => r.headers.event_id === rows[0]!.event_id)!;
    expect(record.headers).toEqual({ tenant_id: rows[0]!.tenant_id, event_id: rows[0]!.event_id, received_at: rows[0]!.received_at.toISOString(), historical: 'false' });
    expect(record.value.equals(rows[0]!.raw_event)).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe('a batch of large records', () => {
  it('is cut to about 16 MiB of values (one record at least), so a member never holds hundreds of megabytes', async () => {
    // The consumers of the tests before hold the pool's connections (each its partition leases).
    for (const consumer of consumers.splice(0)) await consumer.stop();
    const MiB = 1024 * 1024;
    const sizes: Record<string, number> = { 'big-7a': 7, 'big-7b': 7, 'big-7c': 7, 'big-20': 20 };
    // Versions of one party: one partition, read by one lane, in order.
    const events = Object.entries(sizes).map(([marker, mib], i) => {
      const rawEvent = Buffer.from(JSON.stringify({ external_id: 'big', marker, pad: 'x'.repeat(mib * MiB) }));
      return {
        tenantId: 'acme', eventId: randomUUID(), object: 'party' as const, externalId: 'big', sequence: i + 1, rawEvent,
        contentHash: createHash('sha256').update(rawEvent).digest(), occurredAt: new Date('2026-09-01T12:00:00Z'),
        receivedAt: new Date('2026-09-01T12:00:01Z'), correlationId: null, importId: null, historical: false,
      };
    });
    expect((await acceptEvents(api.db.pool, events)).map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    const errors: unknown[] = [];
    const bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
    const batches: Array<{ markers: string[]; bytes: number; records: number }> = [];
    const ids = new Set<string>(events.map((e) => e.eventId));
    consumers.push(
      await bus.consume({
        group: 'large-records',
        topics: INBOX_TOPICS,
        handle: async (records) =>
          void batches.push({
            markers: records.filter((r) => ids.has(r.headers.event_id!)).map((r) => JSON.parse(r.value.toString()).marker),
            bytes: records.reduce((n, r) => n + r.value.length, 0),
            records: records.length,
          }),
      }),
    );
    await drain(bus, errors, [{ group: 'large-records', topics: INBOX_TOPICS }]);
    expect(errors).toEqual([]);
    expect(batches.flatMap((b) => b.markers)).toEqual(Object.keys(sizes));
    for (const batch of batches) if (batch.records > 1) expect(batch.bytes).toBeLessThanOrEqual(16 * MiB);
    expect(batches.filter((b) => b.markers.length > 0).map((b) => b.markers)).toEqual([['big-7a', 'big-7b'], ['big-7c'], ['big-20']]);
  }, 60_000);
});

// The contract every Bus adapter keeps (port.ts), as a vitest suite to run against each:
//
//   describeBusContract('postgres log', async ({ pool }) => ({ bus: new PostgresLogBus(pool), ... }))
//
// Records are written as the service writes them, into the outbox of a fresh database (the
// embedded log reads it directly; the Kafka bus through its relay), as canonical change records
// of two topics of one stream. Each case uses keys and groups of its own, so cases share the
// topics without seeing each other's records in their assertions.
//
//   - order: a partition's records reach `handle` in order, at most maxBatch per call, and every
//     entity's versions in the order written
//   - at least once, commit after effects: a rejected batch is delivered again, and nothing
//     behind it in its partition is handled before it succeeds
//   - a member stopped and replaced resumes after what was committed: nothing lost, nothing
//     committed delivered again
//   - groups are independent: each gets every record; one that keeps failing holds nobody else
//   - `after`: a record reaches a downstream group only once every upstream group committed it
//   - lag: what a group has not committed, per partition, capped by upTo, zero once caught up
//   - members: the group's live members, as the engine that balances them counts them
//   - poison: a record that fails alone every attempt is parked with its error and the group moves
//     past it (its partition's later records handled); replayed on request once it can be; a
//     transient error (an engine away) is retried in place, never parked

import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from '../postgres/pool.ts';
import type { Bus, BusRecord, Consumer } from './port.ts';
import { ParkedRecordStore } from './parking/store.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';

export interface BusUnderTest {
  bus: Bus;
  // Resolves once every record written to the outbox so far can be read from the bus.
  settle: () => Promise<void>;
  close: () => Promise<void>;
}

export interface ContractContext {
  pool: Pool;
  // Handler rejections and the like, reported by the adapter.
  errors: unknown[];
}

export const CONTRACT_TOPICS = ['canonical.party', 'canonical.account'];
const TENANT = 'acme';
const WAIT_MS = 25_000;

interface Written {
  topic: string;
  key: string;
  seq: number;
}

// One outbox row per record, in one transaction, as the canonical pipeline writes change records.
export async function writeRecords(pool: Pool, records: Written[]): Promise<void> {
  const rows = records.map((r) => {
    const object = r.topic.slice('canonical.'.length);
    const externalId = r.key.split('/').pop()!;
    const eventId = randomUUID();
    const payload = {
      tenant_id: TENANT,
      event_id: eventId,
      external_id: externalId,
      occurred_at: '2026-09-01T11:59:00Z',
      received_at: '2026-09-01T12:00:00.000Z',
      object,
      sequence: r.seq,
      current: true,
      data: { key: r.key, seq: r.seq },
    };
    return { eventId, topic: r.topic, key: r.key, payload: JSON.stringify(payload) };
  });
  await pool.query(
    `INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at, payload)
     SELECT $1, e, topic, k, now(), p FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) AS u(e, topic, k, p)`,
    [TENANT, rows.map((r) => r.eventId), rows.map((r) => r.topic), rows.map((r) => r.key), rows.map((r) => r.payload)],
  );
}

export function seqOf(record: BusRecord): { key: string; seq: number } {
  const value = JSON.parse(record.value.toString('utf8')) as { data: { key: string; seq: number } };
  return value.data;
}

export async function eventually(check: () => Promise<boolean> | boolean, what: string, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function describeBusContract(name: string, factory: (context: ContractContext) => Promise<BusUnderTest>): void {
  describe(`Bus contract: ${name}`, () => {
    let db: TestDatabase;
    let subject: BusUnderTest;
    const errors: unknown[] = [];
    const consumers: Consumer[] = [];
    let bus: Bus;

    beforeAll(async () => {
      db = await createTestDatabase();
      subject = await factory({ pool: db.pool, errors });
      bus = subject.bus;
    });
    // Each case stops its consumers (a member holds connections of the pool while it runs).
    afterEach(async () => {
      for (const consumer of consumers.splice(0)) await consumer.stop().catch(() => undefined);
    });
    afterAll(async () => {
      await subject?.close();
      await db?.drop();
    });

    const run = () => randomUUID().slice(0, 8);
    // Keys of this case: `acme/<object>/<run>-<n>`.
    const keysOf = (id: string, topic: string, count: number) => Array.from({ length: count }, (_, n) => `${TENANT}/${topic.slice('canonical.'.length)}/${id}-${n}`);
    const mine = (id: string) => (record: BusRecord) => seqOf(record).key.includes(`/${id}-`);
    const consume = async (options: Parameters<Bus['consume']>[0]) => {
      const consumer = await bus.consume(options);
      consumers.push(consumer);
      return consumer;
    };
    const write = async (records: Written[]) => {
      await writeRecords(db.pool, records);
      await subject.settle();
    };
    // Versions 1..n of every key, written round by round (each round its own transaction).
    const versions = async (keys: Array<{ topic: string; key: string }>, from: number, to: number) => {
      for (let seq = from; seq <= to; seq++) await write(keys.map(({ topic, key }) => ({ topic, key, seq })));
    };
    const twoTopics = (id: string, perTopic: number) =>
      CONTRACT_TOPICS.flatMap((topic) => keysOf(id, topic, perTopic).map((key) => ({ topic, key })));

    it('hands over at most maxBatch records per call, every entity in the order written', async () => {
      const id = run();
      const keys = twoTopics(id, 6);
      await versions(keys, 1, 5);
      const calls: BusRecord[][] = [];
      await consume({ group: `order-${id}`, topics: CONTRACT_TOPICS, maxBatch: 7, handle: async (records) => void calls.push(records) });
      await eventually(() => calls.flat().filter(mine(id)).length >= keys.length * 5, 'every record');
      for (const call of calls) expect(call.length).toBeLessThanOrEqual(7);
      const seen = new Map<string, number[]>();
      for (const record of calls.flat().filter(mine(id))) {
        const { key, seq } = seqOf(record);
        seen.set(key, [...(seen.get(key) ?? []), seq]);
        expect(record.key).toBe(key);
        expect(record.headers.tenant_id).toBe(TENANT);
      }
      expect(seen.size).toBe(keys.length);
      for (const seqs of seen.values()) expect(seqs).toEqual([1, 2, 3, 4, 5]);
    });

    it('delivers a rejected batch again, and nothing behind it before it succeeds', async () => {
      const id = run();
      const keys = twoTopics(id, 3);
      await versions(keys, 1, 4);
      const victim = keys[0]!.key;
      let rejected = 0;
      const handled: Array<{ key: string; seq: number }> = [];
      const deliveries = new Map<string, number>();
      await consume({
        group: `retry-${id}`,
        topics: CONTRACT_TOPICS,
        handle: async (records) => {
          for (const record of records.filter(mine(id))) {
            const { key, seq } = seqOf(record);
            deliveries.set(`${key}#${seq}`, (deliveries.get(`${key}#${seq}`) ?? 0) + 1);
          }
          if (rejected < 2 && records.some((r) => mine(id)(r) && seqOf(r).key === victim && seqOf(r).seq === 2)) {
            rejected++;
            throw new Error('the effects could not be written');
          }
          handled.push(...records.filter(mine(id)).map(seqOf));
        },
      });
      await eventually(() => handled.length >= keys.length * 4, 'every record handled');
      expect(rejected).toBe(2);
      expect(deliveries.get(`${victim}#2`)).toBeGreaterThanOrEqual(3);
      // Each key's versions were handled (successfully) in order, the victim's included.
      for (const { key } of keys) expect(handled.filter((h) => h.key === key).map((h) => h.seq)).toEqual([1, 2, 3, 4]);
      await eventually(async () => (await bus.lag(`retry-${id}`, CONTRACT_TOPICS)).every((p) => p.records === 0), 'no lag');
    });

    it('a member stopped and replaced resumes after what was committed', async () => {
      const id = run();
      const keys = twoTopics(id, 4);
      await versions(keys, 1, 2);
      const first: BusRecord[] = [];
      const group = `resume-${id}`;
      const a = await consume({ group, topics: CONTRACT_TOPICS, handle: async (records) => void first.push(...records.filter(mine(id))) });
      await eventually(() => first.length >= keys.length * 2, 'the first records');
      await eventually(async () => (await bus.lag(group, CONTRACT_TOPICS)).every((p) => p.records === 0), 'the first commits');
      await a.stop();
      await versions(keys, 3, 4);
      const second: BusRecord[] = [];
      const b = await consume({ group, topics: CONTRACT_TOPICS, handle: async (records) => void second.push(...records.filter(mine(id))) });
      await eventually(() => second.length >= keys.length * 2, 'the later records');
      expect(b.assignment().length).toBeGreaterThan(0);
      expect(second.map(seqOf).every(({ seq }) => seq >= 3)).toBe(true);
      expect(second.length).toBe(keys.length * 2);
    });

    it('counts the live members of a group: none before, one while a member runs, none once it left', async () => {
      const group = `members-${run()}`;
      expect(await bus.members(group)).toBe(0);
      const member = await consume({ group, topics: CONTRACT_TOPICS, handle: async () => undefined });
      await eventually(async () => (await bus.members(group)) === 1, 'the member counted');
      await member.stop();
      await eventually(async () => (await bus.members(group)) === 0, 'the member gone');
    });

    it('keeps groups independent: each gets every record, a failing one holds nobody else', async () => {
      const id = run();
      const keys = twoTopics(id, 3);
      await versions(keys, 1, 3);
      const got = { one: [] as BusRecord[], two: [] as BusRecord[] };
      let stuckCalls = 0;
      await consume({ group: `indep-a-${id}`, topics: CONTRACT_TOPICS, handle: async (records) => void got.one.push(...records.filter(mine(id))) });
      await consume({ group: `indep-b-${id}`, topics: CONTRACT_TOPICS, handle: async (records) => void got.two.push(...records.filter(mine(id))) });
      await consume({
        group: `indep-stuck-${id}`,
        topics: CONTRACT_TOPICS,
        handle: async () => {
          stuckCalls++;
          throw new Error('always failing');
        },
      });
      await eventually(() => got.one.length >= keys.length * 3 && got.two.length >= keys.length * 3 && stuckCalls > 0, 'both groups');
      const summary = (records: BusRecord[]) => records.map(seqOf).map(({ key, seq }) => `${key}#${seq}`).sort();
      expect(summary(got.one)).toEqual(summary(got.two));
      expect(new Set(summary(got.one)).size).toBe(keys.length * 3);
    });

    it('gives a downstream group a record only once every upstream group committed it', async () => {
      const id = run();
      const keys = twoTopics(id, 3);
      await versions(keys, 1, 2);
      const [up1, up2] = [`up1-${id}`, `up2-${id}`];
      const committed = { [up1]: new Set<string>(), [up2]: new Set<string>() };
      const early: string[] = [];
      const downstream: BusRecord[] = [];
      const at = (r: BusRecord) => `${r.topic}/${r.partition}/${r.offset}`;
      // The second upstream group holds its first records until released.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // A record's upstream commit follows its handler: it counts as committed once handled.
      const upstream = (group: string, gate?: Promise<void>) =>
        consume({
          group,
          topics: CONTRACT_TOPICS,
          maxBatch: 2,
          concurrency: 1,
          handle: async (records) => {
            await gate;
            records.forEach((r) => committed[group]!.add(at(r)));
          },
        });
      const down = await consume({
        group: `down-${id}`,
        topics: CONTRACT_TOPICS,
        after: [up1, up2],
        handle: async (records) => {
          for (const record of records) if (!committed[up1]!.has(at(record)) || !committed[up2]!.has(at(record))) early.push(at(record));
          downstream.push(...records.filter(mine(id)));
        },
      });
      await upstream(up1);
      await upstream(up2, released);
      await eventually(() => down.assignment().length > 0, 'the downstream member to hold partitions');
      await eventually(async () => (await bus.lag(up1, CONTRACT_TOPICS)).every((p) => p.records === 0), 'the first upstream group');
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Every record is committed by one upstream group, none by the other: nothing downstream.
      expect(downstream).toEqual([]);
      release();
      await eventually(() => downstream.length >= keys.length * 2, 'the downstream group');
      expect(early).toEqual([]);
    });

    it('counts what a group has not committed, per partition, no further than upTo when asked', async () => {
      const id = run();
      const keys = twoTopics(id, 5);
      await versions(keys, 1, 3);
      const group = `lag-${id}`;
      const exact = await bus.lag(group, CONTRACT_TOPICS);
      const total = exact.reduce((n, p) => n + p.records, 0);
      expect(total).toBeGreaterThanOrEqual(keys.length * 3);
      expect(exact.map((p) => p.partition)).toEqual(exact.map((p) => p.partition).sort((a, b) => a - b));
      const capped = await bus.lag(group, CONTRACT_TOPICS, { upTo: 1 });
      expect(capped.map((p) => p.partition)).toEqual(exact.map((p) => p.partition));
      expect(capped.map((p) => p.records)).toEqual(exact.map((p) => Math.min(1, p.records)));
      let handled = 0;
      await consume({ group, topics: CONTRACT_TOPICS, handle: async (records) => void (handled += records.length) });
      await eventually(async () => (await bus.lag(group, CONTRACT_TOPICS)).every((p) => p.records === 0), 'no lag');
      expect(handled).toBeGreaterThanOrEqual(total);
    });

    it('parks a record that fails alone every attempt, moves past it, and replays it on request', async () => {
      const id = run();
      const keys = twoTopics(id, 3);
      await versions(keys, 1, 4);
      const victim = keys[0]!.key;
      const group = `poison-${id}`;
      const parked = new ParkedRecordStore(db.pool);
      let fixed = false;
      const handled: Array<{ key: string; seq: number }> = [];
      await consume({
        group,
        topics: CONTRACT_TOPICS,
        handle: async (records) => {
          if (!fixed && records.some((r) => mine(id)(r) && seqOf(r).key === victim && seqOf(r).seq === 2)) throw new Error('Invalid time value');
          handled.push(...records.filter(mine(id)).map(seqOf));
        },
      });
      await eventually(() => handled.length >= keys.length * 4 - 1, 'every other record handled');
      // The victim's later versions went through: its partition did not stall behind it.
      expect(handled.filter((h) => h.key === victim).map((h) => h.seq)).toEqual([1, 3, 4]);
      await eventually(async () => (await bus.lag(group, CONTRACT_TOPICS)).every((p) => p.records === 0), 'no lag');
      const [record, ...others] = await parked.list({ group });
      expect(others).toEqual([]);
      expect(record).toMatchObject({ group, tenantId: TENANT, key: victim, status: 'parked', topic: keys[0]!.topic });
      expect(record!.error).toContain('Invalid time value');
      expect(record!.attempts).toBeGreaterThanOrEqual(3);
      expect((await parked.openCounts()).get(group)).toBe(1);

      fixed = true;
      expect((await parked.requestReplay({ group })).map((r) => r.id)).toEqual([record!.id]);
      await eventually(() => handled.some((h) => h.key === victim && h.seq === 2), 'the replayed record');
      await eventually(async () => (await parked.list({ group }))[0]?.status === 'replayed', 'the record marked replayed');
      expect((await parked.openCounts()).get(group)).toBeUndefined();
    });

    it('retries a transient failure in place and parks nothing', async () => {
      const id = run();
      const keys = twoTopics(id, 2);
      await versions(keys, 1, 3);
      const victim = keys[0]!.key;
      const group = `transient-${id}`;
      let refusals = 0;
      const handled: Array<{ key: string; seq: number }> = [];
      await consume({
        group,
        topics: CONTRACT_TOPICS,
        handle: async (records) => {
          if (refusals < 4 && records.some((r) => mine(id)(r) && seqOf(r).key === victim && seqOf(r).seq === 2)) {
            refusals++;
            throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7687'), { code: 'ECONNREFUSED' });
          }
          handled.push(...records.filter(mine(id)).map(seqOf));
        },
      });
      await eventually(() => handled.length >= keys.length * 3, 'every record handled');
      expect(refusals).toBe(4);
      for (const { key } of keys) expect(handled.filter((h) => h.key === key).map((h) => h.seq)).toEqual([1, 2, 3]);
      expect(await new ParkedRecordStore(db.pool).list({ group })).toEqual([]);
    });
  });
}

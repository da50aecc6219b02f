import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { describeAggregateStoreContract } from './contract.ts';
import type { Activity, AggregateStore, Subject } from './port.ts';
import { PostgresAggregateStore } from './postgres.ts';
import { SnapshotCache, withSnapshotCache } from './snapshot-cache.ts';
import type { SnapshotRequest, SubjectSnapshot } from './snapshot.ts';

// The whole port contract through the cache: every snapshot it answers must be the store's.
describeAggregateStoreContract('PostgreSQL, snapshots cached', async () => {
  const db = await createTestDatabase();
  return { store: new SnapshotCache(new PostgresAggregateStore(db.pool)), tenantId: 'tenant-a', close: () => db.drop() };
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-08-20T12:00:00.000Z');

let movements = 0;
function activity(subject: Subject, at: number, counterparty: string | null, direction: 'in' | 'out' = 'in', base = 100n): Activity {
  return {
    subject,
    movementId: `m-${++movements}`,
    eventId: randomUUID(),
    direction,
    occurredAt: new Date(at),
    amount: { value: base, scale: 2, asset: 'USD' },
    baseValue: base,
    cash: false,
    counterparty,
    counterpartyCountry: null,
    corridor: null,
  };
}

// The store, counting the subjects it is asked to load; beforeLoad (once) records activities just
// before a load, as another process committing between a cache's two reads would.
class CountingStore extends PostgresAggregateStore {
  loaded = 0;
  beforeLoad: Activity[] = [];
  override async snapshots(requests: SnapshotRequest[], cap: number): Promise<SubjectSnapshot[]> {
    this.loaded += requests.length;
    const due = this.beforeLoad.splice(0);
    if (due.length > 0) await this.record(due);
    return super.snapshots(requests, cap);
  }
}

describe('SnapshotCache', () => {
  let db: TestDatabase;
  let store: CountingStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new CountingStore(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });
  const subject = (id: string, tenantId = 'tenant-c'): Subject => ({ tenantId, kind: 'account', id });

  describe("the store's record of what is new", () => {
    it('starts from a cursor alone, then returns exactly what was recorded since, for the tenants asked', async () => {
      const mine = subject('new-a', 'tenant-new');
      const theirs = subject('new-a', 'tenant-other');
      await store.record([activity(mine, T0, null)]);
      const first = await store.recordedSince(['tenant-new'], null);
      expect(first.activities).toEqual([]);
      const added = [activity(mine, T0 - DAY, 'party:X', 'out', 7n), activity(mine, T0 + HOUR, null)];
      await store.record([...added, activity(theirs, T0, null)]);
      const second = await store.recordedSince(['tenant-new'], first.cursor);
      expect(second.activities.map((a) => [a.subject, a.activity.movementId, a.activity.baseValue, a.activity.counterparty]).sort()).toEqual(
        added.map((a) => [mine, a.movementId, a.baseValue, a.counterparty]).sort(),
      );
      expect((await store.recordedSince(['tenant-new'], second.cursor)).activities).toEqual([]);
    });

    it('returns what a transaction still running at the previous read recorded, once it commits', async () => {
      const who = subject('new-late', 'tenant-new');
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN');
        // The transaction has its id before the read starts, and commits after it (a row as the
        // store writes it: record() commits its own transaction).
        await client.query(
          `INSERT INTO agg_activity (tenant_id, subject_kind, subject_id, occurred_at, movement_id, direction, event_id, amount_value, amount_scale, amount_asset, base_value, cash)
           VALUES ($1, $2, $3, $4, 'm-open', 'in', $5, 100, 2, 'USD', 100, false)`,
          [who.tenantId, who.kind, who.id, new Date(T0), randomUUID()],
        );
        const during = await store.recordedSince(['tenant-new'], (await store.recordedSince(['tenant-new'], null)).cursor);
        expect(during.activities).toEqual([]);
        await client.query('COMMIT');
        const after = await store.recordedSince(['tenant-new'], during.cursor);
        expect(after.activities.map((a) => a.subject)).toEqual([who]);
      } finally {
        client.release();
      }
    });
  });

  it('is put in front of a store that can say what it recorded since a read, unless no row may be kept', () => {
    expect(withSnapshotCache(store)).toBeInstanceOf(SnapshotCache);
    expect(withSnapshotCache(store, 0)).toBe(store);
    // The same store, but one that cannot say what it recorded since a read.
    const withoutRecord: AggregateStore = Object.assign(Object.create(store) as AggregateStore, { recordedSince: undefined });
    expect(withSnapshotCache(withoutRecord, 1_000)).toBe(withoutRecord);
  });

  describe('snapshots', () => {
    it("equal the store's own through new activity, late and repeated facts, reloads and eviction", async () => {
      // A small cache, so subjects are dropped and loaded again along the way, and a large one.
      const caches = [new SnapshotCache(store, 60), new SnapshotCache(store)];
      const subjects = ['r1', 'r2', 'r3', 'r4', 'r5'].map((id) => subject(id)).concat([subject('r1', 'tenant-d')]);
      let state = 7;
      const next = (n: number) => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        return state % n;
      };
      const recorded: Activity[] = [];
      let compared = 0;
      for (let round = 0; round < 40; round++) {
        const now = T0 + round * HOUR;
        const batch: Activity[] = [];
        for (let i = next(9); i > 0; i--) {
          // Mostly recent; some late (days back), some older than any range, some repeated.
          const roll = next(10);
          if (roll === 0 && recorded.length > 0) batch.push(recorded[next(recorded.length)]!);
          else {
            const at = roll === 1 ? now - (100 + next(60)) * DAY : roll === 2 ? now - next(20) * DAY : now - next(2 * HOUR);
            const counterparty = next(4) === 0 ? null : `party:C${next(8)}`;
            batch.push(activity(subjects[next(subjects.length)]!, at, counterparty, next(2) === 0 ? 'in' : 'out', BigInt(1 + next(1000))));
          }
        }
        await store.record(batch);
        recorded.push(...batch);
        const requests: SnapshotRequest[] = subjects
          .filter(() => next(3) !== 0)
          .map((who) => {
            // Now plus an hour ahead (as detection asks), sometimes from an earlier instant too,
            // now and then a day long past.
            const at = next(12) === 0 ? new Date(now - 150 * DAY) : new Date(now + HOUR);
            return next(4) === 0 ? { subject: who, at, since: new Date(at.getTime() - (1 + next(30)) * HOUR) } : { subject: who, at };
          });
        const cap = next(10) === 0 ? 5 : 10_000;
        const expected = await store.snapshots(requests, cap);
        for (const cache of caches) expect(await cache.snapshots(requests, cap)).toEqual(expected);
        compared += requests.length;
      }
      expect(compared).toBeGreaterThan(100);
      expect(caches[0]!.held().rows).toBeLessThanOrEqual(60);
      // Most answers came from what was held; some entries were loaded again, some answered by
      // the store alone (past the cap).
      const counts = caches[1]!.counts();
      expect(counts.held).toBeGreaterThan(compared / 2);
      expect(counts.loaded).toBeGreaterThan(6);
      expect(counts.store).toBeGreaterThan(0);
    });

    it('read each activity once: a subject held is not loaded again', async () => {
      const cache = new SnapshotCache(store);
      const who = subject('once');
      const other = subject('once-other');
      await store.record([activity(who, T0 - DAY, 'party:A'), activity(other, T0 - DAY, null)]);
      const before = store.loaded;
      await cache.snapshots([{ subject: who, at: new Date(T0) }, { subject: other, at: new Date(T0) }], 100);
      expect(store.loaded - before).toBe(2);
      await store.record([activity(who, T0 + HOUR, 'party:B', 'out', 5n)]);
      const [later] = await cache.snapshots([{ subject: who, at: new Date(T0 + 2 * HOUR) }], 100);
      expect(store.loaded - before).toBe(2);
      expect(later!.rows.map((r) => r.counterparty)).toEqual(['party:B', 'party:A']);
      expect(later!.counterpartyFirstSeen).toEqual(new Map([['party:A', new Date(T0 - DAY)], ['party:B', new Date(T0 + HOUR)]]));
      // An instant before the entry's range is loaded from the store.
      await cache.snapshots([{ subject: who, at: new Date(T0 - 200 * DAY) }], 100);
      expect(store.loaded - before).toBe(3);
    });

    it('load a subject again when one of its activities is retracted, all-time facts included', async () => {
      const cache = new SnapshotCache(store);
      const who = subject('retracted');
      const first = activity(who, T0 - 200 * DAY, 'party:A');
      const recent = activity(who, T0 - DAY, 'party:A');
      await store.record([first, recent]);
      const [before] = await cache.snapshots([{ subject: who, at: new Date(T0) }], 100);
      expect(before!.firstActivityAt).toEqual(new Date(T0 - 200 * DAY));
      const loaded = store.loaded;
      // The correction of the first activity (outside the range held: only an all-time fact).
      await store.record([], [{ tenantId: who.tenantId, movementId: first.movementId, by: 'a-correction' }]);
      const [after] = await cache.snapshots([{ subject: who, at: new Date(T0) }], 100);
      expect(store.loaded - loaded).toBe(1);
      expect(after).toEqual((await store.snapshots([{ subject: who, at: new Date(T0) }], 100))[0]);
      expect(after!.firstActivityAt).toEqual(new Date(T0 - DAY));
      expect(after!.counterpartyFirstSeen.get('party:A')).toEqual(new Date(T0 - DAY));
    });

    it('answer facts days late from what is held: an entry reaches a week before the ranges asked', async () => {
      const cache = new SnapshotCache(store);
      const who = subject('days-late');
      await store.record([activity(who, T0 - 92 * DAY, 'party:P'), activity(who, T0 - 2 * DAY, 'party:Q'), activity(who, T0 + 3 * DAY, 'party:R', 'out')]);
      const before = store.loaded;
      await cache.snapshots([{ subject: who, at: new Date(T0) }], 100);
      // Later instants, then facts a day and three days late (ranges starting before the first).
      const requests = [T0 + 3 * DAY, T0 + 4 * DAY, T0 + 3 * DAY - HOUR, T0 - DAY, T0].map((at) => ({ subject: who, at: new Date(at) }));
      const answers = [];
      for (const request of requests) answers.push(...(await cache.snapshots([request], 100)));
      expect(store.loaded - before).toBe(1);
      expect(answers).toEqual(await store.snapshots(requests, 100));
    });

    it('hold once an activity committed between the read of what is new and a load', async () => {
      const cache = new SnapshotCache(store);
      const held = subject('between-held');
      const loaded = subject('between-loaded');
      await store.record([activity(held, T0 - DAY, null), activity(loaded, T0 - DAY, null)]);
      await cache.snapshots([{ subject: held, at: new Date(T0) }], 100);
      // Committed after the next call's read of what is new, and before its load of `loaded`:
      // the load sees it, and so does the call after, as new.
      store.beforeLoad = [activity(loaded, T0 - HOUR, 'party:Z')];
      await cache.snapshots([{ subject: held, at: new Date(T0) }, { subject: loaded, at: new Date(T0) }], 100);
      const request = { subject: loaded, at: new Date(T0 + HOUR) };
      const [snapshot] = await cache.snapshots([request], 100);
      expect(snapshot!.rows.map((r) => r.counterparty)).toEqual(['party:Z', null]);
      expect(snapshot).toEqual((await store.snapshots([request], 100))[0]);
    });

    it('take a late fact before the entry into its facts: the latest activity before it, first sightings', async () => {
      const cache = new SnapshotCache(store);
      const who = subject('late-before');
      await store.record([activity(who, T0 - DAY, 'party:K')]);
      await cache.snapshots([{ subject: who, at: new Date(T0) }], 100);
      const before = store.loaded;
      await store.record([activity(who, T0 - 100 * DAY, 'party:K'), activity(who, T0 - 95 * DAY, null)]);
      const request = { subject: who, at: new Date(T0 + HOUR) };
      const [snapshot] = await cache.snapshots([request], 100);
      expect(store.loaded - before).toBe(0);
      expect(snapshot).toMatchObject({ firstActivityAt: new Date(T0 - 100 * DAY), lastActivityAtOrBeforeFrom: new Date(T0 - 95 * DAY) });
      expect(snapshot!.counterpartyFirstSeen).toEqual(new Map([['party:K', new Date(T0 - 100 * DAY)]]));
      expect(snapshot).toEqual((await store.snapshots([request], 100))[0]);
    });

    it('load a subject again when a new counterparty appears and its history reaches before the entry', async () => {
      const cache = new SnapshotCache(store);
      const who = subject('before-entry');
      // Met party:OLD 120 days ago: before any range of an instant near T0.
      await store.record([activity(who, T0 - 120 * DAY, 'party:OLD'), activity(who, T0 - DAY, 'party:NEW')]);
      await cache.snapshots([{ subject: who, at: new Date(T0) }], 100);
      const before = store.loaded;
      await store.record([activity(who, T0 + HOUR, 'party:OLD')]);
      const [snapshot] = await cache.snapshots([{ subject: who, at: new Date(T0 + 2 * HOUR) }], 100);
      expect(store.loaded - before).toBe(1);
      expect(snapshot!.counterpartyFirstSeen.get('party:OLD')).toEqual(new Date(T0 - 120 * DAY));
    });

    it('hold at most maxRows rows, dropping the subjects asked for least recently', async () => {
      const cache = new SnapshotCache(store, 5);
      const [a, b, c] = ['lru-a', 'lru-b', 'lru-c'].map((id) => subject(id));
      for (const who of [a!, b!, c!]) await store.record([activity(who, T0 - HOUR, null), activity(who, T0 - 2 * HOUR, null)]);
      const at = new Date(T0);
      await cache.snapshots([{ subject: a!, at }, { subject: b!, at }], 100);
      await cache.snapshots([{ subject: a!, at }], 100);
      await cache.snapshots([{ subject: c!, at }], 100);
      expect(cache.held()).toEqual({ subjects: 2, rows: 4 });
      const before = store.loaded;
      await cache.snapshots([{ subject: a!, at }, { subject: c!, at }], 100);
      expect(store.loaded - before).toBe(0);
      await cache.snapshots([{ subject: b!, at }], 100);
      expect(store.loaded - before).toBe(1);
    });

    it('read at most maxRows of what is new: past that they let their entries go and load again', async () => {
      const tenant = 'tenant-paused';
      const cache = new SnapshotCache(store, 5);
      const who = subject('paused', tenant);
      await store.record([activity(who, T0 - HOUR, null)]);
      const at = new Date(T0);
      await cache.snapshots([{ subject: who, at }], 100);
      // A pause: others of the tenant record more than the cache could ever hold.
      await store.record(Array.from({ length: 8 }, (_, i) => activity(subject(`paused-other-${i}`, tenant), T0 - HOUR, null)));
      await store.record([activity(who, T0 - 30 * 60_000, 'party:LATE', 'out', 9n)]);
      const read: number[] = [];
      const recordedSince = store.recordedSince.bind(store);
      store.recordedSince = async (tenants, cursor, limit) => {
        const news = await recordedSince(tenants, cursor, limit);
        read.push(news.activities.length);
        return news;
      };
      try {
        const before = store.loaded;
        const [answer] = await cache.snapshots([{ subject: who, at }], 100);
        expect(read).toEqual([5]);
        expect(store.loaded - before).toBe(1);
        expect(answer).toEqual((await store.snapshots([{ subject: who, at }], 100))[0]);
        expect(answer!.rows.map((r) => r.counterparty)).toEqual(['party:LATE', null]);
      } finally {
        store.recordedSince = recordedSince;
      }
    });

    it('leave a subject with more rows than the cap to the store, loading it once per call', async () => {
      const cache = new SnapshotCache(store);
      const who = subject('capped');
      await store.record([1, 2, 3].map((h) => activity(who, T0 - h * HOUR, null)));
      const request = { subject: who, at: new Date(T0) };
      const [first] = await cache.snapshots([request], 2);
      expect(first).toEqual((await store.snapshots([request], 2))[0]);
      expect(first!.complete).toBe(false);
      const before = store.loaded;
      await cache.snapshots([request], 2);
      expect(store.loaded - before).toBe(1);
      expect(cache.held().subjects).toBe(0);
    });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAggregateStoreContract } from './contract.ts';
import { ClickHouseAggregateStore } from './clickhouse.ts';
import { identifier, parseTabSeparated, sql } from './clickhouse-escape.ts';
import { insertSql, type InsertRow } from './clickhouse-sql.ts';
import { clickhouseUrlOr, testClickHouse } from './clickhouse-test-kit.ts';
import type { Activity, Subject } from './port.ts';

// The one contract of the port, unchanged, against the run's ClickHouse (18.16 from Debian's
// package unless CLICKHOUSE_URL names another), in a database of its own dropped at the end.
const url = clickhouseUrlOr('AggregateStore contract: ClickHouse');
if (url) {
  describeAggregateStoreContract('ClickHouse', async () => {
    const server = testClickHouse(url);
    const store = new ClickHouseAggregateStore(server.client, server.database);
    await store.migrate();
    return { store, tenantId: 'tenant-a', close: server.drop };
  });
}

// What the contract cannot show: two rows of one activity in the table (written by two processes
// at the same instant, each finding it absent, before ClickHouse merged their parts) still count
// once in every read.
if (url) {
  describe('ClickHouse aggregate store: rows of one activity written twice', () => {
    let server: ReturnType<typeof testClickHouse>;
    let store: ClickHouseAggregateStore;
    beforeAll(async () => {
      server = testClickHouse(url);
      store = new ClickHouseAggregateStore(server.client, server.database);
      await store.migrate();
    });
    afterAll(async () => {
      await server?.drop();
    });

    it('count once in windows, baselines, history, listings and snapshots before any merge', async () => {
      const at = new Date('2026-08-20T12:00:00.000Z');
      const who: Subject = { tenantId: 'tenant-a', kind: 'account', id: 'twice' };
      const activity = (i: number, direction: 'in' | 'out'): Activity => ({
        subject: who,
        movementId: `mv-${i}`,
        eventId: randomUUID(),
        direction,
        occurredAt: new Date(at.getTime() - (i + 1) * 3_600_000 * 7),
        amount: { value: 10_000n * BigInt(i + 1), scale: 2, asset: 'USD' },
        baseValue: 10_000n * BigInt(i + 1),
        cash: i % 2 === 0,
        counterparty: `party:P${i % 3}`,
        counterpartyCountry: 'GB',
        corridor: 'GB>NG',
      });
      const activities = Array.from({ length: 12 }, (_, i) => activity(i, i % 3 === 0 ? 'out' : 'in'));
      const reads = async () => ({
        windows: await store.windows(who, at, { thresholds: [{ threshold: 100_000n, margin: 50_000n }] }),
        baseline: await store.baseline(who, at),
        history: await store.counterparty(who, 'party:P1'),
        listed: await store.activities(who, new Date(at.getTime() - 90 * 86_400_000), at),
        snapshot: (await store.snapshots([{ subject: who, at }], 1_000))[0],
      });
      expect(await store.record(activities)).toBe(12);
      const once = await reads();
      // Two stores (two processes' worth of locks) writing the same batch at once, then the same
      // rows inserted again behind record()'s back: three more copies of every activity.
      const other = new ClickHouseAggregateStore(server.client, server.database);
      await Promise.all([store.record(activities.slice(0, 6)), other.record(activities.slice(0, 6))]);
      const table = sql`${identifier(server.database)}.agg_activity`;
      for (let copy = 0; copy < 3; copy++) {
        await server.client.command({ query: insertSql(table, activities.map((a) => rowOf(a))).text });
      }
      const stored = parseTabSeparated(
        await (await server.client.query({ query: sql`SELECT count() AS n FROM ${table}`.text, format: 'TabSeparatedWithNames' })).text(),
      );
      expect(Number(stored[0]!.n)).toBeGreaterThanOrEqual(48);
      expect(await reads()).toEqual(once);
      expect(once.listed).toHaveLength(12);
      expect(once.windows.find((w) => w.window === '90d')!.in.count + once.windows.find((w) => w.window === '90d')!.out.count).toBe(12);
    });
  });
}

function rowOf(a: Activity): InsertRow {
  return {
    tenantId: a.subject.tenantId, kind: a.subject.kind, subjectId: a.subject.id, movementId: a.movementId, direction: a.direction,
    occurredMs: a.occurredAt.getTime(), eventId: a.eventId, amountValue: a.amount.value, amountScale: a.amount.scale, amountAsset: a.amount.asset,
    baseValue: a.baseValue, cash: a.cash, counterparty: a.counterparty, country: a.counterpartyCountry, corridor: a.corridor,
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAggregateStore } from '../../platform/aggregates/postgres.ts';
import type { Subject } from '../../platform/aggregates/port.ts';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { accountEvent, movementEvent, partyEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { drain, startTestPipeline, type TestPipeline } from '../../test/support/test-pipeline.ts';
import { AGGREGATES, CANONICAL } from '../groups.ts';
import { startAggregatesPipeline, type AggregatesPipeline } from './pipeline.ts';
import { systemClock } from '../../platform/clock.ts';

// End to end: events through the public API, the canonical pipeline, the change records on the
// log, the aggregates pipeline, and the figures read back from the store.
let api: TestApi;
let run: TestPipeline;
let bus: PostgresLogBus;
let aggregates: AggregatesPipeline;
let store: PostgresAggregateStore;
const errors: unknown[] = [];

const AT = new Date('2026-08-31T12:00:00Z');
const account = (id: string): Subject => ({ tenantId: 'acme', kind: 'account', id });
const party = (id: string): Subject => ({ tenantId: 'acme', kind: 'party', id });

const start = () => startAggregatesPipeline({ bus, store, pool: api.db.pool, clock: systemClock });
const settle = () => drain(bus, errors, [CANONICAL, AGGREGATES]);
const send = async (events: unknown[]) => {
  const res = await api.client.post('/v1/batches', { events }, api.keys.ingest);
  expect(res.json().accepted, res.body).toBe(events.length);
};

function movement(id: string, at: string, money: { value: string; asset?: string }, debit: object, credit: object, changes: Record<string, unknown> = {}) {
  const event = movementEvent(id);
  event.occurred_at = at;
  event.data.amount = { value: money.value, asset: money.asset ?? 'USD', scale: 2 };
  event.data.debit = debit;
  event.data.credit = credit;
  Object.assign(event.data, changes);
  delete event.data.fees;
  return { object: 'movement', event };
}

function accountOf(id: string, owner: string, jurisdiction: string) {
  const event = accountEvent(id, owner);
  event.data.jurisdiction = jurisdiction;
  return { object: 'account', event };
}

// p1 holds a1 and a3 (GB); p2 holds a2 (US). No FX rates are loaded, so EUR is unpriced.
beforeAll(async () => {
  api = await startTestApi();
  run = await startTestPipeline(api);
  bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
  store = new PostgresAggregateStore(api.db.pool);
  aggregates = await start();
  await send([
    { object: 'party', event: partyEvent('p1') },
    { object: 'party', event: partyEvent('p2') },
    accountOf('a1', 'p1', 'GB'),
    accountOf('a2', 'p2', 'US'),
    accountOf('a3', 'p1', 'GB'),
  ]);
  await settle();
  await send([
    movement('m1', '2026-08-31T10:00:00Z', { value: '10000' }, { account_id: 'a1' }, { account_id: 'a2' }),
    movement('m2', '2026-08-31T11:30:00Z', { value: '5000' }, { account_id: 'a2' }, { account_id: 'a1' }),
    movement('m3', '2026-08-25T09:00:00Z', { value: '2000' }, { account_id: 'a1' }, { account_id: 'a3' }, { type: 'internal_transfer' }),
    movement('m4', '2026-08-30T08:00:00Z', { value: '30000' }, { account_id: 'a1' }, { counterparty: { institution: 'Bank Z', instrument_ref: 'iban-9', country: 'NG' } }, { type: 'remittance' }),
    movement('m5', '2026-08-31T11:10:00Z', { value: '100000' }, { account_id: 'a1' }, { account_id: 'a2' }, { status: 'failed' }),
    movement('m6', '2026-08-31T09:00:00Z', { value: '50000' }, {}, { account_id: 'a1' }, { type: 'cash_in' }),
    movement('m7', '2026-08-31T11:45:00Z', { value: '1000', asset: 'EUR' }, { account_id: 'a2' }, { account_id: 'a1' }),
  ]);
  await settle();
});
afterAll(async () => {
  await aggregates?.stop();
  await run?.stop();
  await api?.close();
});

const windowsOf = async (subject: Subject) => Object.fromEntries((await store.windows(subject, AT)).map((s) => [s.window, s]));

describe('the aggregates pipeline', () => {
  it('folds every durable movement into the windows of its accounts and parties', async () => {
    const a1 = await windowsOf(account('a1'));
    // 1h: m2 (50.00 from a2) and m7 (EUR, no rate); m5 failed and never counts.
    expect(a1['1h']!.in).toEqual({ count: 2, sum: 5_000n, unpriced: 1, cashCount: 0, cashSum: 0n });
    expect(a1['1h']!.out.count).toBe(0);
    // 24h: + m6 (cash in 500.00) in, m1 (100.00 to a2) out.
    expect(a1['24h']!.in).toEqual({ count: 3, sum: 55_000n, unpriced: 1, cashCount: 1, cashSum: 50_000n });
    expect(a1['24h']!.out).toEqual({ count: 1, sum: 10_000n, unpriced: 0, cashCount: 0, cashSum: 0n });
    expect(a1['24h']!.distinctCounterparties).toEqual({ in: 1, out: 1, total: 1 });
    expect(a1['24h']!.firstSeenCounterparties).toBe(1);
    // a2's jurisdiction is the other side's country of m1, m2 and m7; m6 came from nowhere known.
    expect(a1['24h']!.countries).toEqual([{ key: 'US', count: 3, sum: 15_000n }]);
    expect(a1['24h']!.corridors).toEqual([
      { key: 'US>GB', count: 2, sum: 5_000n },
      { key: 'GB>US', count: 1, sum: 10_000n },
    ]);
    // 100.00 and 500.00 are round; 50.00 and 10.00 EUR are not.
    expect(a1['24h']!.roundAmounts).toEqual({ count: 2, sum: 60_000n });
    expect(a1['24h']!.lastActivityAt).toEqual(new Date('2026-08-31T11:45:00Z'));
    // 7d: + m3 (to a3, p1's own account) and m4 (to Bank Z) out.
    expect(a1['7d']!.out).toEqual({ count: 3, sum: 42_000n, unpriced: 0, cashCount: 0, cashSum: 0n });
    expect(a1['7d']!.distinctCounterparties).toEqual({ in: 1, out: 3, total: 3 });
    expect(a1['7d']!.firstSeenCounterparties).toBe(3);
    expect(await store.counterparty(account('a1'), 'external:Bank Z/iban-9')).toEqual({
      firstSeenAt: new Date('2026-08-30T08:00:00Z'),
      lastSeenAt: new Date('2026-08-30T08:00:00Z'),
      count: 1,
      sum: 30_000n,
    });

    // p1 sees both of its accounts: m3 is both an out and an in, with no counterparty (a party
    // moving money between its own accounts deals with nobody).
    const p1 = await windowsOf(party('p1'));
    expect(p1['7d']!.in).toEqual({ count: 4, sum: 57_000n, unpriced: 1, cashCount: 1, cashSum: 50_000n });
    expect(p1['7d']!.out).toEqual({ count: 3, sum: 42_000n, unpriced: 0, cashCount: 0, cashSum: 0n });
    expect(p1['7d']!.distinctCounterparties).toEqual({ in: 1, out: 2, total: 2 });
    const p2 = await windowsOf(party('p2'));
    expect(p2['24h']!.out).toEqual({ count: 2, sum: 5_000n, unpriced: 1, cashCount: 0, cashSum: 0n });
    expect(p2['24h']!.in).toEqual({ count: 1, sum: 10_000n, unpriced: 0, cashCount: 0, cashSum: 0n });

    // Aug 25 to 30 (the first active day to the day before at): out [2000, 0, 0, 0, 0, 30000].
    const baseline = await store.baseline(account('a1'), AT);
    expect(baseline).toMatchObject({ days: 6, from: new Date('2026-08-25T00:00:00Z'), to: new Date('2026-08-31T00:00:00Z') });
    expect(baseline.out).toMatchObject({ meanSum: 5_333n, stddevSum: 11_055n });
    expect(baseline.out.meanCount).toBeCloseTo(1 / 3, 9);
    expect(baseline.in).toEqual({ meanSum: 0n, stddevSum: 0n, maxSum: 0n, meanCount: 0, stddevCount: 0 });
  });

  it('folds a movement ingested late into the windows its occurred_at falls in', async () => {
    const before = await windowsOf(account('a1'));
    await send([movement('m8', '2026-08-10T10:00:00Z', { value: '700' }, { account_id: 'a2' }, { account_id: 'a1' })]);
    await settle();
    const after = await windowsOf(account('a1'));
    expect(after['7d']!.in).toEqual(before['7d']!.in);
    expect(after['30d']!.in).toEqual({ count: 4, sum: 55_700n, unpriced: 1, cashCount: 1, cashSum: 50_000n });
    // a2 is now first seen on Aug 10: no longer new in the last 24 hours.
    expect(after['24h']!.firstSeenCounterparties).toBe(0);
    expect(after['30d']!.firstSeenCounterparties).toBe(3);
    // The baseline now starts on Aug 10: 21 days, in [700, 0 × 20], out 32 000 over 21 days.
    const baseline = await store.baseline(account('a1'), AT);
    expect(baseline).toMatchObject({ days: 21, from: new Date('2026-08-10T00:00:00Z') });
    expect(baseline.in).toMatchObject({ meanSum: 33n });
    expect(baseline.out).toMatchObject({ meanSum: 1_524n, stddevSum: 6_382n });
  });

  it('changes nothing when every change record is delivered again', async () => {
    const snapshot = async () => ({
      a1: await store.windows(account('a1'), AT),
      p1: await store.windows(party('p1'), AT),
      p2: await store.windows(party('p2'), AT),
      baseline: await store.baseline(account('a1'), AT),
      rows: (await api.db.pool.query(`SELECT count(*)::int AS n FROM agg_activity WHERE tenant_id = 'acme'`)).rows[0].n,
    });
    const before = await snapshot();
    // m1-m4, m6-m8: 7 movements; a2-a1 and a1-a2 pairs give 4 activities each, m4 and m6 two.
    expect(before.rows).toBe(24);
    await aggregates.stop();
    await api.db.pool.query(`DELETE FROM consumer_offsets WHERE group_name = 'aggregates'`);
    const behind = (await bus.lag(AGGREGATES.group, AGGREGATES.topics)).reduce((n, p) => n + p.records, 0);
    // Every change record is behind again: 8 movements and the 5 entity versions before them.
    expect(behind).toBe(13);
    aggregates = await start();
    await settle();
    expect(await snapshot()).toEqual(before);
    expect(errors).toEqual([]);
  });

  it('takes a corrected movement back out of its subjects, and keeps it out when it comes after its correction', async () => {
    const before = await windowsOf(account('a3'));
    // m9 (a3 to a2, 400.00) is corrected by m9c (40.00); m10c corrects m10, which comes after it.
    await send([movement('m9', '2026-08-31T11:00:00Z', { value: '40000' }, { account_id: 'a3' }, { account_id: 'a2' })]);
    await settle();
    expect((await windowsOf(account('a3')))['24h']!.out).toMatchObject({ count: before['24h']!.out.count + 1, sum: before['24h']!.out.sum + 40_000n });
    await send([
      movement('m9c', '2026-08-31T11:00:00Z', { value: '4000' }, { account_id: 'a3' }, { account_id: 'a2' }, { links: { correction_of: 'm9' }, correction_reason: 'amount' }),
      movement('m10c', '2026-08-31T11:20:00Z', { value: '100' }, { account_id: 'a3' }, { account_id: 'a2' }, { links: { correction_of: 'm10' } }),
    ]);
    await settle();
    await send([movement('m10', '2026-08-31T11:20:00Z', { value: '99900' }, { account_id: 'a3' }, { account_id: 'a2' })]);
    await settle();
    const after = await windowsOf(account('a3'));
    expect(after['24h']!.out).toMatchObject({ count: before['24h']!.out.count + 2, sum: before['24h']!.out.sum + 4_100n });
    const listed = await store.activities(account('a3'), new Date('2026-08-31T10:59:00Z'), AT);
    expect(listed.map((a) => a.movementId)).toEqual(['m10c', 'm9c']);
    expect(errors).toEqual([]);
  });
});

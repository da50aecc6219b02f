// The batch's network searches: cycle searches, scatter-gathers, shared attributes and counterparty
// counts asked by several evaluations in one turn of the event loop are answered by one call of
// the store's `Many` read each, and every ask gets what the store answers for it alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { day, device, graphOf, party } from '../../../platform/graph/contract.ts';
import type { GraphStore } from '../../../platform/graph/port.ts';
import { PostgresGraphStore } from '../../../platform/graph/postgres/store.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { SubjectContext } from './context.ts';
import { GraphLoader } from './graph-loader.ts';

let db: TestDatabase;
let store: PostgresGraphStore;
const g = graphOf('acme');

// The store, counting the calls of each of its methods.
function counting(graph: GraphStore): { graph: GraphStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const counted = new Proxy(graph, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { graph: counted, calls };
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PostgresGraphStore(db.pool);
  await store.apply([
    // Cycles A → B → C → A and A → D → A; B's search sees the first one later.
    g.transfer('c1', 'A', 'B', 1000n, day(2)),
    g.transfer('c2', 'B', 'C', 980n, day(3)),
    g.transfer('c3', 'C', 'A', 1050n, day(4)),
    g.transfer('c4', 'A', 'B', 1000n, day(6)),
    g.transfer('d1', 'A', 'D', 500n, day(5)),
    g.transfer('d2', 'D', 'A', 500n, day(6)),
    // S scatters to I1..I3, who gather into T.
    ...['I1', 'I2', 'I3'].map((i) => g.transfer(`s-${i}`, 'S', i, 100n, day(2))),
    ...['I1', 'I2', 'I3'].map((i) => g.transfer(`g-${i}`, i, 'T', 90n, day(3))),
    g.seen(party('P1'), device('D'), day(2)),
    g.seen(party('P2'), device('D'), day(3)),
  ]);
});
afterAll(async () => db?.drop());

describe('GraphLoader', () => {
  it("answers one turn's cycle searches with one cyclesMany call, each as cycles alone", async () => {
    const { graph, calls } = counting(store);
    const loader = new GraphLoader(graph, 'acme');
    const window = { since: day(1), until: day(30), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10 };
    const asks = [
      { account: 'A', options: window },
      { account: 'B', options: { ...window, until: day(5) } },
      { account: 'B', options: window },
      { account: 'C', options: { ...window, until: day(3, 12) } },
    ];
    const batched = await Promise.all(asks.map((a) => loader.cycles(a.account, a.options)));
    expect(calls.get('cyclesMany')).toBe(1);
    expect(calls.get('cycles')).toBeUndefined();
    expect(batched).toEqual(await Promise.all(asks.map((a) => store.cycles('acme', a.account, a.options))));
    expect(batched.map((found) => found.cycles.map((c) => c.movements.map((m) => m.movementId)))).toEqual([[['c1', 'c2', 'c3'], ['d1', 'd2']], [], [['c2', 'c3', 'c4']], []]);
    // A later turn is another call.
    await loader.cycles('D', window);
    expect(calls.get('cyclesMany')).toBe(2);
  });

  it("answers one turn's scatter-gathers and shared attributes with one call each; a party's shared attributes once per batch", async () => {
    const { graph, calls } = counting(store);
    const loader = new GraphLoader(graph, 'acme');
    const options = { since: day(1), until: day(10), minIntermediaries: 3, limit: 10 };
    const [sg, none, p1, p2, p1again] = await Promise.all([
      loader.scatterGather('S', options),
      loader.scatterGather('T', options),
      loader.sharedAttributes('P1', 10, day(10)),
      loader.sharedAttributes('P2', 10, day(10)),
      loader.sharedAttributes('P1', 10, day(10)),
    ]);
    expect(calls.get('scatterGatherMany')).toBe(1);
    expect(calls.get('sharedAttributesMany')).toBe(1);
    expect(sg).toEqual(await store.scatterGather('acme', 'S', options));
    expect(sg.gathers.map((x) => x.account)).toEqual(['T']);
    expect(none).toEqual({ source: 'T', gathers: [], truncated: false });
    expect(p1).toEqual(await store.sharedAttributes('acme', 'P1', { limit: 10, until: day(10) }));
    expect(p1.shared).toEqual([{ via: device('D'), parties: ['P2'] }]);
    expect(p2.shared).toEqual([{ via: device('D'), parties: ['P1'] }]);
    expect(p1again).toBe(p1);
    expect(await loader.sharedAttributes('P1', 10, day(10))).toBe(p1);
    expect(calls.get('sharedAttributesMany')).toBe(1);
  });

  it('serves SubjectContext.cycles, scatterGather and sharedAttributes: contexts side by side share the calls', async () => {
    const { graph, calls } = counting(store);
    const loader = new GraphLoader(graph, 'acme');
    const stores = { pool: db.pool, graph, aggregates: undefined as never };
    const contexts = ['A', 'B', 'S'].map((id) => new SubjectContext(stores, 'acme', 'USD', { kind: 'account', id }, day(30), null, { graphLoader: loader }));
    const found = await Promise.all(contexts.map((ctx) => ctx.cycles({ since: day(1), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10 })));
    expect(found.map((f) => f.cycles.length)).toEqual([2, 1, 0]);
    const gathers = await Promise.all(contexts.map((ctx) => ctx.scatterGather({ since: day(1), minIntermediaries: 3, limit: 10 })));
    expect(gathers.map((s) => s.gathers.length)).toEqual([0, 0, 1]);
    const parties = ['P1', 'P2'].map((id) => new SubjectContext(stores, 'acme', 'USD', { kind: 'party', id }, day(30), null, { graphLoader: loader }));
    const shared = await Promise.all(parties.map((ctx) => ctx.sharedAttributes()));
    expect(shared.map((s) => s.shared[0]?.parties)).toEqual([['P2'], ['P1']]);
    expect([calls.get('cyclesMany'), calls.get('scatterGatherMany'), calls.get('sharedAttributesMany')]).toEqual([1, 1, 1]);
    expect([calls.get('cycles'), calls.get('scatterGather'), calls.get('sharedAttributes')]).toEqual([undefined, undefined, undefined]);
  });

  it("serves SubjectContext.accountReach: one turn's counts in one counterpartyCounts call, each as asked alone", async () => {
    const { graph, calls } = counting(store);
    const loader = new GraphLoader(graph, 'acme');
    const stores = { pool: db.pool, graph, aggregates: undefined as never };
    const contexts = ['I1', 'I2', 'T'].map((id) => new SubjectContext(stores, 'acme', 'USD', { kind: 'account', id }, day(30), null, { graphLoader: loader }));
    const reaches = await Promise.all([
      contexts[0]!.accountReach('S', 'out', day(1), 5),
      contexts[1]!.accountReach('S', 'out', day(1), 1),
      contexts[2]!.accountReach('T', 'in', day(1), 5),
      contexts[2]!.accountReach('T', 'in', day(2, 12), 5),
      contexts[0]!.accountReach('A', 'in', day(1), 5),
    ]);
    expect(reaches).toEqual([3, 2, 3, 3, 2]);
    expect(calls.get('counterpartyCounts')).toBe(1);
    const alone = new SubjectContext({ ...stores, graph: store }, 'acme', 'USD', { kind: 'account', id: 'I1' }, day(30));
    expect(await alone.accountReach('S', 'out', day(1), 1)).toBe(2);
    expect(await alone.accountReach('S', 'out', day(3), 5)).toBe(0);
  });

  it('fails every ask of a turn when the read fails, and a later ask reads again', async () => {
    let fail = true;
    const flaky = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'sharedAttributesMany' && fail) return () => Promise.reject(new Error('connection lost'));
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
    const loader = new GraphLoader(flaky, 'acme');
    const asks = [loader.sharedAttributes('P1', 10, day(10)), loader.sharedAttributes('P2', 10, day(10))];
    for (const ask of asks) await expect(ask).rejects.toThrow('connection lost');
    fail = false;
    expect((await loader.sharedAttributes('P1', 10, day(10))).shared).toHaveLength(1);
  });
});

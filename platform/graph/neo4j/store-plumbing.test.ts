// The Neo4j adapter's plumbing, without a server: every port method runs against a recording
// driver double that answers each statement with rows shaped as its RETURN clause says. It proves
// what the Cypher parser cannot: the adapter sends only the statements of cypher.ts, with exactly
// their parameters, as values Neo4j stores without loss (integers, never floats or JS Dates), and
// reads the rows back into the port's types (bigint money, Dates) as the port promises. It proves
// nothing about what a real Neo4j answers: store.test.ts runs the contract for that.

import neo4j from 'neo4j-driver';
import { describe, expect, it } from 'vitest';
import { account, day, graphOf, party } from '../contract.ts';
import type { GraphChange } from '../port.ts';
import * as cypher from './cypher.ts';
import { STATEMENTS, type Statement } from './cypher.ts';
import { Neo4jGraphStore } from './store.ts';
import { ReadBudget, isTimeout, toCypher, type Row } from './session.ts';

type Params = Record<string, unknown>;
type Responder = (statement: Statement, params: Params) => Row[];

interface Call {
  statement: Statement;
  params: Params;
  mode: string;
}

// Problems with a parameter value as the driver would pack it.
function unsafe(value: unknown, path: string): string[] {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return [];
  if (typeof value === 'bigint') return value >= -(2n ** 63n) && value < 2n ** 63n ? [] : [`${path}: beyond int64`];
  if (Array.isArray(value)) return value.flatMap((v, i) => unsafe(v, `${path}[${i}]`));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.entries(value).flatMap(([k, v]) => unsafe(v, `${path}.${k}`));
  }
  return [`${path}: ${value instanceof Date ? 'a Date' : typeof value} would not reach Neo4j as an integer or text`];
}

// The columns a statement's last RETURN names.
function returned(statement: Statement): string[] {
  const clause = statement.text.slice(statement.text.lastIndexOf('RETURN ') + 'RETURN '.length).split(/\n(ORDER BY|LIMIT)\b/)[0]!;
  return clause.split(/,(?![^([{]*[)\]}])/).map((item) => {
    const alias = /\bAS (\w+)\s*$/.exec(item.trim());
    return alias ? alias[1]! : item.trim();
  });
}

function fakeDriver(respond: Responder) {
  const calls: Call[] = [];
  const violations: string[] = [];
  const runner = (mode: string) => ({
    run: async (text: string, params: Params) => {
      const statement = STATEMENTS.find((s) => s.text === text);
      if (!statement) {
        violations.push(`not a statement of cypher.ts: ${text.slice(0, 60)}`);
        throw new Error('unknown statement');
      }
      violations.push(...unsafe(params, statement.name));
      calls.push({ statement, params, mode });
      const rows = respond(statement, params);
      const columns = returned(statement);
      for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) violations.push(`${statement.name} returns no column ${key}`);
      return { records: rows.map((row) => ({ toObject: () => row })) };
    },
  });
  const driver = {
    session: ({ defaultAccessMode }: { defaultAccessMode: string }) => ({
      executeWrite: async <T>(work: (tx: unknown) => Promise<T>) => work(runner(`write/${defaultAccessMode}`)),
      executeRead: async <T>(work: (tx: unknown) => Promise<T>) => work(runner(`read/${defaultAccessMode}`)),
      beginTransaction: async () => ({ ...runner(`budget/${defaultAccessMode}`), rollback: async () => undefined }),
      close: async () => undefined,
    }),
  };
  return { store: new Neo4jGraphStore(driver as never, { database: 'neo4j' }), calls, violations, named: (s: Statement) => calls.filter((c) => c.statement === s) };
}

const ms = (d: Date) => BigInt(d.getTime());
// One more than the largest integer a JS number holds exactly: money must survive as bigint.
const BIG = 2n ** 53n + 1n;

// A small network for the reads: P1 holds A1 → A2 (transfers) held by P2.
const stored = [
  { fromKind: 'party', fromKey: 'P1', type: 'holds', toKind: 'account', toKey: 'A1', qualifier: '', validFrom: ms(day(1)), validTo: null, count: 0n, sum: null, unpriced: 0n, firstAt: ms(day(1)), lastAt: ms(day(1)), attrs: '{}' },
  { fromKind: 'account', fromKey: 'A1', type: 'transfer', toKind: 'account', toKey: 'A2', qualifier: '', validFrom: null, validTo: null, count: 2n, sum: BIG, unpriced: 0n, firstAt: ms(day(2)), lastAt: ms(day(3)), attrs: '{}' },
  { fromKind: 'party', fromKey: 'P2', type: 'holds', toKind: 'account', toKey: 'A2', qualifier: '', validFrom: null, validTo: null, count: 0n, sum: null, unpriced: 0n, firstAt: ms(day(1)), lastAt: ms(day(1)), attrs: '{}' },
];
const movements = [
  { movementId: 'c1', src: 'A', dst: 'B', at: ms(day(2)), amount: 1000n },
  { movementId: 'c2', src: 'B', dst: 'A', at: ms(day(3)), amount: 1040n },
  { movementId: 'c3', src: 'B', dst: 'A', at: ms(day(4)), amount: 2000n },
];

const responder: Responder = (statement, p) => {
  switch (statement) {
    case cypher.CLAIM_EVENTS:
      return (p.events as Array<{ tenant: string; eventId: string }>).map((e) => ({ tenant: e.tenant, eventId: e.eventId }));
    case cypher.CLAIM_VERSIONS:
      return p.versions as Array<{ tenant: string; origin: string; sequence: bigint | null }>;
    case cypher.NODE:
      return [{ known: p.key === 'P1', attrs: p.key === 'P1' ? '{"type":"person"}' : null }];
    case cypher.NODE_ATTRS:
      return (p.nodes as Array<{ kind: string; key: string }>).filter((n) => n.key === 'A1').map((n) => ({ ...n, attrs: '{"type":"wallet"}' }));
    case cypher.INCIDENT_EDGES: {
      const on = (kind: string, key: string, list: Array<{ kind: string; key: string }>) => list.some((n) => n.kind === kind && n.key === key);
      const frontier = p.frontier as Array<{ kind: string; key: string }>;
      const within = (p.within as Array<[string, string]> | null)?.map(([kind, key]) => ({ kind, key }));
      return stored
        .filter((e) => (p.types === null || (p.types as string[]).includes(e.type)) && !(p.rebuilt && e.type === 'transfer'))
        .flatMap((e) => [
          on(e.fromKind, e.fromKey, frontier) && (!within || on(e.toKind, e.toKey, within)) ? [e] : [],
          on(e.toKind, e.toKey, frontier) && (!within || on(e.fromKind, e.fromKey, within)) ? [e] : [],
        ].flat());
    }
    case cypher.INCIDENT_TRANSFERS:
      return (p.accounts as string[]).includes('A1') ? [{ src: 'A1', dst: 'A2', count: 1n, sum: 5n, unpriced: 0n, firstAt: ms(day(3)), lastAt: ms(day(3)) }] : [];
    case cypher.RECENT_MOVEMENTS:
      return (p.pairs as Array<{ i: bigint; src: string; dst: string }>).map((pair) => ({ i: pair.i, movementId: `m-${pair.src}`, at: ms(day(3)), amount: BIG }));
    case cypher.CYCLE_STEP:
      return (p.paths as Array<{ i: bigint; node: string; after: bigint; until: bigint; low: bigint | null; high: bigint | null }>).flatMap((u) =>
        movements
          .filter((m) => m.src === u.node && m.at >= u.after && m.at <= u.until && (u.low === null || m.amount >= u.low) && (u.high === null || m.amount <= u.high))
          .map((m) => ({ i: u.i, movementId: m.movementId, src: m.src, dst: m.dst, at: m.at, amount: m.amount })),
      );
    case cypher.FLOW:
      // Integers as the driver gives them without useBigInt (Integer objects) and with it.
      return [
        {
          accounts: neo4j.int(3),
          totalCount: neo4j.int(5),
          totalSum: BIG + 100n,
          counterparties: [
            { account: 'S1', count: neo4j.int(4), sum: BIG, unpriced: 1n, firstAt: ms(day(2)), lastAt: neo4j.int(ms(day(4)).toString()) },
            { account: 'S2', count: 1n, sum: 100n, unpriced: 0n, firstAt: ms(day(5)), lastAt: ms(day(5)) },
          ].slice(0, Number(p.limit)),
        },
      ];
    case cypher.SCATTER_GATHER:
      return (p.requests as Array<{ i: bigint; source: string }>).flatMap((r) =>
        r.source === 'S' ? [{ i: r.i, found: 1n, gathers: [{ account: 'T', intermediaries: ['I1', 'I2', 'I3'], sum: 270n }] }] : [],
      );
    case cypher.SHARED_ATTRIBUTES:
      return (p.requests as Array<{ i: bigint; party: string; limit: bigint }>).map((r) => ({
        i: r.i,
        shared: (r.party === 'P1' ? [{ kind: 'device', key: 'D', parties: ['P2', 'P4'] }, { kind: 'identifier', key: 'X', parties: ['P2'] }] : []).slice(0, Number(r.limit)),
      }));
    case cypher.HOLDINGS:
      return [
        { i: 0n, account: 'A2' },
        { i: 0n, account: 'A1' },
        { i: 1n, account: 'B1' },
      ];
    case cypher.DELETE_TENANT_NODES:
    case cypher.DELETE_TENANT_EVENTS:
    case cypher.DELETE_TENANT_RETRACTIONS:
      return [{ deleted: 0n }];
    default:
      return [];
  }
};

describe('Neo4jGraphStore plumbing (a recording driver double, no server)', () => {
  it('apply sends its changes as integer times and amounts, versions of one entity in rounds, and stops after the claim when nothing is fresh', async () => {
    const fake = fakeDriver(responder);
    const g = graphOf('t1');
    const batch: GraphChange[] = [
      g.account('A1', 'P1', day(2), { validFrom: day(1) }),
      g.account('A1', 'P2', day(10), { validFrom: day(10) }),
      g.relationship('R1', 'beneficial_owner', party('P1'), party('P2'), day(1), { attrs: { ownership_pct: 25 } }),
      g.transfer('m1', 'A1', 'A2', BIG, day(3)),
      g.transfer('m2', 'A1', 'A2', null, day(4)),
      g.seen(party('P1'), { kind: 'device', key: 'D1' }, day(5)),
    ];
    await fake.store.apply(batch);
    expect(fake.violations).toEqual([]);
    expect(fake.calls.map((c) => c.statement.name)).toEqual([
      'claim-events',
      'claim-versions', 'upsert-nodes', 'close-undeclared', 'upsert-declared',
      'claim-versions', 'upsert-nodes', 'close-undeclared', 'upsert-declared',
      'add-transfers',
      'add-observed',
    ]);
    expect(fake.calls.every((c) => c.mode === 'write/WRITE')).toBe(true);
    const [claim] = fake.named(cypher.CLAIM_EVENTS);
    expect((claim!.params.events as unknown[]).length).toBe(6);
    // Each round claims its versions, sequences as integers.
    expect(fake.named(cypher.CLAIM_VERSIONS).map((c) => c.params.versions)).toEqual([
      [{ tenant: 't1', origin: 'account:A1', sequence: 1n }, { tenant: 't1', origin: 'relationship:R1', sequence: 1n }],
      [{ tenant: 't1', origin: 'account:A1', sequence: 2n }],
    ]);
    // Round two closes what A1's first version declared and its holder is now P2.
    const closes = fake.named(cypher.CLOSE_UNDECLARED);
    expect(closes[1]!.params.entities).toEqual([{ tenant: 't1', origin: 'account:A1', at: ms(day(10)), keep: ['holds\u001fparty\u001fP2\u001faccount\u001fA1\u001f'] }]);
    const declared = fake.named(cypher.UPSERT_DECLARED);
    expect(declared[0]!.params.edges).toContainEqual(
      expect.objectContaining({ identity: 'beneficial_owner\u001fparty\u001fP1\u001fparty\u001fP2\u001fR1', qualifier: 'R1', attrs: '{"ownership_pct":25}', validFrom: null, at: ms(day(1)) }),
    );
    expect(declared[0]!.params.edges).toContainEqual(expect.objectContaining({ fromKey: 'P1', toKey: 'A1', validFrom: ms(day(1)), origin: 'account:A1' }));
    const [transfers] = fake.named(cypher.ADD_TRANSFERS);
    expect(transfers!.params.movements).toEqual([
      expect.objectContaining({ movementId: 'm1', src: 'A1', dst: 'A2', at: ms(day(3)), amount: BIG, identity: 'transfer\u001faccount\u001fA1\u001faccount\u001fA2\u001f' }),
      expect.objectContaining({ movementId: 'm2', amount: null }),
    ]);

    // Redelivered: the claim finds every event applied before, and nothing else runs.
    const again = fakeDriver((s, p) => (s === cypher.CLAIM_EVENTS ? [] : responder(s, p)));
    await again.store.apply(batch);
    expect(again.calls.map((c) => c.statement.name)).toEqual(['claim-events']);
  });

  it('refuses an amount a Neo4j integer cannot hold instead of losing it', async () => {
    const fake = fakeDriver(responder);
    const g = graphOf('t1');
    await expect(fake.store.apply([g.transfer('m1', 'A1', 'A2', 2n ** 63n, day(3))])).rejects.toThrow(/64-bit/);
  });

  it('node reads attributes as JSON and unknown nodes as null', async () => {
    const fake = fakeDriver(responder);
    expect(await fake.store.node('t1', party('P1'))).toEqual({ kind: 'party', key: 'P1', attrs: { type: 'person' } });
    expect(await fake.store.node('t1', party('P9'))).toBeNull();
    expect(fake.violations).toEqual([]);
  });

  it('egoNetwork reads edges, attributes and recent movements with exact money and Dates', async () => {
    const fake = fakeDriver(responder);
    const net = await fake.store.egoNetwork('t1', party('P1'), { depth: 3, nodeCap: 10 });
    expect(fake.violations).toEqual([]);
    expect(net.nodes.map((n) => `${n.kind}:${n.key}`)).toEqual(['account:A1', 'account:A2', 'party:P1', 'party:P2']);
    expect(net.nodes.find((n) => n.key === 'A1')!.attrs).toEqual({ type: 'wallet' });
    const transfer = net.edges.find((e) => e.type === 'transfer')!;
    expect(transfer).toMatchObject({ id: 'transfer:account:A1>account:A2', count: 2, sum: BIG, unpriced: 0, firstAt: day(2), lastAt: day(3), validFrom: null, attrs: {} });
    expect(transfer.recent).toEqual([{ movementId: 'm-A1', from: 'A1', to: 'A2', occurredAt: day(3), amount: BIG }]);
    expect(net.edges.find((e) => e.id === 'holds:party:P1>account:A1')).toMatchObject({ validFrom: day(1), validTo: null, sum: null });
    expect(net.truncated).toBe(false);
    // Every read of one answer ran in the one budgeted transaction.
    expect(new Set(fake.calls.map((c) => c.mode))).toEqual(new Set(['budget/READ']));
    // Three levels and the last level's edges among the kept nodes.
    expect(fake.named(cypher.INCIDENT_EDGES).map((c) => c.params.within === null)).toEqual([true, true, true, false]);
  });

  it('a window rebuilds transfer edges from movements (times and minimum as integers)', async () => {
    const fake = fakeDriver(responder);
    const net = await fake.store.egoNetwork('t1', account('A1'), { depth: 1, nodeCap: 10, filter: { since: day(3), until: day(4), minAmount: 5n } });
    expect(fake.violations).toEqual([]);
    expect(fake.named(cypher.INCIDENT_EDGES)[0]!.params).toMatchObject({ rebuilt: true, since: ms(day(3)), until: ms(day(4)) });
    expect(fake.named(cypher.INCIDENT_TRANSFERS)[0]!.params).toMatchObject({ accounts: ['A1'], minAmount: 5n, within: null });
    expect(net.edges.find((e) => e.type === 'transfer')).toMatchObject({ count: 1, sum: 5n, firstAt: day(3) });
    expect(fake.named(cypher.RECENT_MOVEMENTS)[0]!.params).toMatchObject({ recent: 10n, minAmount: 5n });
  });

  it('shortestPaths and component run on the same statements', async () => {
    const fake = fakeDriver(responder);
    const found = await fake.store.shortestPaths('t1', party('P1'), party('P2'), { maxDepth: 4, limit: 5 });
    expect(found.paths).toEqual([
      {
        nodes: [party('P1'), account('A1'), account('A2'), party('P2')],
        edges: ['holds:party:P1>account:A1', 'transfer:account:A1>account:A2', 'holds:party:P2>account:A2'],
      },
    ]);
    const component = await fake.store.component('t1', party('P1'), { nodeCap: 3 });
    expect(component).toMatchObject({ truncated: true });
    expect(component.nodes).toHaveLength(3);
    expect(fake.violations).toEqual([]);
  });

  it('cycles pass the tolerance bounds as integers and read movements back', async () => {
    const fake = fakeDriver(responder);
    const found = await fake.store.cycles('t1', 'A', { since: day(1), until: day(30), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10 });
    expect(fake.violations).toEqual([]);
    expect(found).toEqual({
      cycles: [
        {
          movements: [
            { movementId: 'c1', from: 'A', to: 'B', occurredAt: day(2), amount: 1000n },
            { movementId: 'c2', from: 'B', to: 'A', occurredAt: day(3), amount: 1040n },
          ],
        },
      ],
      truncated: false,
    });
    expect(fake.named(cypher.CYCLE_STEP)[1]!.params.paths).toEqual([{ i: 0n, node: 'B', after: ms(day(2)), until: ms(day(30)), low: 900n, high: 1100n }]);
  });

  it('fanIn, fanOut, gatherScatter and scatterGather read totals exactly (Integer objects or bigints)', async () => {
    const fake = fakeDriver(responder);
    const window = { since: day(1), until: day(10), limit: 1 };
    const fanIn = await fake.store.fanIn('t1', 'X', window);
    expect(fanIn).toEqual({
      account: 'X',
      counterparties: [{ account: 'S1', count: 4, sum: BIG, unpriced: 1, firstAt: day(2), lastAt: day(4) }],
      count: 5,
      sum: BIG + 100n,
      truncated: true,
    });
    expect(fake.named(cypher.FLOW)[0]!.params).toEqual({ tenant: 't1', account: 'X', inbound: true, since: ms(day(1)), until: ms(day(10)), limit: 1n });
    expect((await fake.store.fanOut('t1', 'X', { ...window, limit: 10 })).truncated).toBe(true);
    expect(fake.named(cypher.FLOW)[1]!.params).toMatchObject({ account: 'X', inbound: false, limit: 10n });
    expect(await fake.store.gatherScatter('t1', 'X', window)).toMatchObject({ hub: 'X', inSum: BIG + 100n, outSum: BIG + 100n, truncated: true });
    expect(await fake.store.scatterGather('t1', 'S', { since: day(1), until: day(10), minIntermediaries: 3, limit: 10 })).toEqual({
      source: 'S',
      gathers: [{ account: 'T', intermediaries: ['I1', 'I2', 'I3'], sum: 270n }],
      truncated: false,
    });
    expect(fake.violations).toEqual([]);
  });

  it('sharedAttributes asks one more than the limit; holdings sorts each list', async () => {
    const fake = fakeDriver(responder);
    expect(await fake.store.sharedAttributes('t1', 'P1', { limit: 1, until: day(4) })).toEqual({ shared: [{ via: { kind: 'device', key: 'D' }, parties: ['P2', 'P4'] }], truncated: true });
    expect(fake.named(cypher.SHARED_ATTRIBUTES)[0]!.params.requests).toEqual([{ i: 0n, party: 'P1', limit: 2n, until: ms(day(4)) }]);
    expect(await fake.store.holdings('t1', [{ party: 'P1', until: day(4) }, { party: 'P2', until: day(4) }, { party: 'P9', until: day(4) }], 10)).toEqual([['A1', 'A2'], ['B1'], []]);
    expect(fake.named(cypher.HOLDINGS)[0]!.params.requests).toEqual([
      { i: 0n, party: 'P1', until: ms(day(4)) },
      { i: 1n, party: 'P2', until: ms(day(4)) },
      { i: 2n, party: 'P9', until: ms(day(4)) },
    ]);
    expect(fake.violations).toEqual([]);
  });

  it('migrate applies every schema statement, then waits for the indexes; deleteTenant deletes in batches', async () => {
    const fake = fakeDriver(responder);
    await fake.store.migrate();
    expect(fake.calls.map((c) => c.statement)).toEqual([...cypher.SCHEMA, cypher.AWAIT_INDEXES]);
    await fake.store.deleteTenant('t1');
    expect(fake.calls.slice(-4).map((c) => c.statement)).toEqual([
      cypher.DELETE_TENANT_NODES,
      cypher.DELETE_TENANT_EVENTS,
      cypher.DELETE_TENANT_RETRACTIONS,
      cypher.DELETE_TENANT_VERSIONS,
    ]);
    expect(fake.violations).toEqual([]);
  });

  // What Neo4j 5.26 answered one of four processes migrating a new database at once.
  it('migrate runs a schema statement again when another process created the same rule meanwhile, and lets other errors through', async () => {
    const [first] = cypher.SCHEMA;
    const failing = (code: string) => {
      let failed = false;
      return fakeDriver((statement, params) => {
        if (statement === first && !failed) {
          failed = true;
          throw Object.assign(new Error('An equivalent constraint already exists'), { code });
        }
        return responder(statement, params);
      });
    };
    const raced = failing('Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists');
    await raced.store.migrate();
    expect(raced.calls.map((c) => c.statement)).toEqual([first, ...cypher.SCHEMA, cypher.AWAIT_INDEXES]);
    await expect(failing('Neo.ClientError.Schema.ConstraintValidationFailed').store.migrate()).rejects.toThrow(/equivalent constraint/);
  });
});

describe('the driver double itself', () => {
  it("knows each statement's columns and flags values Neo4j would not store as integers", () => {
    expect(returned(cypher.FLOW)).toEqual(['accounts', 'totalCount', 'totalSum', 'counterparties']);
    expect(returned(cypher.INCIDENT_TRANSFERS)).toEqual(['src', 'dst', 'count', 'sum', 'unpriced', 'firstAt', 'lastAt']);
    expect(returned(cypher.HOLDINGS)).toEqual(['i', 'account']);
    expect(returned(cypher.SHARED_ATTRIBUTES)).toEqual(['i', 'shared']);
    expect(unsafe({ a: 1, b: [new Date()], c: undefined, d: 1n, e: null }, 'p')).toEqual([
      'p.a: number would not reach Neo4j as an integer or text',
      'p.b[0]: a Date would not reach Neo4j as an integer or text',
      'p.c: undefined would not reach Neo4j as an integer or text',
    ]);
  });

  it('records a row column the statement does not return', async () => {
    const fake = fakeDriver((s, p) => (s === cypher.NODE ? [{ known: true, attrs: null, label: 'x' }] : responder(s, p)));
    await fake.store.node('t1', party('P1'));
    expect(fake.violations).toEqual(['node returns no column label']);
  });
});

describe('the Neo4j read budget', () => {
  const timedOut = Object.assign(new Error('The transaction has been terminated'), { code: 'Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration' });

  it('turns a transaction ended by its timeout into "no rows, budget spent", and runs nothing after it', async () => {
    let runs = 0;
    const budget = new ReadBudget({ run: (async () => { runs++; throw timedOut; }) as never }, performance.now() + 60_000);
    expect(await budget.run(cypher.NODE, { tenant: 't', kind: 'party', key: 'P' })).toBeUndefined();
    expect(budget.exhausted).toBe(true);
    expect(await budget.run(cypher.NODE, { tenant: 't', kind: 'party', key: 'P' })).toBeUndefined();
    expect(runs).toBe(1);
  });

  it('runs nothing once the deadline has passed', async () => {
    let runs = 0;
    const budget = new ReadBudget({ run: (async () => { runs++; return { records: [] }; }) as never }, performance.now() - 1);
    expect(await budget.run(cypher.NODE, { tenant: 't', kind: 'party', key: 'P' })).toBeUndefined();
    expect(runs).toBe(0);
  });

  it('lets any other error through', async () => {
    const failure = Object.assign(new Error('syntax'), { code: 'Neo.ClientError.Statement.SyntaxError' });
    const budget = new ReadBudget({ run: (async () => { throw failure; }) as never }, performance.now() + 60_000);
    await expect(budget.run(cypher.NODE, { tenant: 't', kind: 'party', key: 'P' })).rejects.toBe(failure);
    expect(isTimeout(failure)).toBe(false);
    expect(isTimeout({ code: 'Neo.ClientError.Transaction.TransactionTimedOut' })).toBe(true);
  });

  it('an egoNetwork whose budget runs out answers what it has, truncated', async () => {
    const fake = fakeDriver((s, p) => {
      if (s === cypher.INCIDENT_EDGES && (p.frontier as unknown[]).length > 0 && (p.frontier as Array<{ key: string }>)[0]!.key !== 'P1') throw timedOut;
      return responder(s, p);
    });
    const net = await fake.store.egoNetwork('t1', party('P1'), { depth: 3, nodeCap: 10 });
    expect(net.truncated).toBe(true);
    expect(net.nodes.map((n) => n.key)).toEqual(['A1', 'P1']);
    // Nothing ran after the timeout (not even the attributes or the recent movements).
    expect(fake.calls.at(-1)!.statement).toBe(cypher.INCIDENT_EDGES);
  });
});

describe('toCypher', () => {
  it('sends integers as Neo4j integers and times as epoch milliseconds; refuses floats and overflows', () => {
    expect(toCypher({ a: 1, b: [day(1), null, undefined], c: { d: 2n, e: 'x', f: true } })).toEqual({ a: 1n, b: [ms(day(1)), null, null], c: { d: 2n, e: 'x', f: true } });
    expect(() => toCypher({ amount: 1.5 })).toThrow(/value.amount: 1.5 is not an integer/);
    expect(() => toCypher(2n ** 63n)).toThrow(/64-bit/);
    expect(toCypher(-(2n ** 63n))).toBe(-(2n ** 63n));
    expect(() => toCypher(new Date(Number.NaN))).toThrow(/invalid date/);
    expect(() => toCypher(new Map())).toThrow(/not a plain object/);
  });
});

// Both adapters, one graph, every read compared: the PostgreSQL GraphStore (the reference, on the
// run's PostgreSQL) and the Neo4j one (on the run's Neo4j, see store.test.ts) are given the same
// changes, then asked the same questions, and must answer exactly alike: the nodes and every field
// of every edge, in the same order (what GET /v1/graph/parties/{id}/network renders as it is),
// paths, cycles, flows. The contract checks each engine against hand-computed answers on small
// graphs; this checks the two against each other over many more combinations of centre, depth,
// window, edge types and caps. Keys are upper-case ASCII: tie-breaks are by code point in Neo4j
// and by the database's collation in PostgreSQL (the test server's is C; another may differ).

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { account, day, device, graphOf, identifier, party } from '../contract.ts';
import type { EdgeFilter, GraphStore, NodeRef } from '../port.ts';
import { PostgresGraphStore } from '../postgres/store.ts';
import { Neo4jGraphStore } from './store.ts';

const uri = inject('neo4jUri');
const tenant = `neo4j-diff-${randomUUID()}`;

// Parties with identifiers (one dropped by a later version), accounts held from a date and one
// changing holder, a relationship with validity and attributes, transfers both ways with an
// unpriced one and one to an account never declared, devices seen more than once, an identifier
// also observed: applied batch by batch, in the same order, to both stores.
function changes() {
  const g = graphOf(tenant);
  return [
    [g.party('P1', day(1), { type: 'person', status: 'active', name: 'Ä ü' }, ['X', 'Y']), g.party('P2', day(1), { type: 'company', n: 1.5, nested: { a: [1, 'b'] } }, ['X'])],
    [g.account('A1', 'P1', day(1), { validFrom: day(1) }), g.account('A2', 'P2', day(1)), g.account('A3', 'P1', day(2), { validFrom: day(2), validTo: day(20) })],
    [g.relationship('R1', 'beneficial_owner', party('P3'), party('P1'), day(1), { validFrom: day(1), validTo: day(20), attrs: { ownership_pct: 25 } })],
    [
      g.transfer('m1', 'A1', 'A2', 100n, day(2)),
      g.transfer('m2', 'A1', 'A2', null, day(3)),
      g.transfer('m3', 'A2', 'A1', 40n, day(4)),
      g.transfer('m4', 'A3', 'A2', 7n, day(5)),
      g.transfer('m5', 'A2', 'A9', 50n, day(6)),
      g.transfer('m6', 'A9', 'A1', 45n, day(7)),
    ],
    [g.seen(party('P1'), device('D'), day(2)), g.seen(party('P1'), device('D'), day(5)), g.seen(party('P2'), device('D'), day(3), 'uses'), g.seen(party('P1'), identifier('X'), day(7))],
    [g.party('P1', day(10), { type: 'person', status: 'closed' }, ['X'])],
    [g.account('A1', 'P2', day(12), { validFrom: day(12) })],
  ];
}

type Question = [string, (store: GraphStore) => Promise<unknown>];

function questions(): Question[] {
  const asked: Question[] = [];
  const centres: NodeRef[] = [party('P1'), party('P2'), party('P3'), account('A2'), identifier('X'), device('D')];
  const filters: Array<EdgeFilter | undefined> = [
    undefined,
    { since: day(4), until: day(11) },
    { until: day(3) },
    { since: day(13) },
    { minAmount: 40n },
    { types: ['holds', 'transfer'] },
    { types: ['shares', 'uses'] },
  ];
  for (const centre of centres) {
    for (const depth of [1, 2, 3]) {
      for (const filter of filters) {
        for (const nodeCap of [3, 50]) {
          const options = { depth, nodeCap, ...(filter ? { filter } : {}) };
          asked.push([`egoNetwork ${centre.kind}:${centre.key} ${describeOptions(options)}`, (s) => s.egoNetwork(tenant, centre, options)]);
        }
      }
    }
  }
  const window = { since: day(1), until: day(30) };
  asked.push(
    ['component', (s) => s.component(tenant, party('P1'), { nodeCap: 50 })],
    ['reach', (s) => s.reach(tenant, party('P1'), { depth: 4, nodeCap: 5 })],
    ['shortestPaths P1 → P2', (s) => s.shortestPaths(tenant, party('P1'), party('P2'), { maxDepth: 6, limit: 10 })],
    ['shortestPaths P3 → A9', (s) => s.shortestPaths(tenant, party('P3'), account('A9'), { maxDepth: 6, limit: 10 })],
    ['shortestPaths P3 → A9, limit 1', (s) => s.shortestPaths(tenant, party('P3'), account('A9'), { maxDepth: 6, limit: 1 })],
    ['node', (s) => Promise.all(['P1', 'P2', 'P3', 'P9'].map((key) => s.node(tenant, party(key))))],
    ['cycles', (s) => s.cycles(tenant, 'A1', { ...window, minLength: 2, maxLength: 4, tolerance: 0.9, limit: 10 })],
    ['fanIn', (s) => s.fanIn(tenant, 'A2', { ...window, limit: 10 })],
    ['fanOut', (s) => s.fanOut(tenant, 'A2', { ...window, limit: 1 })],
    ['gatherScatter', (s) => s.gatherScatter(tenant, 'A2', { ...window, limit: 10 })],
    ['scatterGather', (s) => s.scatterGather(tenant, 'A1', { ...window, minIntermediaries: 1, limit: 10 })],
    ['sharedAttributes', (s) => s.sharedAttributes(tenant, 'P1', { limit: 10, until: day(30) })],
    ['holdings', (s) => s.holdings(tenant, [{ party: 'P1', until: day(30) }, { party: 'P2', until: day(30) }, { party: 'P1', until: day(5) }], 10)],
  );
  return asked;
}

function describeOptions(options: object): string {
  return JSON.stringify(options, (_, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value));
}

describe.skipIf(!uri)('PostgreSQL and Neo4j answer alike', () => {
  let db: TestDatabase;
  let postgres: GraphStore;
  let neo4j: Neo4jGraphStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    // Answers, not budgets, are compared: a read cut short on a busy machine would differ.
    const options = { readBudgetMs: 60_000 };
    postgres = new PostgresGraphStore(db.pool, options);
    neo4j = Neo4jGraphStore.connect({ uri, user: inject('neo4jUser'), password: inject('neo4jPassword'), database: inject('neo4jDatabase') }, options);
    await neo4j.migrate();
    for (const batch of changes()) {
      await postgres.apply(batch);
      await neo4j.apply(batch);
    }
  });
  afterAll(async () => {
    await neo4j?.deleteTenant(tenant);
    await neo4j?.close();
    await db?.drop();
  });

  it('for every question, every field, in the same order', async () => {
    const asked = questions();
    const differing: string[] = [];
    for (const [name, ask] of asked) {
      const reference = await ask(postgres);
      const answer = await ask(neo4j);
      // toStrictEqual: key order aside, the same values, nulls and absent fields alike.
      try {
        expect(answer).toStrictEqual(reference);
      } catch {
        differing.push(`${name}\n  PostgreSQL: ${describeOptions(reference as object)}\n  Neo4j:      ${describeOptions(answer as object)}`);
      }
    }
    expect(asked.length).toBeGreaterThan(250);
    expect(differing.slice(0, 3).join('\n')).toBe('');
  }, 300_000);
});

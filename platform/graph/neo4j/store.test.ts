// The GraphStore contract on a real Neo4j 5: runs only when the test set-up was given one
// (NEO4J_URI, with NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE; `npm run test:engines`). No Neo4j
// can run on this machine, so here the suite is skipped and says why: the adapter's statements are
// checked by Neo4j's parser (cypher.test.ts) and its plumbing by a driver double
// (store-plumbing.test.ts), never executed against a server.
//
// Isolation: the contract gives every test a tenant of its own (`t-<uuid>`), the tests below use
// `neo4j-test-<uuid>` tenants; every tenant a run wrote to is deleted when the run ends.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { account, day, describeGraphStoreContract, graphOf } from '../contract.ts';
import type { GraphChange, GraphStore } from '../port.ts';
import { Neo4jGraphStore } from './store.ts';

const uri = inject('neo4jUri');
const skipReason = uri ? '' : ' (skipped: no Neo4j reachable; set NEO4J_URI to run it)';

function connect(options: { readBudgetMs?: number } = {}): Neo4jGraphStore {
  return Neo4jGraphStore.connect(
    { uri, user: process.env.NEO4J_USER ?? 'neo4j', password: process.env.NEO4J_PASSWORD ?? '', database: process.env.NEO4J_DATABASE ?? 'neo4j' },
    options,
  );
}

// A store that remembers every tenant written to, to delete them all at the end.
function recording(store: Neo4jGraphStore): { store: GraphStore; tenants: Set<string> } {
  const tenants = new Set<string>();
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'apply') {
        return (changes: GraphChange[]) => {
          for (const change of changes) tenants.add(change.tenantId);
          return target.apply(changes);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, tenants };
}

describe.skipIf(!uri)(`Neo4jGraphStore on a Neo4j server${skipReason}`, () => {
  describeGraphStoreContract('Neo4j', async () => {
    const neo4j = connect();
    await neo4j.migrate();
    const { store, tenants } = recording(neo4j);
    return {
      store,
      close: async () => {
        for (const tenant of tenants) await neo4j.deleteTenant(tenant);
        await neo4j.close();
      },
    };
  });

  describe('Neo4j specifics', () => {
    let neo4j: Neo4jGraphStore;
    const tenants: string[] = [];
    const tenant = () => {
      const t = `neo4j-test-${randomUUID()}`;
      tenants.push(t);
      return t;
    };
    beforeAll(async () => {
      neo4j = connect();
      await neo4j.migrate();
    });
    afterAll(async () => {
      for (const t of tenants) await neo4j?.deleteTenant(t);
      await neo4j?.close();
    });

    it('migrate is idempotent', async () => {
      await neo4j.migrate();
      await neo4j.migrate();
    });

    it('keeps money beyond 2^53 exact, and refuses an amount beyond a 64-bit integer', async () => {
      const g = graphOf(tenant());
      const big = 2n ** 62n + 1n;
      await neo4j.apply([g.transfer('m1', 'A', 'B', big, day(1)), g.transfer('m2', 'A', 'B', 3n, day(2))]);
      const fanOut = await neo4j.fanOut(g.tenantId, 'A', { since: day(1), until: day(3), limit: 10 });
      expect(fanOut).toMatchObject({ count: 2, sum: big + 3n });
      const net = await neo4j.egoNetwork(g.tenantId, account('A'), { depth: 1, nodeCap: 10 });
      expect(net.edges[0]).toMatchObject({ sum: big + 3n, count: 2 });
      expect(net.edges[0]!.recent?.map((m) => m.amount)).toEqual([3n, big]);
      await expect(neo4j.apply([g.transfer('m3', 'A', 'B', 2n ** 63n, day(3))])).rejects.toThrow(/64-bit/);
    });

    it('two writers applying the same batch at once count it once', async () => {
      const g = graphOf(tenant());
      const batch = Array.from({ length: 50 }, (_, i) => g.transfer(`m${i}`, 'A', 'B', 10n, day(1)));
      const other = connect();
      try {
        await Promise.all([neo4j.apply(batch), other.apply(batch)]);
      } finally {
        await other.close();
      }
      expect(await neo4j.fanOut(g.tenantId, 'A', { since: day(1), until: day(2), limit: 10 })).toMatchObject({ count: 50, sum: 500n });
    });

    it('on a dense graph, a 1 ms budget answers egoNetwork and cycles partially instead of failing', async () => {
      const g = graphOf(tenant());
      await neo4j.apply(
        Array.from({ length: 3000 }, (_, i) => [g.transfer(`out${i}`, 'HUB', `C${i}`, 100n, day(2)), g.transfer(`in${i}`, `C${i}`, 'HUB', 100n, day(3))]).flat(),
      );
      const ample = connect({ readBudgetMs: 120_000 });
      const starved = connect({ readBudgetMs: 1 });
      try {
        const full = await ample.egoNetwork(g.tenantId, account('HUB'), { depth: 2, nodeCap: 10_000 });
        expect(full).toMatchObject({ truncated: false });
        expect(full.nodes).toHaveLength(3001);
        const ego = await starved.egoNetwork(g.tenantId, account('HUB'), { depth: 2, nodeCap: 10_000 });
        expect(ego.truncated).toBe(true);
        const cycles = await starved.cycles(g.tenantId, 'HUB', { since: day(1), until: day(10), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10_000 });
        expect(cycles.truncated).toBe(true);
      } finally {
        await ample.close();
        await starved.close();
      }
    }, 120_000);
  });
});

// The GraphStore contract on a real Neo4j 5: the test set-up starts Neo4j 5.26 community for the
// run (platform/local-engines/neo4j.ts, from Maven Central's jars), or is pointed at a server with
// NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE; `npm run test:engines`). When
// neither can be had (no Java or Maven on the machine) the suite is skipped and says why.
//
// Isolation: the contract gives every test a tenant of its own (`t-<uuid>`), the tests below use
// `neo4j-test-<uuid>` tenants; every tenant a run wrote to is deleted when the run ends.

import { randomUUID } from 'node:crypto';
import neo4jDriver from 'neo4j-driver';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { account, day, describeGraphStoreContract, graphOf } from '../contract.ts';
import type { GraphChange, GraphStore } from '../port.ts';
import type { TransferChange } from '../shared/access.ts';
import { Neo4jGraphStore } from './store.ts';
import { neo4jWrites } from './writes.ts';

const uri = inject('neo4jUri');
const skipReason = uri ? '' : ' (skipped: no Neo4j could be started, see the set-up\'s "engines:" lines; or set NEO4J_URI)';

// An ample read budget unless a test is about the budget: the answers are what these tests judge,
// and on a loaded 2-core machine a read of a cold server can spend the 2 s default and answer
// part (as it should), which would read here as a wrong answer. The budget has its own test.
function connect(options: { readBudgetMs?: number } = { readBudgetMs: 60_000 }): Neo4jGraphStore {
  return Neo4jGraphStore.connect({ uri, user: inject('neo4jUser'), password: inject('neo4jPassword'), database: inject('neo4jDatabase') }, options);
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

    // PostgreSQL's numeric(38,0) holds such sums; Neo4j's integers do not. Cypher's sum() would
    // answer a rounded float there without a word: the adapter fails instead.
    it('refuses, rather than rounds, a sum beyond a 64-bit integer', async () => {
      const g = graphOf(tenant());
      const half = 2n ** 62n;
      await expect(neo4j.apply([g.transfer('m1', 'A', 'B', half, day(1)), g.transfer('m2', 'A', 'B', half, day(2))])).rejects.toThrow(/overflow/);
      await neo4j.apply([g.transfer('m1', 'A', 'B', half, day(1))]);
      await expect(neo4j.apply([g.transfer('m2', 'A', 'B', half, day(2))])).rejects.toThrow(/overflow/);
      expect(await neo4j.fanOut(g.tenantId, 'A', { since: day(1), until: day(3), limit: 10 })).toMatchObject({ count: 1, sum: half });
      // Two relays of 2^62 each gather into T: their total is beyond 64 bits.
      await neo4j.apply([
        g.transfer('s1', 'S', 'I1', half, day(1)),
        g.transfer('s2', 'S', 'I2', half, day(1)),
        g.transfer('g1', 'I1', 'T', half, day(2)),
        g.transfer('g2', 'I2', 'T', half, day(2)),
      ]);
      const window = { since: day(1), until: day(3) };
      await expect(neo4j.scatterGather(g.tenantId, 'S', { ...window, minIntermediaries: 2, limit: 10 })).rejects.toThrow(/not an exact integer/);
      await expect(neo4j.fanOut(g.tenantId, 'S', { ...window, limit: 10 })).rejects.toThrow(/overflow/);
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

    // apply() MERGEs each movement between its two accounts. Without a uniqueness constraint on
    // its key (a plain index on the id was not chosen either) Neo4j looked for an existing one by
    // walking every movement of the pair: each batch cost the pair's whole history (about 10 s per 1,000 movements on a pair holding 10,000). Counted, not
    // timed: the database hits of adding 20 movements to a pair that already has 2,000, profiled
    // in a transaction rolled back afterwards.
    it("finds whether a movement exists by its id, not by walking the pair's other movements", async () => {
      const g = graphOf(tenant());
      await neo4j.apply(Array.from({ length: 2000 }, (_, i) => g.transfer(`old${i}`, 'A', 'B', 1n, day(1))));
      const fresh = Array.from({ length: 20 }, (_, i) => g.transfer(`new${i}`, 'A', 'B', 1n, day(2))) as TransferChange[];
      const driver = neo4jDriver.driver(uri, neo4jDriver.auth.basic(inject('neo4jUser'), inject('neo4jPassword')));
      const session = driver.session({ database: inject('neo4jDatabase') });
      const tx = await session.beginTransaction();
      try {
        let hits = 0;
        const profiling = {
          run: async (text: string, params: Record<string, unknown>) => {
            const result = await tx.run(`PROFILE ${text}`, params);
            hits += totalHits(result.summary.profile);
            return result;
          },
        };
        await neo4jWrites(profiling as never, randomUUID()).addTransfers(fresh);
        // Walking the pair: 20 × 2,000 × 2 (Neo4j's MERGE looks once, then again under lock).
        expect(hits).toBeGreaterThan(0);
        expect(hits).toBeLessThan(2_000);
      } finally {
        await tx.rollback();
        await session.close();
        await driver.close();
      }
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

interface ProfiledPlan {
  dbHits: number;
  children: ProfiledPlan[];
}

function totalHits(plan: ProfiledPlan | false): number {
  return plan ? plan.dbHits + plan.children.reduce((sum, child) => sum + totalHits(child), 0) : 0;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction, type Pool } from '../../postgres/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { account, day, describeGraphStoreContract, graphOf, party } from '../contract.ts';
import { DEFAULT_READ_BUDGET_MS } from '../shared/store.ts';
import { openReadPool, TIMEOUT_SLACK_MS, withReadBudget, type ReadPool } from './budget.ts';
import { applyChanges } from '../shared/apply.ts';
import { PostgresGraphStore } from './store.ts';
import { postgresWrites } from './writes.ts';

describeGraphStoreContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return { store: new PostgresGraphStore(db.pool), close: db.drop };
});

// As the service opens it (platform/engines.ts): reads on a pool of their own.
describeGraphStoreContract('PostgreSQL, reads on a read pool', async () => {
  const db = await createTestDatabase();
  const reads = openReadPool(db.url, 4, DEFAULT_READ_BUDGET_MS);
  return {
    store: new PostgresGraphStore(db.pool, { readPool: reads }),
    close: async () => {
      await reads.pool.end();
      await db.drop();
    },
  };
});

describe('PostgresGraphStore: a retraction and a recording of the same movement at once', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('the retraction waits for the recording still running, and then takes its movement out', async () => {
    const store = new PostgresGraphStore(db.pool);
    const g = graphOf('t-race');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A recording of the original that has written its rows and not committed yet.
    const recording = withTransaction(db.pool, async (client) => {
      await applyChanges(postgresWrites(client), [g.transfer('m1', 'A1', 'A2', 900n, day(1))]);
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    let settled = false;
    const retracting = store.apply([g.correction('m1-fix', 'm1', null, day(2))]).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    release();
    await Promise.all([recording, retracting]);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM graph_transfers WHERE tenant_id = 't-race'`);
    expect(rows[0].n).toBe(0);
    expect((await store.egoNetwork('t-race', account('A1'), { depth: 1, nodeCap: 10 })).edges).toEqual([]);
  });
});

describe('PostgresGraphStore: read budget and access paths', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('turns a statement cancelled by the timeout into "no rows, budget spent", and runs nothing after it', async () => {
    const outcome = await withReadBudget(db.pool, 100, async (budget) => {
      const rows = await budget.query({ text: 'SELECT pg_sleep(10)' });
      return { rows, exhausted: budget.exhausted, after: await budget.query({ text: 'SELECT 1 AS one' }) };
    });
    expect(outcome).toEqual({ rows: undefined, exhausted: true, after: undefined });
  });

  it('gives a later statement only the time left, not the whole budget again', async () => {
    const outcome = await withReadBudget(db.pool, 600, async (budget) => {
      const first = await budget.query({ text: 'SELECT true AS slept FROM pg_sleep(0.4)' });
      const second = await budget.query({ text: 'SELECT true AS slept FROM pg_sleep(0.4)' });
      return { first, second, exhausted: budget.exhausted };
    });
    expect(outcome).toEqual({ first: [{ slept: true }], second: undefined, exhausted: true });
  });

  it('opens a read-only snapshot with custom plans, and leaves the pooled connection as it was', async () => {
    const inside = await withReadBudget(db.pool, 1_000, (budget) =>
      budget.query<{ ro: string; plans: string; iso: string }>({
        text: `SELECT current_setting('transaction_read_only') AS ro, current_setting('plan_cache_mode') AS plans, current_setting('transaction_isolation') AS iso`,
      }),
    );
    expect(inside).toEqual([{ ro: 'on', plans: 'force_custom_plan', iso: 'repeatable read' }]);
    const client = await db.pool.connect();
    try {
      const { rows } = await client.query(`SELECT current_setting('statement_timeout') AS timeout, current_setting('transaction_read_only') AS ro`);
      expect(rows[0]).toEqual({ timeout: '0', ro: 'off' });
    } finally {
      client.release();
    }
  });

  it('costs three round trips for a read of one statement: open with limits, the statement, rollback', async () => {
    const { pool, sent } = capturing(db.pool);
    await withReadBudget(pool, 1_000, async (budget) => budget.query({ text: 'SELECT 1 AS one' }));
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL statement_timeout = 1000$/);
  });

  describe('on a read pool whose connections carry the budget', () => {
    let reads: ReadPool;
    beforeAll(() => {
      reads = openReadPool(db.url, 4, 600);
    });
    afterAll(async () => {
      await reads?.pool.end();
    });

    it('sends the statements of a quick read alone, with no snapshot to open or roll back', async () => {
      const { pool, sent } = capturing(reads.pool);
      const one = await withReadBudget({ pool, timeoutMs: 600 }, 600, async (budget) => budget.query({ text: 'SELECT 1 AS one' }));
      expect(one).toEqual([{ one: 1 }]);
      expect(sent).toEqual(['SELECT 1 AS one']);

      // Two statements, each on its own: read-only, under the connection's own timeout (the
      // whole budget). A busy machine can stall a read past the slack, so it gets a few tries.
      let two: unknown;
      for (let attempt = 0; attempt < 5 && sent.length !== 2; attempt++) {
        sent.length = 0;
        two = await withReadBudget({ pool, timeoutMs: 600 }, 600, async (budget) => [
          await budget.query({ text: 'SELECT 1 AS one' }),
          await budget.query<{ ro: string; timeout: string }>({
            text: `SELECT current_setting('transaction_read_only') AS ro, current_setting('statement_timeout') AS timeout`,
          }),
        ]);
      }
      expect(sent).toHaveLength(2);
      expect(two).toEqual([[{ one: 1 }], [{ ro: 'on', timeout: '600ms' }]]);
    });

    it(`opens the snapshot, with the time left, for a statement sent more than ${TIMEOUT_SLACK_MS} ms into the read`, async () => {
      const { pool, sent } = capturing(reads.pool);
      const late = await withReadBudget({ pool, timeoutMs: 600 }, 600, async (budget) => [
        await budget.query({ text: 'SELECT 1 AS one' }),
        await new Promise((resolve) => setTimeout(resolve, TIMEOUT_SLACK_MS + 20)),
        await budget.query<{ ro: string; iso: string; plans: string }>({
          text: `SELECT current_setting('transaction_read_only') AS ro, current_setting('transaction_isolation') AS iso, current_setting('plan_cache_mode') AS plans`,
        }),
      ]);
      expect(late).toEqual([[{ one: 1 }], undefined, [{ ro: 'on', iso: 'repeatable read', plans: 'auto' }]]);
      expect(sent).toHaveLength(4);
      expect(sent[1]).toMatch(/^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = (\d+)$/);
      expect(Number(sent[1]!.match(/(\d+)$/)![1])).toBeLessThanOrEqual(600 - TIMEOUT_SLACK_MS);
      expect(sent[3]).toBe('ROLLBACK');

      // Nothing is left open on the connection: a transaction's now() would be older.
      const client = await reads.pool.connect();
      try {
        const { rows } = await client.query(`SELECT now() = statement_timestamp() AS fresh, current_setting('statement_timeout') AS timeout`);
        expect(rows[0]).toEqual({ fresh: true, timeout: '600ms' });
      } finally {
        client.release();
      }
    });

    it('cuts the first statement off with the connection\'s own timeout, and later ones with the time left', async () => {
      const first = await withReadBudget(reads, 600, async (budget) => ({ rows: await budget.query({ text: 'SELECT pg_sleep(10)' }), exhausted: budget.exhausted }));
      expect(first).toEqual({ rows: undefined, exhausted: true });
      const second = await withReadBudget(reads, 600, async (budget) => [
        await budget.query({ text: 'SELECT true AS slept FROM pg_sleep(0.4)' }),
        await budget.query({ text: 'SELECT true AS slept FROM pg_sleep(0.4)' }),
      ]);
      expect(second).toEqual([[{ slept: true }], undefined]);
    });

    it('opens its snapshot as before when the budget is not the one its connections carry', async () => {
      const { pool, sent } = capturing(reads.pool);
      await withReadBudget({ pool, timeoutMs: 600 }, 1_000, async (budget) => budget.query({ text: 'SELECT 1 AS one' }));
      expect(sent).toHaveLength(3);
      expect(sent[0]).toMatch(/SET LOCAL statement_timeout = 1000$/);
    });
  });

  it('lets any other error through', async () => {
    await expect(withReadBudget(db.pool, 1_000, (budget) => budget.query({ text: 'SELECT * FROM no_such_table' }))).rejects.toMatchObject({ code: '42P01' });
  });

  it('on a dense graph, a 1 ms budget answers egoNetwork and cycles partially instead of failing', async () => {
    // A hub paying 3,000 accounts that each pay it back: 3,000 cycles of two.
    const g = graphOf('dense');
    await new PostgresGraphStore(db.pool).apply(
      Array.from({ length: 3000 }, (_, i) => [g.transfer(`out${i}`, 'HUB', `C${i}`, 100n, day(2)), g.transfer(`in${i}`, `C${i}`, 'HUB', 100n, day(3))]).flat(),
    );
    const egoOptions = { depth: 2, nodeCap: 10_000 };
    const cycleOptions = { since: day(1), until: day(10), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10_000 };

    // With time enough, both answers are complete: any truncation below comes from the budget.
    const ample = new PostgresGraphStore(db.pool, { readBudgetMs: 120_000 });
    const fullEgo = await ample.egoNetwork('dense', account('HUB'), egoOptions);
    expect(fullEgo).toMatchObject({ truncated: false });
    expect(fullEgo.nodes).toHaveLength(3001);
    const fullCycles = await ample.cycles('dense', 'HUB', cycleOptions);
    expect(fullCycles.truncated).toBe(false);
    expect(fullCycles.cycles).toHaveLength(3000);

    const starved = new PostgresGraphStore(db.pool, { readBudgetMs: 1 });
    const ego = await starved.egoNetwork('dense', account('HUB'), egoOptions);
    expect(ego.truncated).toBe(true);
    expect(ego.nodes.length).toBeLessThan(3001);
    const cycles = await starved.cycles('dense', 'HUB', cycleOptions);
    expect(cycles.truncated).toBe(true);
    expect(cycles.cycles.length).toBeLessThan(3000);
  });

  // The latest movements of each transfer edge are looked up per pair (src, dst). Without an
  // index on the pair, each lookup walks every movement into the pair's destination and filters
  // on the source: pairs x movements rows, which on a hub spends the whole read budget (and the
  // answer comes back truncated with no recent movements). Counted, not timed: rows the
  // statement the store really runs reads and throws away.
  it("reads a pair's latest movements without walking the other pairs' movements", async () => {
    const g = graphOf('hub-pairs');
    await new PostgresGraphStore(db.pool).apply(
      Array.from({ length: 200 }, (_, i) => [g.transfer(`out${i}`, 'HUB', `C${i}`, 100n, day(2)), g.transfer(`in${i}`, `C${i}`, 'HUB', 100n, day(3))]).flat(),
    );
    const statements = capturing(db.pool);
    const ego = await new PostgresGraphStore(statements.pool).egoNetwork('hub-pairs', account('HUB'), { depth: 1, nodeCap: 1_000 });
    expect(ego.edges).toHaveLength(400);
    expect(ego.edges.every((e) => e.recent?.length === 1)).toBe(true);
    const recent = statements.named('graph-recent-movements');
    const { rows } = await db.pool.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${recent.text}`, values: recent.values });
    expect(rowsDiscarded((rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan)).toBe(0);
  });

  // reachMany's statements look each frontier node's edges and movements up by index: joined to
  // the requests' frontiers instead, the planner scans the tenant's whole graph for every request.
  it('reachMany reads by each frontier node, never scanning the other nodes\' edges or movements', async () => {
    const g = graphOf('reach-many-plan');
    await new PostgresGraphStore(db.pool).apply(
      Array.from({ length: 1000 }, (_, i) => [g.account(`M${i}`, `MP${i}`, day(1)), g.transfer(`mm${i}`, `M${i}`, `M${(i + 1) % 1000}`, 100n, day(2))]).flat(),
    );
    await db.pool.query('ANALYZE graph_edges, graph_transfers');
    const statements = capturing(db.pool);
    const store = new PostgresGraphStore(statements.pool);
    await store.reachMany('reach-many-plan', [
      { center: party('MP1'), options: { depth: 2, nodeCap: 50, filter: { since: day(1), until: day(3) } } },
      { center: account('M7'), options: { depth: 1, nodeCap: 50, filter: { since: day(1), until: day(3) } } },
    ]);
    await store.reachMany('reach-many-plan', [{ center: account('M9'), options: { depth: 2, nodeCap: 50 } }]);
    for (const name of ['graph-incident-many', 'graph-incident-transfers-many']) {
      const read = statements.named(name);
      const { rows } = await db.pool.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${read.text}`, values: read.values });
      const plan = (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan;
      expect(rowsDiscarded(plan), name).toBe(0);
      // A frontier of at most 50 nodes, each with a few edges and movements, of the tenant's 3,000.
      expect(rowsScanned(plan), name).toBeLessThan(500);
    }
  });

  it('reaches the ego network\'s nodes without reading its last level\'s edges, attributes or movements', async () => {
    const g = graphOf('reach-reads');
    await new PostgresGraphStore(db.pool).apply([
      g.account('R1', 'RP1', day(1)),
      g.transfer('r1', 'R1', 'R2', 100n, day(2)),
      g.transfer('r2', 'R2', 'R3', 100n, day(3)),
    ]);
    const options = { depth: 2, nodeCap: 50 };
    const egoReads = capturing(db.pool);
    const ego = await new PostgresGraphStore(egoReads.pool).egoNetwork('reach-reads', account('R1'), options);
    const reachReads = capturing(db.pool);
    const reached = await new PostgresGraphStore(reachReads.pool).reach('reach-reads', account('R1'), options);
    expect(reached.nodes.map((n) => `${n.kind}:${n.key}`)).toEqual(ego.nodes.map((n) => `${n.kind}:${n.key}`));
    expect(egoReads.named('graph-node-attrs')).toBeDefined();
    expect(egoReads.named('graph-recent-movements')).toBeDefined();
    expect(() => reachReads.named('graph-node-attrs')).toThrow();
    expect(() => reachReads.named('graph-recent-movements')).toThrow();
    // Two levels of incident edges and transfers, and nothing for the last level's own edges.
    expect(reachReads.sent.length).toBeLessThan(egoReads.sent.length - 2);
  });
});

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

// Rows a plan read and dropped, over all loops (EXPLAIN reports the per-loop average).
function rowsDiscarded(node: PlanNode): number {
  const own = ((node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1);
  return own + (node.Plans ?? []).reduce((n, child) => n + rowsDiscarded(child), 0);
}

// Rows a plan read from the graph's tables, over all loops.
function rowsScanned(node: PlanNode): number {
  const scanned = node['Relation Name']?.startsWith('graph_') ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1) : 0;
  return scanned + (node.Plans ?? []).reduce((n, child) => n + rowsScanned(child), 0);
}

// A pool whose connections remember the named statements run on them.
// The pool as a read sees it, recording what its clients send: every statement's text in order
// (`sent`), and the latest of each named one with its values.
function capturing(pool: Pool): { pool: Pool; sent: string[]; named: (name: string) => { text: string; values: unknown[] } } {
  const seen = new Map<string, { text: string; values: unknown[] }>();
  const sent: string[] = [];
  const wrapped = {
    connect: async () => {
      const client = await pool.connect();
      return new Proxy(client, {
        get(target, property) {
          if (property === 'query') {
            return (config: unknown, ...rest: unknown[]) => {
              const c = config as { name?: string; text?: string; values?: unknown[] };
              sent.push(typeof config === 'string' ? config : (c.text ?? ''));
              if (c?.name && c.text) seen.set(c.name, { text: c.text, values: c.values ?? [] });
              return (target.query as (...args: unknown[]) => unknown)(config, ...rest);
            };
          }
          const value = Reflect.get(target, property);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  } as unknown as Pool;
  return {
    pool: wrapped,
    sent,
    named: (name) => {
      const statement = seen.get(name);
      if (!statement) throw new Error(`no statement ${name} was run`);
      return statement;
    },
  };
}

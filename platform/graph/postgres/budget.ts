import type { QueryConfig, QueryResultRow } from 'pg';
import { createPool, type Pool, type PoolClient } from '../../postgres/pool.ts';

// PostgreSQL's code for a statement cancelled by statement_timeout.
const QUERY_CANCELED = '57014';

// statement_timeout counts from each statement's start, so a timeout set earlier lets a later
// statement run past the deadline by the time spent since it was set. Up to this much overrun is
// accepted instead of a round trip to set it again: detection makes tens of thousands of reads a
// minute, and on a busy machine a traversal's next level often starts more than 10 ms after the
// last (at 10 ms, bench:detect set it again more often than it made reads; docs/benchmarks.md).
// 50 ms is 2.5 % of the default 2 s budget.
export const TIMEOUT_SLACK_MS = 50;

// The time one graph read may take in all. Each statement runs with at most the time left as its
// statement_timeout (give or take TIMEOUT_SLACK_MS); once the time is spent the read stops where
// it is and says so (`exhausted`), so a query over a dense graph answers partially instead of
// running away. Its statements run in one read-only snapshot, except on a read pool (ReadPool),
// where those sent within TIMEOUT_SLACK_MS of the read's start run each on its own and a
// snapshot is opened only for the later ones: see withReadBudget.
export class ReadBudget {
  exhausted = false;
  private statements = 0;

  constructor(
    private readonly client: PoolClient,
    private readonly deadline: number,
    // When statement_timeout was last set to the time left then.
    private timeoutSetAt: number,
    // Whether the read's transaction is open (else its statements so far ran each on its own, on
    // a connection whose own statement_timeout is the whole budget).
    private inTransaction: boolean,
  ) {}

  // Whether a transaction was opened, to be rolled back.
  get opened(): boolean {
    return this.inTransaction;
  }

  // The rows, or undefined when the budget ran out before or during the statement.
  async query<R extends QueryResultRow>(config: QueryConfig): Promise<R[] | undefined> {
    if (this.exhausted) return undefined;
    const now = performance.now();
    const left = Math.floor(this.deadline - now);
    if (left <= 0) {
      this.exhausted = true;
      return undefined;
    }
    try {
      // On a read pool, a later statement sent within the slack of the read's start is sent
      // alone too: the connection's own timeout (the whole budget) lets it overrun the deadline
      // by at most the slack. Most multi-statement reads (a cycle search, a statement per
      // length) are over that quickly, and a snapshot opened and rolled back cost each two more
      // round trips (a large share of detection's statements; docs/benchmarks.md).
      if (!this.inTransaction && this.statements > 0 && now - this.timeoutSetAt > TIMEOUT_SLACK_MS) {
        await this.client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${left}`);
        this.inTransaction = true;
        this.timeoutSetAt = now;
      } else if (this.inTransaction && now - this.timeoutSetAt > TIMEOUT_SLACK_MS) {
        await this.client.query(`SET LOCAL statement_timeout = ${left}`);
        this.timeoutSetAt = now;
      }
      this.statements++;
      return (await this.client.query<R>(config)).rows;
    } catch (error) {
      if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
      this.exhausted = true;
      return undefined;
    }
  }
}

// A pool for graph reads alone, its connections opened read-only and with the read budget as
// their statement_timeout (openReadPool).
export interface ReadPool {
  pool: Pool;
  timeoutMs: number;
}

// Unlike a read on a pool of any use, statements on a read pool are left to the planner's own
// choice between a plan for the values at hand and a generic one kept with the prepared statement.
// Detection sends tens of thousands of small reads a minute, and planning each anew cost more than
// running most of them (a good part of PostgreSQL's CPU time on them in bench:detect;
// docs/benchmarks.md). A generic plan is used only where the planner costs it no more than the
// custom ones: reads that bind arrays of frontier nodes or optional filters keep custom plans (a
// generic plan cannot use a range it does not know), and the reads of one account's scatter-gather
// paths and shared identifiers take the generic one (an equality on an account or party key is
// selective whatever its value; not so the embedded log's stream and partition, whose reads stay
// custom). Planned while the tables were small, a generic plan does not outlive them: the graph
// writer runs ANALYZE as they grow (analyze-on-growth.ts), and an ANALYZE discards every cached
// plan of the tables it analysed.
export function openReadPool(url: string, connections: number, timeoutMs: number): ReadPool {
  return { pool: createPool(url, connections, { readOnly: true, statementTimeoutMs: timeoutMs }), timeoutMs };
}

// Runs a read with `budgetMs` in all. On a pool of any use, the read opens a read-only snapshot
// and sets both limits in one round trip, then runs its statements, then rolls back: three round
// trips for a read of one statement. On a read pool whose connections already carry this budget,
// statements are sent at once while the read is within TIMEOUT_SLACK_MS of its start, and only a
// statement sent later opens the snapshot (with the time left): detection makes tens of
// thousands of reads a minute, most of them one statement or a few quick ones. Such a read's
// statements may then each see a snapshot of its own, each taken after the one before: the
// network only grows and every traversal is bounded in event time, so a later snapshot only adds
// what committed in between.
export async function withReadBudget<T>(pool: Pool | ReadPool, budgetMs: number, work: (budget: ReadBudget) => Promise<T>): Promise<T> {
  const preset = 'timeoutMs' in pool && pool.timeoutMs === budgetMs;
  const client = await ('timeoutMs' in pool ? pool.pool : pool).connect();
  let budget: ReadBudget | undefined;
  try {
    const budgetStart = performance.now();
    if (!preset) {
      // Traversals bind arrays of every size: a plan made for the values at hand, never a
      // generic one.
      await client.query(
        `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(budgetMs))}`,
      );
    }
    budget = new ReadBudget(client, budgetStart + budgetMs, budgetStart, !preset);
    return await work(budget);
  } finally {
    if (!budget || budget.opened) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

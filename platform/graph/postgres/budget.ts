import type { QueryConfig, QueryResultRow } from 'pg';
import type { Pool, PoolClient } from '../../postgres/pool.ts';

// PostgreSQL's code for a statement cancelled by statement_timeout.
const QUERY_CANCELED = '57014';

// statement_timeout counts from each statement's start, so a timeout set earlier lets a later
// statement run past the deadline by the time spent since it was set. Up to this much overrun is
// accepted instead of a round trip to set it again: detection makes tens of thousands of reads a
// minute, and on a busy machine a traversal's next level often starts more than 10 ms after the
// last (at 10 ms, bench:detect set it again about 43,000 times in 40,000 reads). 50 ms is
// 2.5 % of the default 2 s budget.
export const TIMEOUT_SLACK_MS = 50;

// The time one graph read may take in all. Its statements run in one read-only snapshot, each
// with at most the time left as its statement_timeout (give or take TIMEOUT_SLACK_MS); once the
// time is spent the read stops where it is and says so (`exhausted`), so a query over a dense
// graph answers partially instead of running away.
export class ReadBudget {
  exhausted = false;

  constructor(
    private readonly client: PoolClient,
    private readonly deadline: number,
    // When statement_timeout was last set to the time left then.
    private timeoutSetAt: number,
  ) {}

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
      if (now - this.timeoutSetAt > TIMEOUT_SLACK_MS) {
        await this.client.query(`SET LOCAL statement_timeout = ${left}`);
        this.timeoutSetAt = now;
      }
      return (await this.client.query<R>(config)).rows;
    } catch (error) {
      if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
      this.exhausted = true;
      return undefined;
    }
  }
}

export async function withReadBudget<T>(pool: Pool, budgetMs: number, work: (budget: ReadBudget) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    const budgetStart = performance.now();
    // One round trip opens the snapshot and sets both limits (a simple query may hold several
    // statements). Traversals bind arrays of every size: a plan made for the values at hand,
    // never a generic one.
    await client.query(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(budgetMs))}`,
    );
    return await work(new ReadBudget(client, budgetStart + budgetMs, budgetStart));
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

import type { QueryConfig, QueryResultRow } from 'pg';
import type { Pool, PoolClient } from '../../postgres/pool.ts';

// PostgreSQL's code for a statement cancelled by statement_timeout.
const QUERY_CANCELED = '57014';

// The time one graph read may take in all. Its statements run in one read-only snapshot, each
// with the time left as its statement_timeout; once the time is spent the read stops where it is
// and says so (`exhausted`), so a query over a dense graph answers partially instead of running away.
export class ReadBudget {
  exhausted = false;

  constructor(
    private readonly client: PoolClient,
    private readonly deadline: number,
  ) {}

  // The rows, or undefined when the budget ran out before or during the statement.
  async query<R extends QueryResultRow>(config: QueryConfig): Promise<R[] | undefined> {
    if (this.exhausted) return undefined;
    const left = Math.floor(this.deadline - performance.now());
    if (left <= 0) {
      this.exhausted = true;
      return undefined;
    }
    try {
      await this.client.query(`SET LOCAL statement_timeout = ${left}`);
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
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // Traversals bind arrays of every size: a plan made for the values at hand, never a generic one.
    await client.query('SET LOCAL plan_cache_mode = force_custom_plan');
    return await work(new ReadBudget(client, performance.now() + budgetMs));
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

import type { Pool } from './pool.ts';

// Keeps the planner's statistics of tables a worker fills up to date while they grow. Autovacuum
// analyses a table only after 10 % of it has changed and when it next wakes (every minute by
// default): a table that went from empty to a hundred thousand rows in that time is planned as if
// it were empty, and traversals and log reads on it become seconds instead of milliseconds.
// So every writer counts what it added and, past half of the largest table's size at its last
// ANALYZE (and at least `minRows`), runs ANALYZE itself, in the background, one at a time. Half,
// not less: statistics within a factor of 1.5 plan these index-driven reads the same, and each
// ANALYZE samples 30,000 rows (a fifth had the stores analysing every few seconds under load).
export class AnalyzeOnGrowth {
  private added = 0;
  private known = 0;
  private running: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly tables: string[],
    private readonly options: { minRows?: number; growth?: number; onError?: (error: unknown) => void } = {},
  ) {}

  note(rows: number): void {
    this.added += rows;
    if (this.running || this.added < Math.max(this.options.minRows ?? 5_000, this.known * (this.options.growth ?? 0.5))) return;
    this.added = 0;
    this.running = this.analyze()
      .catch((error) => this.options.onError?.(error))
      .finally(() => {
        this.running = undefined;
      });
  }

  // Resolves when the ANALYZE under way (if any) is done.
  async settled(): Promise<void> {
    await this.running;
  }

  private async analyze(): Promise<void> {
    await this.pool.query(`ANALYZE ${this.tables.join(', ')}`);
    const { rows } = await this.pool.query<{ rows: number | null }>('SELECT max(reltuples)::float8 AS rows FROM pg_class WHERE oid = ANY ($1::regclass[])', [this.tables]);
    this.known = Math.max(0, rows[0]?.rows ?? 0);
  }
}

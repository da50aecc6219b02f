import type { Pool } from '../postgres/pool.ts';

// Accepted events by processing status, every tenant together (for operators: `svc status`).
export async function inboxStatusCounts(db: Pick<Pool, 'query'>): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; events: number }>(
    'SELECT status, count(*)::int AS events FROM inbox_events GROUP BY status ORDER BY status',
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.events]));
}

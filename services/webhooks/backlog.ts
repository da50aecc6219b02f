import type { Pool } from '../../platform/postgres/pool.ts';

// What the webhook side still has to do, for operators (`svc status`): events not yet fanned out
// to their endpoints, deliveries waiting for an attempt, deliveries given up on.
export interface WebhookBacklog {
  outbox: number;
  pending: number;
  dead_lettered: number;
}

export async function webhookBacklog(db: Pick<Pool, 'query'>): Promise<WebhookBacklog> {
  const { rows } = await db.query<WebhookBacklog>(
    `SELECT (SELECT count(*)::int FROM outgoing_events WHERE fanned_out_at IS NULL) AS outbox,
            (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
            (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'dead_lettered') AS dead_lettered`,
  );
  return rows[0]!;
}

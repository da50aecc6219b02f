// The sweep of an outbox against the declared payloads (schemas/webhooks/payloads.ts): a suite
// that drives real emitters ends by checking that every event they enqueued parses with its type's
// schema, independently of the check enqueueEvents makes before writing.
import type { Pool } from '../../platform/postgres/pool.ts';
import { isWebhookEventType } from '../../schemas/webhooks/catalog.ts';
import { WEBHOOK_PAYLOADS } from '../../schemas/webhooks/payloads.ts';

export interface OutboxSweep {
  // The event types found, sorted.
  types: string[];
  // One line per event whose data does not parse with its type's schema.
  refused: string[];
}

export async function sweepOutbox(pool: Pick<Pool, 'query'>): Promise<OutboxSweep> {
  const { rows } = await pool.query<{ envelope_id: string; type: string; data: unknown }>('SELECT envelope_id, type, data FROM outgoing_events ORDER BY created_at, envelope_id');
  const refused: string[] = [];
  for (const row of rows) {
    if (!isWebhookEventType(row.type)) {
      refused.push(`${row.envelope_id}: ${row.type} is not in the catalog`);
      continue;
    }
    const parsed = WEBHOOK_PAYLOADS[row.type].safeParse(row.data);
    if (!parsed.success) refused.push(`${row.envelope_id} ${row.type}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return { types: [...new Set(rows.map((r) => r.type))].sort(), refused };
}

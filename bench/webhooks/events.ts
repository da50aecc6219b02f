import { enqueueEvents, type OutgoingEvent } from '../../services/webhooks/outgoing-events.ts';
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { WebhookEventData } from '../../schemas/webhooks/payloads.ts';
import { EVENTS, TENANT } from './settings.ts';

// The events delivered: alert.opened, as the detect pipeline emits them, put in the outbox for
// the worker and built the same way by the baseline sender, so that both send bodies of one shape
// and size.

const ENQUEUE_CHUNK = 1000;

// The data of an alert.opened event, shaped like the detect pipeline's (pipelines/detect/alerts.ts).
export function alertData(index: number, at: Date): WebhookEventData<'alert.opened'> {
  const account = `A-${String(100_000 + index)}`;
  return {
    alert_id: `${ID_PREFIXES.alert}${uuidv7(at.getTime())}`,
    detector: 'fan_in',
    typology: 'fan_in',
    severity: index % 5 === 0 ? 'high' : 'medium',
    score: ((index * 7919) % 1000) / 1000,
    subject: { kind: 'account', external_id: account },
    window: { from: new Date(at.getTime() - 600_000).toISOString(), to: at.toISOString() },
    summary: `10 accounts paid 10000.00 USD into ${account} within 10 minutes`,
  };
}

// EVENTS events in the outbox (enqueueEvents), before the worker starts.
export async function fillOutbox(pool: Pool): Promise<void> {
  for (let first = 0; first < EVENTS; first += ENQUEUE_CHUNK) {
    const now = new Date();
    const events: OutgoingEvent[] = [];
    for (let i = first; i < Math.min(EVENTS, first + ENQUEUE_CHUNK); i++) events.push({ tenantId: TENANT, type: 'alert.opened', data: alertData(i, now) });
    await enqueueEvents(pool, events, now);
  }
}

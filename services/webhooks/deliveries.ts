// The delivery log as the API shows it (each delivery with every attempt), replay, and the
// webhook.test probe. Every statement filters on the tenant.
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { WEBHOOK_EVENT_CATALOG, type WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import type { DeliveryStatus, WebhookDeliveryView } from '../../schemas/webhooks/resources.ts';
import type { WebhookEventData } from '../../schemas/webhooks/payloads.ts';
import { checkEventData } from './outgoing-events.ts';
import type { EndpointRow } from './endpoints.ts';

interface DeliveryRow {
  delivery_id: string;
  endpoint_id: string;
  envelope_id: string;
  event_type: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
  replay_of: string | null;
  log: Array<{
    attempt: number;
    started_at: string;
    latency_ms: number;
    response_status: number | null;
    error: string | null;
    response_excerpt: string | null;
    next_retry_at: string | null;
  }>;
}

export interface DeliveryFilters {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: WebhookEventType;
  since?: Date;
}

const SELECT_DELIVERIES = `
  SELECT d.delivery_id, d.endpoint_id, d.envelope_id, d.event_type, d.status, d.attempts, d.next_attempt_at,
         d.created_at, d.completed_at, d.replay_of,
         coalesce((SELECT json_agg(json_build_object(
                     'attempt', a.attempt, 'started_at', a.started_at, 'latency_ms', a.latency_ms,
                     'response_status', a.response_status, 'error', a.error,
                     'response_excerpt', a.response_excerpt, 'next_retry_at', a.next_retry_at) ORDER BY a.attempt)
                     FROM webhook_attempts a WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.delivery_id), '[]') AS log
    FROM webhook_deliveries d`;

const iso = (text: string | null) => (text === null ? null : new Date(text).toISOString());

function deliveryView(row: DeliveryRow): WebhookDeliveryView {
  const latest = row.log.at(-1);
  return {
    delivery_id: `${ID_PREFIXES.webhookDelivery}${row.delivery_id}`,
    endpoint_id: `${ID_PREFIXES.webhookEndpoint}${row.endpoint_id}`,
    envelope_id: `${ID_PREFIXES.webhookEnvelope}${row.envelope_id}`,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempts,
    response_status: latest?.response_status ?? null,
    latency_ms: latest?.latency_ms ?? null,
    next_retry_at: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    replay_of: row.replay_of ? `${ID_PREFIXES.webhookDelivery}${row.replay_of}` : null,
    attempts: row.log.map((a) => ({
      attempt: a.attempt,
      started_at: iso(a.started_at)!,
      latency_ms: a.latency_ms,
      response_status: a.response_status,
      error: a.error,
      response_excerpt: a.response_excerpt,
      next_retry_at: iso(a.next_retry_at),
    })),
  };
}

export type ReplayOutcome = { kind: 'replayed'; delivery: WebhookDeliveryView } | { kind: 'not_found' } | { kind: 'endpoint_inactive' };
export type TestOutcome = { kind: 'succeeded' | 'failed'; delivery: WebhookDeliveryView } | { kind: 'timed_out'; deliveryId: string };

export class WebhookDeliveries {
  constructor(
    private readonly pool: Pool,
    private readonly settings: { horizonMs: number },
  ) {}

  // Newest first; `after` is the (created_at, delivery_id) of the last row of the previous page.
  async list(tenantId: string, filters: DeliveryFilters, limit: number, after?: { at: string; id: string }): Promise<WebhookDeliveryView[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `${SELECT_DELIVERIES}
        WHERE d.tenant_id = $1
          AND ($2::uuid IS NULL OR d.endpoint_id = $2) AND ($3::text IS NULL OR d.status = $3)
          AND ($4::text IS NULL OR d.event_type = $4) AND ($5::timestamptz IS NULL OR d.created_at >= $5)
          AND ($6::timestamptz IS NULL OR (d.created_at, d.delivery_id) < ($6::timestamptz, $7::uuid))
        ORDER BY d.created_at DESC, d.delivery_id DESC
        LIMIT $8`,
      [tenantId, filters.endpointId ?? null, filters.status ?? null, filters.eventType ?? null, filters.since ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows.map(deliveryView);
  }

  async find(tenantId: string, deliveryId: string): Promise<WebhookDeliveryView | undefined> {
    const { rows } = await this.pool.query<DeliveryRow>(`${SELECT_DELIVERIES} WHERE d.tenant_id = $1 AND d.delivery_id = $2`, [tenantId, deliveryId]);
    return rows[0] && deliveryView(rows[0]);
  }

  // A new delivery of the same envelope (same whe_ id) to the same endpoint, due now.
  async replay(tenantId: string, deliveryId: string, now: Date): Promise<ReplayOutcome> {
    const { rows } = await this.pool.query<{ delivery_id: string | null; endpoint_active: boolean }>(
      `WITH original AS (
         SELECT d.*, e.status = 'enabled' AND e.deleted_at IS NULL AS endpoint_active
           FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
          WHERE d.tenant_id = $1 AND d.delivery_id = $2
       ), replayed AS (
         INSERT INTO webhook_deliveries (tenant_id, delivery_id, endpoint_id, envelope_id, event_type, status, max_attempts, next_attempt_at, deadline_at, created_at, replay_of)
         SELECT tenant_id, $3, endpoint_id, envelope_id, event_type, 'pending', max_attempts, $4::timestamptz, $4::timestamptz + $5 * interval '1 millisecond', $4::timestamptz, delivery_id
           FROM original WHERE endpoint_active
         RETURNING delivery_id
       )
       SELECT (SELECT delivery_id FROM replayed) AS delivery_id, endpoint_active FROM original`,
      [tenantId, deliveryId, uuidv7(now.getTime()), now, this.settings.horizonMs],
    );
    const row = rows[0];
    if (!row) return { kind: 'not_found' };
    if (!row.endpoint_active || !row.delivery_id) return { kind: 'endpoint_inactive' };
    return { kind: 'replayed', delivery: (await this.find(tenantId, row.delivery_id))! };
  }

  // Enqueues a single-attempt webhook.test delivery to the endpoint and waits for the delivery
  // worker's outcome, up to waitMs. Returns the bare delivery id when the wait runs out.
  async test(tenantId: string, endpoint: EndpointRow, now: Date, waitMs: number): Promise<TestOutcome> {
    const envelopeId = uuidv7(now.getTime());
    const deliveryId = uuidv7(now.getTime());
    const data: WebhookEventData<'webhook.test'> = {
      endpoint_id: `${ID_PREFIXES.webhookEndpoint}${endpoint.endpoint_id}`,
      channel: endpoint.channel,
      message: 'webhook.test from svc: acknowledge with any 2xx',
      sent_at: now.toISOString(),
    };
    checkEventData('webhook.test', data);
    await withTransaction(this.pool, async (db) => {
      // Already fanned out: a test goes to this endpoint only.
      await db.query(
        `INSERT INTO outgoing_events (tenant_id, envelope_id, type, classification, created_at, data, fanned_out_at)
         VALUES ($1, $2, 'webhook.test', $3, $4, $5, $4)`,
        [tenantId, envelopeId, WEBHOOK_EVENT_CATALOG['webhook.test'].classification, now, data],
      );
      await db.query(
        `INSERT INTO webhook_deliveries (tenant_id, delivery_id, endpoint_id, envelope_id, event_type, status, max_attempts, next_attempt_at, deadline_at, created_at)
         VALUES ($1, $2, $3, $4, 'webhook.test', 'pending', 1, $5::timestamptz, $5::timestamptz + $6 * interval '1 millisecond', $5::timestamptz)`,
        [tenantId, deliveryId, endpoint.endpoint_id, envelopeId, now, this.settings.horizonMs],
      );
    });
    const giveUpAt = performance.now() + waitMs;
    for (;;) {
      const delivery = await this.find(tenantId, deliveryId);
      if (delivery && delivery.status !== 'pending') {
        return { kind: delivery.status === 'succeeded' ? 'succeeded' : 'failed', delivery };
      }
      if (performance.now() >= giveUpAt) return { kind: 'timed_out', deliveryId };
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, giveUpAt - performance.now()))));
    }
  }
}

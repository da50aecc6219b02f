// The delivery worker's statements. Several workers may run at once: the outbox and due deliveries
// are taken with SKIP LOCKED, and a claim moves next_attempt_at past the attempt timeout (a lease),
// so a delivery is attempted by one worker at a time and again if that worker dies mid-attempt.
import { AnalyzeOnGrowth } from '../../platform/postgres/analyze-on-growth.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { CHANNELS, deliverableOn, WEBHOOK_EVENT_TYPES, type Channel } from '../../schemas/webhooks/catalog.ts';
import type { DeliveryStatus } from '../../schemas/webhooks/resources.ts';

// Every (type, channel) pair the catalog allows, for the fan-out's join.
const DELIVERABLE = WEBHOOK_EVENT_TYPES.flatMap((type) => CHANNELS.filter((channel) => deliverableOn(type, channel)).map((channel) => [type, channel] as const));
const DELIVERABLE_TYPES = DELIVERABLE.map(([type]) => type);
const DELIVERABLE_CHANNELS = DELIVERABLE.map(([, channel]) => channel);

export interface ClaimedDelivery {
  delivery_id: string;
  tenant_id: string;
  endpoint_id: string;
  envelope_id: string;
  attempts: number;
  max_attempts: number | null;
  deadline_at: Date;
  url: string;
  channel: Channel;
  endpoint_status: 'enabled' | 'disabled';
  endpoint_deleted: boolean;
  secret_sealed: Buffer;
  previous_secret_sealed: Buffer | null;
  previous_secret_valid_until: Date | null;
  // Older retired secrets still within their overlap at the claim (webhook_retired_secrets).
  retired_secrets_sealed: Buffer[];
  type: string;
  classification: string;
  event_created_at: Date;
  data: unknown;
}

export interface AttemptRecord {
  deliveryId: string;
  tenantId: string;
  attempt: number;
  startedAt: Date;
  latencyMs: number;
  responseStatus: number | null;
  error: string | null;
  responseExcerpt: string | null;
  // What the delivery becomes: pending (with nextAttemptAt) or settled.
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

export class DeliveryStore {
  // A burst of events fans out into more deliveries in seconds than autovacuum looks at in a
  // minute; planned as an empty table, a claim sorts every due row instead of reading the index.
  private readonly growth: AnalyzeOnGrowth;

  constructor(
    private readonly pool: Pool,
    options: { onError?: (error: unknown) => void } = {},
  ) {
    this.growth = new AnalyzeOnGrowth(pool, ['webhook_deliveries', 'outgoing_events'], options);
  }

  // Turns up to `limit` outbox events into one pending delivery per subscribed, enabled endpoint
  // whose channel the catalog allows for the event. Returns how many events were taken.
  async fanOut(now: Date, limit: number, horizonMs: number): Promise<number> {
    const { rows } = await this.pool.query<{ events: number; deliveries: number }>({
      name: 'webhooks-fan-out',
      text: `WITH batch AS (
               SELECT envelope_id, tenant_id, type FROM outgoing_events
                WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED
             ), fanned AS (
               INSERT INTO webhook_deliveries (tenant_id, delivery_id, endpoint_id, envelope_id, event_type, status, next_attempt_at, deadline_at, created_at)
               SELECT b.tenant_id, svc_uuidv7($2), e.endpoint_id, b.envelope_id, b.type, 'pending', $2::timestamptz, $2::timestamptz + $3 * interval '1 millisecond', $2::timestamptz
                 FROM batch b
                 JOIN webhook_endpoints e
                   ON e.tenant_id = b.tenant_id AND e.status = 'enabled' AND e.deleted_at IS NULL AND b.type = ANY (e.event_types)
                WHERE (b.type, e.channel) IN (SELECT * FROM unnest($4::text[], $5::text[]))
               RETURNING 1
             ), marked AS (
               UPDATE outgoing_events o SET fanned_out_at = $2 FROM batch b WHERE o.envelope_id = b.envelope_id RETURNING 1
             )
             SELECT (SELECT count(*)::int FROM marked) AS events, (SELECT count(*)::int FROM fanned) AS deliveries`,
      values: [limit, now, horizonMs, DELIVERABLE_TYPES, DELIVERABLE_CHANNELS],
    });
    const { events, deliveries } = rows[0]!;
    this.growth.note(deliveries);
    return events;
  }

  // Claims up to `limit` due deliveries, at most `perEndpoint` per endpoint (less for endpoints
  // already busy in this worker: `free` gives their remaining slots; a full one is skipped).
  async claim(input: { now: Date; limit: number; perEndpoint: number; free: Map<string, number>; leaseMs: number }): Promise<ClaimedDelivery[]> {
    const full = [...input.free].filter(([, slots]) => slots <= 0).map(([id]) => id);
    const partial = [...input.free].filter(([, slots]) => slots > 0);
    const { rows } = await this.pool.query<ClaimedDelivery>({
      name: 'webhooks-claim',
      text: `WITH due AS (
               SELECT delivery_id, endpoint_id, next_attempt_at FROM webhook_deliveries
                WHERE status = 'pending' AND next_attempt_at <= $1 AND endpoint_id <> ALL ($2::uuid[])
                  AND (max_attempts IS NULL OR attempts < max_attempts)
                ORDER BY next_attempt_at
                LIMIT $3 FOR UPDATE SKIP LOCKED
             ), chosen AS (
               SELECT r.delivery_id FROM (
                 SELECT delivery_id, endpoint_id, next_attempt_at,
                        row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at) AS rank
                   FROM due) r
                 LEFT JOIN unnest($4::uuid[], $5::int[]) AS f(endpoint_id, slots) ON f.endpoint_id = r.endpoint_id
                WHERE r.rank <= coalesce(f.slots, $6)
                ORDER BY r.next_attempt_at
                LIMIT $7
             )
             UPDATE webhook_deliveries d
                SET attempts = d.attempts + 1, next_attempt_at = $1::timestamptz + $8 * interval '1 millisecond'
               FROM chosen c, webhook_endpoints e, outgoing_events o
              WHERE d.delivery_id = c.delivery_id AND e.endpoint_id = d.endpoint_id AND o.envelope_id = d.envelope_id
             RETURNING d.delivery_id, d.tenant_id, d.endpoint_id, d.envelope_id, d.attempts, d.max_attempts, d.deadline_at,
                       e.url, e.channel, e.status AS endpoint_status, e.deleted_at IS NOT NULL AS endpoint_deleted,
                       e.secret_sealed, e.previous_secret_sealed, e.previous_secret_valid_until,
                       array(SELECT r.secret_sealed FROM webhook_retired_secrets r
                              WHERE r.tenant_id = e.tenant_id AND r.endpoint_id = e.endpoint_id AND r.valid_until > $1::timestamptz
                              ORDER BY r.valid_until DESC, r.secret_id DESC) AS retired_secrets_sealed,
                       o.type, o.classification, o.created_at AS event_created_at, o.data`,
      values: [
        input.now,
        full,
        input.limit * 4,
        partial.map(([id]) => id),
        partial.map(([, slots]) => slots),
        input.perEndpoint,
        input.limit,
        input.leaseMs,
      ],
    });
    return rows;
  }

  // Of these endpoints, those disabled or deleted now. A claim reads the endpoint's status in the
  // snapshot its statement began with, so an endpoint disabled while the claim ran came back
  // enabled: asked again once the claim has committed, a disable that has answered is seen.
  async stoppedEndpoints(endpointIds: string[]): Promise<Set<string>> {
    if (endpointIds.length === 0) return new Set();
    const { rows } = await this.pool.query<{ endpoint_id: string }>({
      name: 'webhooks-stopped-endpoints',
      text: `SELECT endpoint_id FROM webhook_endpoints WHERE endpoint_id = ANY ($1::uuid[]) AND (status <> 'enabled' OR deleted_at IS NOT NULL)`,
      values: [endpointIds],
    });
    return new Set(rows.map((row) => row.endpoint_id));
  }

  // A single-attempt delivery (a webhook.test probe) whose attempt was claimed but never recorded
  // (its worker stopped) is failed once its lease runs out, never sent a second time.
  async settleExhausted(now: Date): Promise<void> {
    await this.pool.query({
      name: 'webhooks-settle-exhausted',
      text: `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = $1
              WHERE status = 'pending' AND next_attempt_at <= $1 AND max_attempts IS NOT NULL AND attempts >= max_attempts`,
      values: [now],
    });
  }

  // Records attempts and what their deliveries become, in one statement. A delivery settled
  // meanwhile by someone else (cancelled with its endpoint, or re-claimed after a lost lease)
  // keeps its state; the attempt is logged all the same.
  async record(attempts: AttemptRecord[], now: Date): Promise<void> {
    if (attempts.length === 0) return;
    await this.pool.query({
      name: 'webhooks-record',
      text: `WITH o AS (
               SELECT * FROM json_to_recordset($1::json)
                 AS r(d uuid, t text, a int, s timestamptz, l int, rs int, er text, ex text, st text, nx timestamptz)
             ), logged AS (
               INSERT INTO webhook_attempts (tenant_id, delivery_id, attempt, started_at, latency_ms, response_status, error, response_excerpt, next_retry_at)
               SELECT t, d, a, s, l, rs, er, ex, nx FROM o
               ON CONFLICT (tenant_id, delivery_id, attempt) DO NOTHING
             )
             UPDATE webhook_deliveries w
                SET status = o.st, next_attempt_at = o.nx, completed_at = CASE WHEN o.st = 'pending' THEN NULL ELSE $2::timestamptz END
               FROM o
              WHERE w.delivery_id = o.d AND w.attempts = o.a AND w.status = 'pending'`,
      values: [
        JSON.stringify(
          attempts.map((a) => ({
            d: a.deliveryId,
            t: a.tenantId,
            a: a.attempt,
            s: a.startedAt.toISOString(),
            l: a.latencyMs,
            rs: a.responseStatus,
            er: a.error,
            ex: a.responseExcerpt,
            st: a.status,
            nx: a.nextAttemptAt?.toISOString() ?? null,
          })),
        ),
        now,
      ],
    });
  }
}

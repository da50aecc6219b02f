import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { TokenBuckets } from '../../../platform/rate-limit/token-buckets.ts';
import { applyRateLimitHeaders } from '../http/rate-limit-headers.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { idParam, json, notFound } from '../http/route-schema.ts';
import { eventStatusSchema } from '../../../schemas/responses.ts';

type EventStatus = z.infer<typeof eventStatusSchema>;
type Detail = Record<string, unknown> | null;

// As stored (CHECK constraints hold status and object to the published lists).
interface InboxRow {
  event_id: string;
  object: EventStatus['object'];
  external_id: string;
  sequence: bigint | null;
  status: EventStatus['status'];
  rejection: Detail;
  status_reason: Detail;
  attempts: number;
  received_at: Date;
  occurred_at: Date | null;
  terminal_at: Date | null;
  historical: boolean;
  import_id: string | null;
  content_hash: Buffer;
}

interface StageRow {
  stage: string;
  status: EventStatus['stage_history'][number]['status'];
  at: Date;
  worker: string | null;
  duration_ms: number | null;
  detail: Detail;
}

// GET /v1/events/{event_id}: where an accepted event is, queryable from the moment of the 202.
// Accepts evt_<uuid> and a bare uuid; anything else, or another tenant's event, is a 404.
export function registerEventRoutes(app: FastifyInstance, deps: { pool: Pool; buckets: TokenBuckets }): void {
  const schema = {
    tags: ['ingest'],
    summary: 'Where an accepted event is (scope ingest)',
    params: z.object({ event_id: idParam('evt_') }),
    response: { 200: json(eventStatusSchema, 'the event status record'), 404: notFound('no such event in this tenant') },
  };
  app.withTypeProvider<ZodTypeProvider>().get('/v1/events/:event_id', { config: { scopes: ['ingest'] }, schema }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    applyRateLimitHeaders(reply, await deps.buckets.peek(tenantId));
    const id = parseId('event', request.params.event_id);
    const notFound = () => sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no event with this id in this tenant' });
    if (!id) return notFound();
    const { rows } = await deps.pool.query<InboxRow>(
      `SELECT event_id, object, external_id, sequence, status, rejection, status_reason, attempts, received_at,
              occurred_at, terminal_at, historical, import_id, content_hash
         FROM inbox_events WHERE tenant_id = $1 AND event_id = $2`,
      [tenantId, id],
    );
    const event = rows[0];
    if (!event) return notFound();
    const stages = await deps.pool.query<StageRow>(
      'SELECT stage, status, at, worker, duration_ms, detail FROM event_stages WHERE tenant_id = $1 AND event_id = $2 ORDER BY id',
      [tenantId, id],
    );
    return {
      event_id: ID_PREFIXES.event + event.event_id,
      object: event.object,
      external_id: event.external_id,
      sequence: event.sequence === null ? null : Number(event.sequence),
      status: event.status,
      rejection: event.rejection ?? null,
      status_reason: event.status_reason ?? null,
      attempts: event.attempts,
      received_at: event.received_at.toISOString(),
      occurred_at: event.occurred_at?.toISOString() ?? null,
      terminal_at: event.terminal_at?.toISOString() ?? null,
      historical: event.historical,
      import_id: event.import_id === null ? null : ID_PREFIXES.import + event.import_id,
      content_hash: `sha256:${event.content_hash.toString('hex')}`,
      stage_history: stages.rows.map((s) => ({
        stage: s.stage,
        status: s.status,
        at: s.at.toISOString(),
        worker: s.worker,
        duration_ms: s.duration_ms,
        detail: s.detail ?? null,
      })),
    };
  });
}

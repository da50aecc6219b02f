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
import { eventStages, findInboxEvent } from '../ingest/event-status.ts';

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
    const event = await findInboxEvent(deps.pool, tenantId, id);
    if (!event) return notFound();
    const stages = await eventStages(deps.pool, tenantId, id);
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
      stage_history: stages.map((s) => ({
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

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../schemas/webhooks/catalog.ts';
import { DELIVERY_STATUSES, ROTATION_OVERLAP_DEFAULT_S, rotationRequestSchema } from '../../../schemas/webhooks/resources.ts';
import type { WebhookDeliveries } from '../../webhooks/deliveries.ts';
import type { DestinationPolicy } from '../../webhooks/destination.ts';
import { endpointView, type WebhookEndpoints } from '../../webhooks/endpoints.ts';
import { checkRegistration } from '../../webhooks/registration.ts';
import type { CursorCodec } from '../http/cursor.ts';
import { rawBody, bodyRefusal, readJsonBody } from '../http/json-body.ts';
import { badCursor, page, paging, readCursor, single } from '../http/paging.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { sendProblem } from '../http/problem-reply.ts';
import { QueryReader } from '../http/query-params.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';

export interface WebhookRouteDeps {
  clock: Clock;
  cursors: CursorCodec;
  endpoints: WebhookEndpoints;
  deliveries: WebhookDeliveries;
  destinations: DestinationPolicy;
  testWaitMs: number;
}

type Query = Record<string, string | string[] | undefined>;
type IdParams = { Params: { id: string } };

// Webhook management (scope webhook_mgmt): endpoints, their secrets and test probe, the delivery
// log and replay. None of these takes an Idempotency-Key (the spec: only ingest honours one), and
// a request carrying one is refused rather than have a client believe a retry is safe. An id that
// is not a whk_/whd_ id is answered like an unknown one: a governed 404.
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  const scoped = { config: { scopes: ['webhook_mgmt'] as const }, preHandler: refuseIdempotencyKey('webhook management and delivery replay') };
  const endpointNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no webhook endpoint with this id in this tenant' });
  const deliveryNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no webhook delivery with this id in this tenant' });

  app.post('/v1/webhook-endpoints', scoped, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const checked = await checkRegistration(body.value, deps.destinations);
    if (!checked.ok) return sendProblem(request, reply, checked.code, { detail: 'the endpoint registration is not valid', errors: checked.errors });
    const now = deps.clock.now();
    const { row, secret } = await deps.endpoints.register(request.apiKey!.tenantId, checked.registration, now);
    return reply.code(201).send({ ...endpointView(row, now), secret });
  });

  app.get<{ Querystring: Query }>('/v1/webhook-endpoints', scoped, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const reader = new QueryReader(request.query);
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
    const filters = { r: 'webhook-endpoints', t: tenantId };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const now = deps.clock.now();
    const rows = await deps.endpoints.list(tenantId, limit + 1, after);
    return page(rows, limit, (row) => endpointView(row, now), (last) =>
      deps.cursors.encode({ ...filters, o: last.created_at.toISOString(), e: last.endpoint_id }),
    );
  });

  app.get<IdParams>('/v1/webhook-endpoints/:id', scoped, async (request, reply) => {
    const id = parseId('webhookEndpoint', request.params.id);
    const row = id && (await deps.endpoints.find(request.apiKey!.tenantId, id));
    return row ? endpointView(row, deps.clock.now()) : endpointNotFound(request, reply);
  });

  for (const [action, status] of [['disable', 'disabled'], ['enable', 'enabled']] as const) {
    app.post<IdParams>(`/v1/webhook-endpoints/:id/${action}`, scoped, async (request, reply) => {
      const id = parseId('webhookEndpoint', request.params.id);
      const now = deps.clock.now();
      const row = id && (await deps.endpoints.setStatus(request.apiKey!.tenantId, id, status, now));
      return row ? endpointView(row, now) : endpointNotFound(request, reply);
    });
  }

  app.delete<IdParams>('/v1/webhook-endpoints/:id', scoped, async (request, reply) => {
    const id = parseId('webhookEndpoint', request.params.id);
    const deleted = id && (await deps.endpoints.delete(request.apiKey!.tenantId, id, deps.clock.now()));
    return deleted ? reply.code(204).send() : endpointNotFound(request, reply);
  });

  app.post<IdParams>('/v1/webhook-endpoints/:id/rotate-secret', scoped, async (request, reply) => {
    const id = parseId('webhookEndpoint', request.params.id);
    if (!id) return endpointNotFound(request, reply);
    // The body is optional: none, or {"previous_secret_valid_for_s": n}.
    let overlapS = ROTATION_OVERLAP_DEFAULT_S;
    if (rawBody(request).length > 0) {
      const body = readJsonBody(request);
      if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
      const parsed = rotationRequestSchema.safeParse(body.value);
      if (!parsed.success) {
        return sendProblem(request, reply, 'svc:validation/schema', {
          detail: 'the rotation request is not valid',
          errors: requestSchemaErrors(parsed.error),
        });
      }
      overlapS = parsed.data.previous_secret_valid_for_s ?? overlapS;
    }
    const rotated = await deps.endpoints.rotateSecret(request.apiKey!.tenantId, id, overlapS, deps.clock.now());
    if (!rotated) return endpointNotFound(request, reply);
    return { endpoint_id: `${ID_PREFIXES.webhookEndpoint}${id}`, secret: rotated.secret, previous_secret_valid_until: rotated.previousValidUntil.toISOString() };
  });

  app.post<IdParams>('/v1/webhook-endpoints/:id/test', scoped, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const id = parseId('webhookEndpoint', request.params.id);
    const endpoint = id && (await deps.endpoints.find(tenantId, id));
    if (!endpoint) return endpointNotFound(request, reply);
    if (endpoint.status !== 'enabled') return sendProblem(request, reply, 'svc:webhook/endpoint_inactive', { detail: 'enable the endpoint before testing it' });
    const outcome = await deps.deliveries.test(tenantId, endpoint, deps.clock.now(), deps.testWaitMs);
    switch (outcome.kind) {
      case 'succeeded':
        await deps.endpoints.markVerified(tenantId, endpoint.endpoint_id, deps.clock.now());
        return outcome.delivery;
      case 'failed': {
        // Disabled or deleted while the probe waited: the endpoint was never contacted.
        if (outcome.delivery.status === 'cancelled') return sendProblem(request, reply, 'svc:webhook/endpoint_inactive', { detail: 'the endpoint was disabled before the test was sent' });
        const attempt = outcome.delivery.attempts.at(-1);
        return sendProblem(request, reply, 'svc:webhook/endpoint_failed', {
          detail: `delivery ${outcome.delivery.delivery_id}: ${attempt?.error ?? 'not accepted'}`,
        });
      }
      case 'timed_out':
        return sendProblem(request, reply, 'svc:webhook/test_timeout', {
          detail: `delivery ${ID_PREFIXES.webhookDelivery}${outcome.deliveryId} is queued; its outcome will appear in the delivery list`,
        });
    }
  });

  app.get<{ Querystring: Query }>('/v1/webhook-deliveries', scoped, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const reader = new QueryReader(request.query);
    const endpointText = reader.text('endpoint_id');
    const endpointId = endpointText === undefined ? undefined : parseId('webhookEndpoint', endpointText);
    if (endpointText !== undefined && !endpointId) reader.errors.push({ path: 'endpoint_id', code: 'svc:request/invalid_parameter', message: 'must be a whk_ id' });
    const status = single(reader, 'status', DELIVERY_STATUSES);
    const eventType = single(reader, 'event_type', WEBHOOK_EVENT_TYPES);
    const since = reader.dateTime('since');
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
    const filters = { r: 'webhook-deliveries', t: tenantId, n: endpointId ?? null, s: status ?? null, y: eventType ?? null, f: since?.toISOString() ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await deps.deliveries.list(tenantId, { endpointId, status, eventType, since }, limit + 1, after);
    return page(rows, limit, (view) => view, (last) => deps.cursors.encode({ ...filters, o: last.created_at, e: last.delivery_id.slice(ID_PREFIXES.webhookDelivery.length) }));
  });

  app.get<IdParams>('/v1/webhook-deliveries/:id', scoped, async (request, reply) => {
    const id = parseId('webhookDelivery', request.params.id);
    const delivery = id && (await deps.deliveries.find(request.apiKey!.tenantId, id));
    return delivery || deliveryNotFound(request, reply);
  });

  app.post<IdParams>('/v1/webhook-deliveries/:id/replay', scoped, async (request, reply) => {
    const id = parseId('webhookDelivery', request.params.id);
    if (!id) return deliveryNotFound(request, reply);
    const outcome = await deps.deliveries.replay(request.apiKey!.tenantId, id, deps.clock.now());
    switch (outcome.kind) {
      case 'not_found':
        return deliveryNotFound(request, reply);
      case 'endpoint_inactive':
        return sendProblem(request, reply, 'svc:webhook/endpoint_inactive', { detail: 'the delivery\'s endpoint is disabled or deleted' });
      case 'replayed':
        return reply.code(202).send(outcome.delivery);
    }
  });
}

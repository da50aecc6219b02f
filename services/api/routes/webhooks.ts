import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../platform/clock.ts';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../schemas/webhooks/catalog.ts';
import { webhookRegistrationContract } from '../../../schemas/api-components.ts';
import {
  DELIVERY_STATUSES,
  ROTATION_OVERLAP_DEFAULT_S,
  rotationRequestSchema,
  secretRotationSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
  webhookEndpointCreatedSchema,
  webhookEndpointPageSchema,
  webhookEndpointSchema,
} from '../../../schemas/webhooks/resources.ts';
import type { WebhookDeliveries } from '../../webhooks/deliveries.ts';
import type { DestinationPolicy } from '../../webhooks/destination.ts';
import { endpointView, type WebhookEndpoints } from '../../webhooks/endpoints.ts';
import { checkRegistration } from '../../webhooks/registration.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { rawBody, bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { badCursor, page, readCursor } from '../../../platform/http/paging.ts';
import { NO_BODY_RESPONSES, refuseBody } from '../http/no-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { dateTime, pagingShape, single, text } from '../../../platform/http/query-schema.ts';
import { empty, idParam, invalidQuery, json, notFound, problem } from '../http/route-schema.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';

export interface WebhookRouteDeps {
  clock: Clock;
  cursors: CursorCodec;
  endpoints: WebhookEndpoints;
  deliveries: WebhookDeliveries;
  destinations: DestinationPolicy;
  testWaitMs: number;
}

const endpointParams = z.object({ id: idParam('whk_') });
const deliveryParams = z.object({ id: idParam('whd_') });
const endpointsQuery = z.strictObject(pagingShape());
const deliveriesQuery = z.strictObject({
  endpoint_id: text()
    .refine((value) => parseId('webhookEndpoint', value) !== undefined, { error: 'must be a whk_ id', abort: true })
    .transform((value) => parseId('webhookEndpoint', value)!)
    .optional()
    .meta({ description: 'whk_ id' }),
  status: single(DELIVERY_STATUSES),
  event_type: single(WEBHOOK_EVENT_TYPES),
  since: dateTime().meta({ description: 'deliveries created at or after' }),
  ...pagingShape(),
});
const unknownEndpoint = notFound();

// Webhook management (scope webhook_mgmt): endpoints, their secrets and test probe, the delivery
// log and replay. None of these takes an Idempotency-Key (the spec: only ingest honours one), and
// a request carrying one is refused rather than have a client believe a retry is safe. An id that
// is not a whk_/whd_ id is answered like an unknown one: a governed 404.
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const scoped = { config: { scopes: ['webhook_mgmt'] as const }, preHandler: refuseIdempotencyKey('webhook management and delivery replay') };
  const tags = ['webhooks'];
  const summary = (what: string) => `${what} (scope webhook_mgmt)`;
  const endpointAction = (what: string) => ({
    tags,
    summary: summary(what),
    params: endpointParams,
    response: { 200: json(webhookEndpointSchema, 'the endpoint after the action'), ...NO_BODY_RESPONSES, 404: unknownEndpoint },
  });
  const endpointNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no webhook endpoint with this id in this tenant' });
  const deliveryNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no webhook delivery with this id in this tenant' });

  // Bodies are read after authentication from the signed bytes (contracts.ts).
  const register = {
    tags,
    summary: summary('Register an endpoint; its secret is shown once'),
    body: webhookRegistrationContract,
    response: {
      201: json(webhookEndpointCreatedSchema, 'registered and enabled'),
      400: problem(
        'svc:validation/schema; svc:webhook/event_not_deliverable (an event type the channel may not carry); ' +
          'svc:webhook/destination_refused (not HTTPS, credentials in the URL, or an address that is not public, also after resolution)',
      ),
      415: problem('the body is not application/json'),
    },
  };
  routes.post('/v1/webhook-endpoints', { ...scoped, schema: register }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const checked = await checkRegistration(body.value, deps.destinations);
    if (!checked.ok) return sendProblem(request, reply, checked.code, { detail: 'the endpoint registration is not valid', errors: checked.errors });
    const now = deps.clock.now();
    const { row, secret } = await deps.endpoints.register(request.apiKey!.tenantId, checked.registration, now);
    return reply.code(201).send({ ...endpointView(row, now), secret });
  });

  const listEndpoints = {
    tags,
    summary: summary('Endpoints, oldest first, by opaque cursor'),
    querystring: endpointsQuery,
    response: { 200: json(webhookEndpointPageSchema, 'a page'), 400: invalidQuery },
  };
  routes.get('/v1/webhook-endpoints', { ...scoped, schema: listEndpoints }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { limit, cursor: cursorText } = request.query;
    const filters = { r: 'webhook-endpoints', t: tenantId };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const now = deps.clock.now();
    const rows = await deps.endpoints.list(tenantId, limit + 1, after);
    return page(rows, limit, (row) => endpointView(row, now), (last) =>
      deps.cursors.encode({ ...filters, o: last.created_at.toISOString(), e: last.endpoint_id }),
    );
  });

  const readEndpoint = {
    tags,
    summary: summary('An endpoint (never its secret)'),
    params: endpointParams,
    response: { 200: json(webhookEndpointSchema, 'found'), 404: unknownEndpoint },
  };
  routes.get('/v1/webhook-endpoints/:id', { ...scoped, schema: readEndpoint }, async (request, reply) => {
    const id = parseId('webhookEndpoint', request.params.id);
    const row = id && (await deps.endpoints.find(request.apiKey!.tenantId, id));
    return row ? endpointView(row, deps.clock.now()) : endpointNotFound(request, reply);
  });

  const toggles = [
    ['disable', 'disabled', 'Disable an endpoint: nothing is delivered to it and its pending deliveries are cancelled'],
    ['enable', 'enabled', 'Enable a disabled endpoint'],
  ] as const;
  for (const [action, status, what] of toggles) {
    routes.post(`/v1/webhook-endpoints/:id/${action}`, { ...scoped, schema: endpointAction(what) }, async (request, reply) => {
      const id = parseId('webhookEndpoint', request.params.id);
      if (!id) return endpointNotFound(request, reply);
      const refused = refuseBody(request, action);
      if (refused) return sendProblem(request, reply, refused.code, refused);
      const now = deps.clock.now();
      const row = await deps.endpoints.setStatus(request.apiKey!.tenantId, id, status, now);
      return row ? endpointView(row, now) : endpointNotFound(request, reply);
    });
  }

  const remove = {
    tags,
    summary: summary('Delete an endpoint; its pending deliveries are cancelled, its delivery log stays'),
    params: endpointParams,
    response: { 204: empty('deleted'), 404: unknownEndpoint },
  };
  routes.delete('/v1/webhook-endpoints/:id', { ...scoped, schema: remove }, async (request, reply) => {
    const id = parseId('webhookEndpoint', request.params.id);
    const deleted = id && (await deps.endpoints.delete(request.apiKey!.tenantId, id, deps.clock.now()));
    return deleted ? reply.code(204).send() : endpointNotFound(request, reply);
  });

  const rotate = {
    tags,
    summary: summary('Rotate the secret: the new one is shown once; the previous one keeps signing (a second v1) until previous_secret_valid_until'),
    description: 'The body is optional: none, or {"previous_secret_valid_for_s": n}.',
    params: endpointParams,
    body: rotationRequestSchema,
    response: { 200: json(secretRotationSchema, 'rotated'), 400: problem('svc:validation/schema'), 404: unknownEndpoint },
  };
  routes.post('/v1/webhook-endpoints/:id/rotate-secret', { ...scoped, schema: rotate }, async (request, reply) => {
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

  const probe = {
    tags,
    summary: summary('Send a signed webhook.test through the delivery worker and wait for its one attempt'),
    params: endpointParams,
    response: {
      200: json(webhookDeliverySchema, 'the endpoint answered 2xx (verified; stamped as verified_at)'),
      ...NO_BODY_RESPONSES,
      404: unknownEndpoint,
      409: problem('svc:webhook/endpoint_inactive: the endpoint is disabled'),
      502: problem('svc:webhook/endpoint_failed: the endpoint did not answer 2xx (the detail names the delivery and why)'),
      504: problem('svc:webhook/test_timeout: queued, outcome not observed in time; it appears in the delivery list'),
    },
  };
  routes.post('/v1/webhook-endpoints/:id/test', { ...scoped, schema: probe }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const id = parseId('webhookEndpoint', request.params.id);
    if (!id) return endpointNotFound(request, reply);
    const refused = refuseBody(request, 'test');
    if (refused) return sendProblem(request, reply, refused.code, refused);
    const endpoint = await deps.endpoints.find(tenantId, id);
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

  const listDeliveries = {
    tags,
    summary: summary('Deliveries, newest first, each with every attempt (response status, latency, next scheduled retry)'),
    querystring: deliveriesQuery,
    response: { 200: json(webhookDeliveryPageSchema, 'a page'), 400: invalidQuery },
  };
  routes.get('/v1/webhook-deliveries', { ...scoped, schema: listDeliveries }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { endpoint_id: endpointId, status, event_type: eventType, since, limit, cursor: cursorText } = request.query;
    const filters = { r: 'webhook-deliveries', t: tenantId, n: endpointId ?? null, s: status ?? null, y: eventType ?? null, f: since?.toISOString() ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await deps.deliveries.list(tenantId, { endpointId, status, eventType, since }, limit + 1, after);
    return page(rows, limit, (view) => view, (last) => deps.cursors.encode({ ...filters, o: last.created_at, e: last.delivery_id.slice(ID_PREFIXES.webhookDelivery.length) }));
  });

  const readDelivery = {
    tags,
    summary: summary('A delivery with every attempt'),
    params: deliveryParams,
    response: { 200: json(webhookDeliverySchema, 'found'), 404: notFound() },
  };
  routes.get('/v1/webhook-deliveries/:id', { ...scoped, schema: readDelivery }, async (request, reply) => {
    const id = parseId('webhookDelivery', request.params.id);
    const delivery = id && (await deps.deliveries.find(request.apiKey!.tenantId, id));
    return delivery || deliveryNotFound(request, reply);
  });

  const replay = {
    tags,
    summary: summary('Send the same envelope (same whe_ id) again to the same endpoint, as a new delivery'),
    params: deliveryParams,
    response: {
      202: json(webhookDeliverySchema, 'the new delivery, due now'),
      ...NO_BODY_RESPONSES,
      404: notFound(),
      409: problem('svc:webhook/endpoint_inactive: the endpoint is disabled or deleted'),
    },
  };
  routes.post('/v1/webhook-deliveries/:id/replay', { ...scoped, schema: replay }, async (request, reply) => {
    const id = parseId('webhookDelivery', request.params.id);
    if (!id) return deliveryNotFound(request, reply);
    const refused = refuseBody(request, 'replay');
    if (refused) return sendProblem(request, reply, refused.code, refused);
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

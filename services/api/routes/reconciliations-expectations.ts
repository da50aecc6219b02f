import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { badCursor, page, readCursor } from '../../../platform/http/paging.ts';
import { pagingShape } from '../../../platform/http/query-schema.ts';
import { parseId } from '../../../platform/ids.ts';
import type { Reconciliations } from '../../reconciliations/reconciliations.ts';
import { bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { empty, idParam, invalidQuery, json, notFound, problem } from '../http/route-schema.ts';
import { expectationListSchema, expectationRequestSchema, expectationSchema } from '../../../schemas/reconciliation-expectations.ts';

// Expected declarations: the feed's owner (ingest key) says which daily declarations it sends and
// by when; ingest and read keys list them. A day whose declaration is late is announced as
// coverage.degraded by the reconcile pipeline.
export function registerReconciliationExpectationRoutes(app: FastifyInstance, deps: { clock: Clock; cursors: CursorCodec; assets: TenantAssetRegistry; reconciliations: Reconciliations }): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['reconciliations'];
  const noKey = refuseIdempotencyKey('reconciliation expectations');
  const expectations = deps.reconciliations.expectations;

  // The body is read after authentication from the signed bytes (contracts.ts).
  const expect = {
    tags,
    summary: 'Expect a declaration every UTC day for a scope and asset, due minutes after the day ends (scope ingest)',
    body: expectationRequestSchema,
    response: {
      201: json(expectationSchema, 'expected from the day in progress on'),
      400: problem('svc:validation/schema, or an Idempotency-Key (svc:request/bad_request)'),
      409: problem('svc:reconciliation/expectation_exists: this scope and asset are already expected'),
    },
  };
  routes.post('/v1/reconciliation-expectations', { config: { scopes: ['ingest'] as const }, preHandler: noKey, schema: expect }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const tenantId = request.apiKey!.tenantId;
    const outcome = await expectations.create(tenantId, body.value, await deps.assets.forTenant(tenantId), deps.clock.now());
    if (outcome.kind === 'invalid') return sendProblem(request, reply, outcome.code, { detail: 'the expectation is not valid', errors: outcome.errors });
    if (outcome.kind === 'conflict') return sendProblem(request, reply, 'svc:reconciliation/expectation_exists', { detail: outcome.detail });
    return reply.code(201).send(outcome.view);
  });

  const list = {
    tags,
    summary: 'The expected declarations, oldest first, by opaque cursor (scope ingest or read)',
    querystring: z.strictObject(pagingShape()),
    response: { 200: json(expectationListSchema, 'a page of the tenant\'s expectations'), 400: invalidQuery },
  };
  routes.get('/v1/reconciliation-expectations', { config: { scopes: ['ingest', 'read'] as const }, preHandler: noKey, schema: list }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { limit, cursor: cursorText } = request.query;
    const filters = { r: 'reconciliation-expectations', t: tenantId };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await expectations.list(tenantId, limit + 1, after);
    return page(rows, limit, (r) => r.view, (last) => deps.cursors.encode({ ...filters, o: last.row.created_at.toISOString(), e: last.row.expectation_id }));
  });

  const remove = {
    tags,
    summary: 'Stop expecting a declaration (scope ingest)',
    params: z.object({ id: idParam('rce_') }),
    response: { 204: empty('no longer expected'), 404: notFound('no such expectation in this tenant') },
  };
  routes.delete('/v1/reconciliation-expectations/:id', { config: { scopes: ['ingest'] as const }, preHandler: noKey, schema: remove }, async (request, reply) => {
    const id = parseId('reconciliationExpectation', request.params.id);
    if (id && (await expectations.remove(request.apiKey!.tenantId, id, deps.clock.now()))) return reply.code(204).send();
    return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no expectation with this id in this tenant' });
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import type { Reconciliations } from '../../reconciliations/reconciliations.ts';
import { RECONCILIATION_STATUSES, reconciliationPageSchema, reconciliationRequestSchema, reconciliationSchema } from '../../../schemas/reconciliations.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { badCursor, page, readCursor } from '../../../platform/http/paging.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { dateTime, optionalText, pagingShape, single, windowCheck } from '../../../platform/http/query-schema.ts';
import { idParam, invalidQuery, json, notFound as unknownId, problem } from '../http/route-schema.ts';
import { registerReconciliationBreakRoutes } from './reconciliations-breaks.ts';
import { registerReconciliationExpectationRoutes } from './reconciliations-expectations.ts';

const listQuery = z
  .strictObject({
    status: single(RECONCILIATION_STATUSES),
    from: dateTime().meta({ description: 'periods holding an instant at or after (by their own bounds: a period ending here, exclusive, does not)' }),
    to: dateTime().meta({ description: 'periods holding an instant at or before (a period starting here, exclusive, does not)' }),
    subject: optionalText().meta({ description: 'external_id of the scope\'s account or party' }),
    subject_kind: single(['tenant', 'account', 'party'] as const),
    ...pagingShape(),
  })
  .refine(...windowCheck('from', 'to'));

// Reconciliations: declared with an ingest key (the feed's owner states what it sent), read with
// an ingest or read key. No Idempotency-Key (the spec): a declaration carrying a customer_reference
// is safe to retry (the same content answers the original with 200; other content is a 409);
// one without is a new declaration each time.
export function registerReconciliationRoutes(
  app: FastifyInstance,
  deps: { clock: Clock; cursors: CursorCodec; assets: TenantAssetRegistry; reconciliations: Reconciliations },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const noKey = refuseIdempotencyKey('reconciliations');
  const readers = { config: { scopes: ['ingest', 'read'] as const }, preHandler: noKey };
  const tags = ['reconciliations'];
  const notFound = (request: FastifyRequest, reply: FastifyReply, detail = 'no reconciliation with this id in this tenant') =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail });

  registerReconciliationBreakRoutes(app, deps);
  registerReconciliationExpectationRoutes(app, deps);

  // The body is read after authentication from the signed bytes (contracts.ts).
  const declare = {
    tags,
    summary: 'Declare a control total and get its first comparison (scope ingest)',
    body: reconciliationRequestSchema,
    response: {
      200: json(reconciliationSchema, 'the declaration already made with this customer_reference and the same content'),
      201: json(reconciliationSchema, 'declared; result and history included'),
      400: problem('svc:validation/schema, svc:validation/money_scale_mismatch, svc:reconciliation/asset_not_held, or an Idempotency-Key (svc:request/bad_request)'),
      404: unknownId('the scope\'s account or party (or the corrected reconciliation, or the import) is unknown in this tenant'),
      409: problem('svc:reconciliation/reference_conflict: the customer_reference names a declaration of other content'),
    },
  };
  routes.post('/v1/reconciliations', { config: { scopes: ['ingest'] as const }, preHandler: noKey, schema: declare }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const outcome = await deps.reconciliations.create(tenantId, body.value, await deps.assets.forTenant(tenantId), deps.clock.now());
    switch (outcome.kind) {
      case 'invalid':
        return sendProblem(request, reply, outcome.code, { detail: 'the declaration is not valid', errors: outcome.errors });
      case 'not_found':
        return notFound(request, reply, outcome.detail);
      case 'conflict':
        return sendProblem(request, reply, 'svc:reconciliation/reference_conflict', { detail: outcome.detail });
      case 'repeated':
        return reply.code(200).send(outcome.view);
      case 'created':
        return reply.code(201).send(outcome.view);
    }
  });

  const read = {
    tags,
    summary: 'A reconciliation with every distinct result (scope ingest or read)',
    params: z.object({ id: idParam('rcn_') }),
    response: { 200: json(reconciliationSchema, 'found'), 404: unknownId('no such reconciliation in this tenant') },
  };
  routes.get('/v1/reconciliations/:id', { ...readers, schema: read }, async (request, reply) => {
    const id = parseId('reconciliation', request.params.id);
    const view = id && (await deps.reconciliations.find(request.apiKey!.tenantId, id, { history: true }));
    return view || notFound(request, reply);
  });

  const list = {
    tags,
    summary: 'Reconciliations, newest first, by opaque cursor (scope ingest or read)',
    querystring: listQuery,
    response: { 200: json(reconciliationPageSchema, 'a page (latest result each)'), 400: invalidQuery },
  };
  routes.get('/v1/reconciliations', { ...readers, schema: list }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { status, from, to, subject, subject_kind: subjectKind, limit, cursor: cursorText } = request.query;
    const filters = { r: 'reconciliations', t: tenantId, s: status ?? null, f: from?.toISOString() ?? null, u: to?.toISOString() ?? null, q: subject ?? null, k: subjectKind ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await deps.reconciliations.list(
      tenantId,
      { ...(status ? { status } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}), ...(subject ? { subjectId: subject } : {}), ...(subjectKind ? { subjectKind } : {}) },
      limit + 1,
      after,
    );
    const views = new Map((await deps.reconciliations.views(tenantId, rows.slice(0, limit))).map((v) => [v.reconciliation_id, v]));
    return page(rows, limit, (row) => views.get(`${ID_PREFIXES.reconciliation}${row.reconciliation_id}`)!, (last) =>
      deps.cursors.encode({ ...filters, o: last.created_at.toISOString(), e: last.reconciliation_id }),
    );
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import type { Reconciliations } from '../../../pipelines/reconcile/reconciliations.ts';
import { RECONCILIATION_STATUSES } from '../../../schemas/reconciliations.ts';
import type { CursorCodec } from '../http/cursor.ts';
import { bodyRefusal, readJsonBody } from '../http/json-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { badCursor, page, paging, readCursor, single } from '../http/paging.ts';
import { sendProblem } from '../http/problem-reply.ts';
import { QueryReader } from '../http/query-params.ts';
import { registerReconciliationBreakRoutes } from './reconciliations-breaks.ts';
import { registerReconciliationExpectationRoutes } from './reconciliations-expectations.ts';

// Reconciliations: declared with an ingest key (the feed's owner states what it sent), read with
// an ingest or read key. No Idempotency-Key (the spec): a declaration carrying a customer_reference
// is safe to retry (the same content answers the original with 200; other content is a 409);
// one without is a new declaration each time.
export function registerReconciliationRoutes(
  app: FastifyInstance,
  deps: { clock: Clock; cursors: CursorCodec; assets: TenantAssetRegistry; reconciliations: Reconciliations },
): void {
  const noKey = refuseIdempotencyKey('reconciliations');
  const readers = { config: { scopes: ['ingest', 'read'] as const }, preHandler: noKey };
  const notFound = (request: FastifyRequest, reply: FastifyReply, detail = 'no reconciliation with this id in this tenant') =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail });

  registerReconciliationBreakRoutes(app, deps);
  registerReconciliationExpectationRoutes(app, deps);

  app.post('/v1/reconciliations', { config: { scopes: ['ingest'] as const }, preHandler: noKey }, async (request, reply) => {
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

  app.get<{ Params: { id: string } }>('/v1/reconciliations/:id', readers, async (request, reply) => {
    const id = parseId('reconciliation', request.params.id);
    const view = id && (await deps.reconciliations.find(request.apiKey!.tenantId, id, { history: true }));
    return view || notFound(request, reply);
  });

  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/v1/reconciliations', readers, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const reader = new QueryReader(request.query);
    const status = single(reader, 'status', RECONCILIATION_STATUSES);
    const { since: from, until: to } = reader.window('from', 'to');
    const subject = reader.text('subject');
    const subjectKind = single(reader, 'subject_kind', ['tenant', 'account', 'party'] as const);
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
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

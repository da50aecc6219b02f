import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { parseId } from '../../../platform/ids.ts';
import type { BreakActionOutcome } from '../../../pipelines/reconcile/breaks.ts';
import { csvItems, type ItemsPosition } from '../../../pipelines/reconcile/items.ts';
import type { Reconciliations } from '../../../pipelines/reconcile/reconciliations.ts';
import { acknowledgeRequestSchema, BREAK_STATES, commentRequestSchema, resolveRequestSchema } from '../../../schemas/reconciliation-breaks.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';
import type { CursorCodec } from '../http/cursor.ts';
import { bodyRefusal, readJsonBody } from '../http/json-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { badCursor, page, paging, readCursor, single } from '../http/paging.ts';
import { sendProblem } from '../http/problem-reply.ts';
import { QueryReader } from '../http/query-params.ts';

// Working a reconciliation's differences: every difference item (paged, or all as CSV), and the
// breaks a mismatch opens, acknowledged, commented and resolved by the caller (recorded as its
// API key, `api_key:<key_id>`). Reads take an ingest or read key; acting on a break takes the
// ingest key that declares. No Idempotency-Key: each action is a state transition that a repeat
// cannot apply twice (acknowledging an acknowledged break is a 409 naming its state).
export function registerReconciliationBreakRoutes(
  app: FastifyInstance,
  deps: { clock: Clock; cursors: CursorCodec; reconciliations: Reconciliations },
): void {
  const noKey = refuseIdempotencyKey('reconciliation breaks');
  const readers = { config: { scopes: ['ingest', 'read'] as const }, preHandler: noKey };
  const writers = { config: { scopes: ['ingest'] as const }, preHandler: noKey };
  const breaks = deps.reconciliations.breaks;
  const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) => sendProblem(request, reply, 'svc:resource/not_found', { detail: `no ${what} with this id in this tenant` });

  app.get<{ Params: { id: string }; Querystring: Record<string, string | string[] | undefined> }>('/v1/reconciliations/:id/items', readers, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const id = parseId('reconciliation', request.params.id);
    const reader = new QueryReader(request.query);
    const format = single(reader, 'format', ['json', 'csv'] as const) ?? 'json';
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
    if (!id) return notFound(request, reply, 'reconciliation');
    if (format === 'csv') {
      const first = await deps.reconciliations.items(tenantId, id, null, 500);
      if (!first) return notFound(request, reply, 'reconciliation');
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="rcn_${id}-items.csv"`);
      return reply.send(Readable.from(csvItems(first, (after) => deps.reconciliations.items(tenantId, id, after, 500))));
    }
    const filters = { r: 'reconciliation-items', t: tenantId, i: id };
    let after: ItemsPosition | null = null;
    if (cursorText !== undefined) {
      const payload = deps.cursors.decode(cursorText);
      const matches = payload && Object.entries(filters).every(([k, v]) => payload[k] === v) && (payload.s === 'movement' || payload.s === 'event');
      if (!matches) return badCursor(request, reply);
      after = { source: payload.s as ItemsPosition['source'], at: (payload.o as string | null) ?? null, id: (payload.e as string | null) ?? null };
    }
    const found = await deps.reconciliations.items(tenantId, id, after, limit);
    if (!found) return notFound(request, reply, 'reconciliation');
    return {
      data: found.items,
      has_more: found.next !== null,
      ...(found.next ? { next_cursor: deps.cursors.encode({ ...filters, s: found.next.source, o: found.next.at, e: found.next.id }) } : {}),
    };
  });

  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/v1/reconciliation-breaks', readers, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const reader = new QueryReader(request.query);
    const state = single(reader, 'state', BREAK_STATES);
    const reconciliation = reader.text('reconciliation_id');
    const reconciliationId = reconciliation === undefined ? undefined : parseId('reconciliation', reconciliation);
    if (reconciliation !== undefined && !reconciliationId) reader.errors.push({ path: 'reconciliation_id', code: 'svc:request/invalid_parameter', message: 'must be an rcn_ id' });
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
    const filters = { r: 'reconciliation-breaks', t: tenantId, s: state ?? null, q: reconciliationId ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await breaks.list(tenantId, { ...(state ? { state } : {}), ...(reconciliationId ? { reconciliationId } : {}) }, limit + 1, after);
    return page(rows, limit, ({ cursor: _cursor, ...view }) => view, (last) => deps.cursors.encode({ ...filters, o: last.cursor.at, e: last.cursor.id }));
  });

  app.get<{ Params: { id: string } }>('/v1/reconciliation-breaks/:id', readers, async (request, reply) => {
    const id = parseId('reconciliationBreak', request.params.id);
    const view = id && (await breaks.find(request.apiKey!.tenantId, id));
    return view || notFound(request, reply, 'break');
  });

  const action = <T>(
    path: string,
    schema: { safeParse: (v: unknown) => { success: true; data: T } | { success: false; error: Parameters<typeof requestSchemaErrors>[0] } },
    act: (tenantId: string, breakId: string, by: string, body: T, now: Date) => Promise<BreakActionOutcome>,
  ) =>
    app.post<{ Params: { id: string } }>(path, writers, async (request, reply) => {
      const body = readJsonBody(request);
      if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
      const parsed = schema.safeParse(body.value);
      if (!parsed.success) return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the request is not valid', errors: requestSchemaErrors(parsed.error) });
      const id = parseId('reconciliationBreak', request.params.id);
      if (!id) return notFound(request, reply, 'break');
      const outcome = await act(request.apiKey!.tenantId, id, `api_key:${request.apiKey!.keyId}`, parsed.data, deps.clock.now());
      if (outcome.kind === 'not_found') return notFound(request, reply, 'break');
      if (outcome.kind === 'invalid_state') return sendProblem(request, reply, 'svc:reconciliation/break_state', { detail: `the break is ${outcome.state}` });
      return outcome.view;
    });

  action('/v1/reconciliation-breaks/:id/acknowledge', acknowledgeRequestSchema, async (tenantId, id, by, body, now) => {
    const outcome = await breaks.acknowledge(tenantId, id, by, now);
    return outcome.kind === 'done' && body.note ? breaks.comment(tenantId, id, by, body.note, now) : outcome;
  });
  action('/v1/reconciliation-breaks/:id/comments', commentRequestSchema, (tenantId, id, by, body, now) => breaks.comment(tenantId, id, by, body.body, now));
  action('/v1/reconciliation-breaks/:id/resolve', resolveRequestSchema, (tenantId, id, by, body, now) => breaks.resolve(tenantId, id, by, body.resolution, now));
}

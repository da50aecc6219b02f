import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../platform/clock.ts';
import { parseId } from '../../../platform/ids.ts';
import type { BreakActionOutcome } from '../../reconciliations/breaks.ts';
import { csvItems, type ItemsPosition } from '../../reconciliations/items.ts';
import type { Reconciliations } from '../../reconciliations/reconciliations.ts';
import {
  acknowledgeRequestSchema,
  BREAK_STATES,
  breakPageSchema,
  breakSchema,
  commentRequestSchema,
  differenceItemPageSchema,
  resolveRequestSchema,
} from '../../../schemas/reconciliation-breaks.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { badCursor, page, readCursor, refusePaging } from '../../../platform/http/paging.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { pagingShape, single, text } from '../../../platform/http/query-schema.ts';
import { csvStream, idParam, invalidQuery, json, notFound as unknownId, problem } from '../http/route-schema.ts';

const reconciliationParams = z.object({ id: idParam('rcn_') });
const breakParams = z.object({ id: idParam('rbk_') });
const itemsQuery = z.strictObject({
  format: single(['json', 'csv'] as const).meta({ description: 'json (the default), or csv: every item, RFC 4180, with a header row' }),
  ...pagingShape(),
});
const breaksQuery = z.strictObject({
  state: single(BREAK_STATES),
  reconciliation_id: text()
    .refine((value) => parseId('reconciliation', value) !== undefined, { error: 'must be an rcn_ id', abort: true })
    .transform((value) => parseId('reconciliation', value)!)
    .optional()
    .meta({ description: 'rcn_<uuid>' }),
  ...pagingShape(),
});
const unknownBreak = unknownId('no such break in this tenant');

// Working a reconciliation's differences: every difference item (paged, or all as CSV), and the
// breaks a mismatch opens, acknowledged, commented and resolved by the caller (recorded as its
// API key, `api_key:<key_id>`). Reads take an ingest or read key; acting on a break takes the
// ingest key that declares. No Idempotency-Key: each action is a state transition that a repeat
// cannot apply twice (acknowledging an acknowledged break is a 409 naming its state).
export function registerReconciliationBreakRoutes(
  app: FastifyInstance,
  deps: { clock: Clock; cursors: CursorCodec; reconciliations: Reconciliations },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['reconciliations'];
  const noKey = refuseIdempotencyKey('reconciliation breaks');
  const readers = { config: { scopes: ['ingest', 'read'] as const }, preHandler: noKey };
  const writers = { config: { scopes: ['ingest'] as const }, preHandler: noKey };
  const breaks = deps.reconciliations.breaks;
  const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) => sendProblem(request, reply, 'svc:resource/not_found', { detail: `no ${what} with this id in this tenant` });

  const items = {
    tags,
    summary: 'Every difference item of a reconciliation, paged, or all as CSV (scope ingest or read)',
    params: reconciliationParams,
    querystring: itemsQuery,
    response: {
      200: { description: 'a page of items, or the CSV', content: { 'application/json': { schema: differenceItemPageSchema }, 'text/csv': { schema: csvStream } } },
      400: invalidQuery,
      404: unknownId('no such reconciliation in this tenant'),
    },
  };
  routes.get('/v1/reconciliations/:id/items', { ...readers, schema: items }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const id = parseId('reconciliation', request.params.id);
    const { limit, cursor: cursorText } = request.query;
    const format = request.query.format ?? 'json';
    if (!id) return notFound(request, reply, 'reconciliation');
    if (format === 'csv') {
      const refused = refusePaging(request, reply);
      if (refused) return refused;
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

  const list = {
    tags,
    summary: 'Breaks, newest first, by opaque cursor (scope ingest or read)',
    querystring: breaksQuery,
    response: { 200: json(breakPageSchema, 'a page'), 400: invalidQuery },
  };
  routes.get('/v1/reconciliation-breaks', { ...readers, schema: list }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { state, reconciliation_id: reconciliationId, limit, cursor: cursorText } = request.query;
    const filters = { r: 'reconciliation-breaks', t: tenantId, s: state ?? null, q: reconciliationId ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await breaks.list(tenantId, { ...(state ? { state } : {}), ...(reconciliationId ? { reconciliationId } : {}) }, limit + 1, after);
    return page(rows, limit, ({ cursor: _cursor, ...view }) => view, (last) => deps.cursors.encode({ ...filters, o: last.cursor.at, e: last.cursor.id }));
  });

  const read = {
    tags,
    summary: 'A break with who acknowledged, commented on and resolved it, and when (scope ingest or read)',
    params: breakParams,
    response: { 200: json(breakSchema, 'found'), 404: unknownBreak },
  };
  routes.get('/v1/reconciliation-breaks/:id', { ...readers, schema: read }, async (request, reply) => {
    const id = parseId('reconciliationBreak', request.params.id);
    const view = id && (await breaks.find(request.apiKey!.tenantId, id));
    return view || notFound(request, reply, 'break');
  });

  // Bodies are read after authentication from the signed bytes (contracts.ts).
  const action = <S extends z.ZodType>(
    path: string,
    summary: string,
    schema: S,
    act: (tenantId: string, breakId: string, by: string, body: z.output<S>, now: Date) => Promise<BreakActionOutcome>,
  ) => {
    const contract = {
      tags,
      summary,
      params: breakParams,
      body: schema,
      response: {
        200: json(breakSchema, 'the break after the action'),
        400: problem('svc:validation/schema, or an Idempotency-Key (svc:request/bad_request)'),
        404: unknownBreak,
        409: problem('svc:reconciliation/break_state: the break\'s state does not take this action'),
      },
    };
    routes.post(path, { ...writers, schema: contract }, async (request, reply) => {
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
  };

  action('/v1/reconciliation-breaks/:id/acknowledge', 'Acknowledge an open break, with an optional note kept as a comment (scope ingest)', acknowledgeRequestSchema, async (tenantId, id, by, body, now) => {
    return breaks.acknowledge(tenantId, id, by, now, body.note);
  });
  action('/v1/reconciliation-breaks/:id/comments', 'Comment on a break in any state (scope ingest)', commentRequestSchema, (tenantId, id, by, body, now) => breaks.comment(tenantId, id, by, body.body, now));
  action('/v1/reconciliation-breaks/:id/resolve', 'Resolve an open or acknowledged break, saying how (scope ingest)', resolveRequestSchema, (tenantId, id, by, body, now) => breaks.resolve(tenantId, id, by, body.resolution, now));
}

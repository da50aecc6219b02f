import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import type { PoolClient } from '../../../platform/postgres/pool.ts';
import type { BreakActionOutcome, BreakActionRecorder } from '../../reconciliations/breaks.ts';
import { csvItems, type ItemsPosition } from '../../reconciliations/items.ts';
import { Reconciliations } from '../../reconciliations/reconciliations.ts';
import { acknowledgeRequestSchema, commentRequestSchema, resolveRequestSchema } from '../../../schemas/reconciliation-breaks.ts';
import {
  breakParamsSchema,
  breakQuerySchema,
  consoleBreakDetailSchema,
  consoleBreakPageSchema,
  consoleItemPageSchema,
  reconciliationItemsQuerySchema,
  reconciliationParamsSchema,
} from '../../../schemas/console/routes.ts';
import { breakSchema } from '../../../schemas/reconciliation-breaks.ts';
import { badCursor, page, readCursor, refusePaging } from '../../../platform/http/paging.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { consoleContext } from '../app.ts';
import { auditAs, notFound, type ConsoleRouteDeps } from './common.ts';

// Reconciliation breaks in the console (docs/decisions/0025): the queue, one break with its
// reconciliation, every difference item (and the CSV), and the actions, recorded as the session's
// user (`console:<email>`) and audited. Any console role works breaks: they are operations work,
// not case decisions.
export function registerReconciliationBreakRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const reconciliations = new Reconciliations(deps.pool);
  const breaks = reconciliations.breaks;

  app.get('/console/v1/reconciliation-breaks', { schema: { querystring: breakQuerySchema, response: { 200: consoleBreakPageSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const { state, limit, cursor: cursorText } = request.query as z.output<typeof breakQuerySchema>;
    const filters = { r: 'console-breaks', t: tenantId, s: state ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await breaks.list(tenantId, state ? { state } : {}, limit + 1, after);
    return page(rows, limit, ({ cursor: _cursor, ...view }) => view, (last) => deps.cursors.encode({ ...filters, o: last.cursor.at, e: last.cursor.id }));
  });

  app.get<{ Params: { break_id: string } }>('/console/v1/reconciliation-breaks/:break_id', { schema: { params: breakParamsSchema, response: { 200: consoleBreakDetailSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const id = parseId('reconciliationBreak', request.params.break_id);
    const found = id && (await breaks.find(tenantId, id));
    if (!found) return notFound(request, reply, 'break');
    const reconciliation = await reconciliations.find(tenantId, parseId('reconciliation', found.reconciliation_id)!, { history: true });
    return { ...found, reconciliation: reconciliation ?? null };
  });

  app.get<{ Params: { id: string } }>(
    '/console/v1/reconciliations/:id/items',
    // The CSV answer is a stream: only the JSON page is encoded against the schema.
    { schema: { params: reconciliationParamsSchema, querystring: reconciliationItemsQuerySchema, response: { 200: consoleItemPageSchema } } },
    async (request, reply) => {
      const tenantId = consoleContext(request).user.tenant_id;
      const id = parseId('reconciliation', request.params.id);
      const { format = 'json', limit, cursor: cursorText } = request.query as z.output<typeof reconciliationItemsQuerySchema>;
      if (!id) return notFound(request, reply, 'reconciliation');
      if (format === 'csv') {
        const refused = refusePaging(request, reply);
        if (refused) return refused;
        const first = await reconciliations.items(tenantId, id, null, 500);
        if (!first) return notFound(request, reply, 'reconciliation');
        await auditAs(deps.pool, request, 'reconciliation.items_exported', ID_PREFIXES.reconciliation + id, {}, deps.clock.now());
        reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="rcn_${id}-items.csv"`);
        return reply.send(Readable.from(csvItems(first, (after) => reconciliations.items(tenantId, id, after, 500))));
      }
      const filters = { r: 'console-reconciliation-items', t: tenantId, i: id };
      let after: ItemsPosition | null = null;
      if (cursorText !== undefined) {
        const payload = deps.cursors.decode(cursorText);
        if (!payload || !Object.entries(filters).every(([k, v]) => payload[k] === v) || (payload.s !== 'movement' && payload.s !== 'event')) return badCursor(request, reply);
        after = { source: payload.s, at: (payload.o as string | null) ?? null, id: (payload.e as string | null) ?? null };
      }
      const found = await reconciliations.items(tenantId, id, after, limit);
      if (!found) return notFound(request, reply, 'reconciliation');
      return {
        data: found.items,
        has_more: found.next !== null,
        ...(found.next ? { next_cursor: deps.cursors.encode({ ...filters, s: found.next.source, o: found.next.at, e: found.next.id }) } : {}),
      };
    },
  );

  const action = <T>(
    name: string,
    audited: string,
    schema: z.ZodType<T>,
    act: (tenantId: string, breakId: string, by: string, body: T, now: Date, record: BreakActionRecorder) => Promise<BreakActionOutcome>,
  ) =>
    app.post<{ Params: { break_id: string } }>(
      `/console/v1/reconciliation-breaks/:break_id/${name}`,
      { schema: { params: breakParamsSchema, body: schema, response: { 200: breakSchema } } },
      async (request: FastifyRequest<{ Params: { break_id: string } }>, reply: FastifyReply) => {
        const { user } = consoleContext(request);
        // Checked against the route's schema before the handler (platform/http/contracts.ts).
        const body = request.body as T;
        const id = parseId('reconciliationBreak', request.params.break_id);
        if (!id) return notFound(request, reply, 'break');
        const now = deps.clock.now();
        // The audit row is written in the action's own transaction: no action without its row.
        const record = (db: PoolClient) => auditAs(db, request, audited, ID_PREFIXES.reconciliationBreak + id, {}, now);
        const outcome = await act(user.tenant_id, id, `console:${user.email}`, body, now, record);
        if (outcome.kind === 'not_found') return notFound(request, reply, 'break');
        if (outcome.kind === 'invalid_state') return sendProblem(request, reply, 'svc:reconciliation/break_state', { detail: `the break is ${outcome.state}` });
        return outcome.view;
      },
    );

  action('acknowledge', 'reconciliation_break.acknowledged', acknowledgeRequestSchema, (tenantId, id, by, body, now, record) => breaks.acknowledge(tenantId, id, by, now, body.note, record));
  action('comments', 'reconciliation_break.commented', commentRequestSchema, (tenantId, id, by, body, now, record) => breaks.comment(tenantId, id, by, body.body, now, record));
  action('resolve', 'reconciliation_break.resolved', resolveRequestSchema, (tenantId, id, by, body, now, record) => breaks.resolve(tenantId, id, by, body.resolution, now, record));
}

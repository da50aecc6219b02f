import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { alertParamsSchema, alertQueuePageSchema, alertQueueQuerySchema, consoleAlertDetailSchema } from '../../../schemas/console/routes.ts';
import { alertSummaryView, loadAlertDetail } from '../../cases/render.ts';
import { badCursor, page, readCursor } from '../../../platform/http/paging.ts';
import { consoleContext } from '../app.ts';
import { alertQueue, type QueueRow } from '../queries/alert-queue.ts';
import { auditAs, notFound, type ConsoleRouteDeps } from './common.ts';

// The alert queue and one alert (docs/decisions/0018-console-api.md).
export function registerAlertRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  app.get('/console/v1/alerts', { schema: { querystring: alertQueueQuerySchema, response: { 200: alertQueuePageSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const query = request.query as z.output<typeof alertQueueQuerySchema>;
    const { status, severity, detector, subject, subject_kind: subjectKind, max_age_h: maxAge, limit, cursor: cursorText } = query;
    const sort = query.sort ?? 'newest';
    // The cursor is bound to the list, the tenant, the filters and the order.
    const filters = {
      r: 'console-alerts',
      t: tenantId,
      s: status ?? null,
      v: severity ?? null,
      d: detector ?? null,
      q: subject ?? null,
      k: subjectKind ?? null,
      h: maxAge ?? null,
      x: sort,
    };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    // In severity order the position carries the rank: "<rank> <created_at>".
    const position = after && sort === 'severity' ? { rank: Number(after.at.slice(0, 1)), at: after.at.slice(2), id: after.id } : after;
    const since = maxAge === undefined ? undefined : new Date(deps.clock.now().getTime() - maxAge * 3_600_000);
    const rows = await alertQueue(deps.pool, tenantId, { status, severity, detector, subject, subjectKind, since, sort }, position, limit + 1);
    const positionOf = (last: QueueRow) => (sort === 'severity' ? `${last.severity_rank} ${last.cursor_at}` : last.cursor_at);
    return page(rows, limit, alertSummaryView, (last) => deps.cursors.encode({ ...filters, o: positionOf(last), e: last.alert_id }));
  });

  // Viewing an alert is audited (alert.viewed, with its episode so the case's log shows it).
  app.get<{ Params: { alert_id: string } }>('/console/v1/alerts/:alert_id', { schema: { params: alertParamsSchema, response: { 200: consoleAlertDetailSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const id = parseId('alert', request.params.alert_id);
    const alert = id && (await loadAlertDetail(deps.pool, tenantId, id));
    if (!alert) return notFound(request, reply, 'alert');
    await auditAs(deps.pool, request, 'alert.viewed', ID_PREFIXES.alert + id, alert.episode_id ? { episode_id: alert.episode_id } : {}, deps.clock.now());
    return alert;
  });
}

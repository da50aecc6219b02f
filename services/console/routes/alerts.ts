import type { FastifyInstance } from 'fastify';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { ALERT_STATUSES } from '../../../schemas/responses.ts';
import { ALERT_QUEUE_SORTS, SEVERITIES } from '../../../schemas/console/cases.ts';
import { alertParamsSchema, alertQueuePageSchema, alertQueueQuerySchema, consoleAlertDetailSchema } from '../../../schemas/console/routes.ts';
import { alertSummaryView, loadAlertDetail } from '../../api/compliance/render.ts';
import { badCursor, page, paging, readCursor, single } from '../../api/http/paging.ts';
import { QueryReader } from '../../api/http/query-params.ts';
import { consoleContext } from '../app.ts';
import { alertQueue, type QueueRow } from '../queries/alert-queue.ts';
import { auditAs, invalidQuery, notFound, type ConsoleRouteDeps, type Query } from './common.ts';

const SUBJECT_KINDS = ['account', 'party'] as const;
// Ten years.
const MAX_AGE_H = 87_600;

// The alert queue and one alert (docs/decisions/0018-console-api.md).
export function registerAlertRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  app.get<{ Querystring: Query }>('/console/v1/alerts', { schema: { querystring: alertQueueQuerySchema, response: { 200: alertQueuePageSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const reader = new QueryReader(request.query);
    const status = single(reader, 'status', ALERT_STATUSES);
    const severity = single(reader, 'severity', SEVERITIES);
    const detector = reader.text('detector', { max: 128 });
    const subject = reader.text('subject');
    const subjectKind = single(reader, 'subject_kind', SUBJECT_KINDS);
    if (subjectKind && subject === undefined) reader.errors.push({ path: 'subject_kind', code: 'svc:request/invalid_parameter', message: 'needs subject' });
    const maxAgeText = reader.text('max_age_h');
    const maxAge = maxAgeText === undefined ? undefined : reader.integer('max_age_h', { min: 1, max: MAX_AGE_H, fallback: 0 });
    const sort = single(reader, 'sort', ALERT_QUEUE_SORTS) ?? 'newest';
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return invalidQuery(request, reply, reader);
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

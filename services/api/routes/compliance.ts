import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { parseId } from '../../../platform/ids.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { applyCaseAction, validateCaseAction } from '../../../pipelines/detect/cases.ts';
import { ALERT_STATUSES, EPISODE_STATUSES } from '../../../schemas/responses.ts';
import { ALERT_COLUMNS, alertView, EPISODE_COLUMNS, episodeView, loadAlertDetail, loadEpisodeDetail, type AlertRow, type EpisodeRow } from '../compliance/render.ts';
import type { CursorCodec } from '../http/cursor.ts';
import { bodyRefusal, readJsonBody } from '../http/json-body.ts';
import { sendProblem } from '../http/problem-reply.ts';
import { QueryReader } from '../http/query-params.ts';
import { badCursor, page, paging, readCursor, single } from '../http/paging.ts';

const SUBJECT_KINDS = ['account', 'party'] as const;

type ListQuery = Record<string, string | string[] | undefined>;

// Alerts, episodes and case actions (scope compliance: restricted AML content a read key never
// sees). Every query filters on the caller's tenant; only live alerts are visible. An id that is
// not an alrt_/epsd_ id is answered like an unknown one: a governed 404.
export function registerComplianceRoutes(app: FastifyInstance, deps: { pool: Pool; clock: Clock; cursors: CursorCodec }): void {
  const compliance = { config: { scopes: ['compliance'] as const } };
  const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail: `no ${what} with this id in this tenant` });

  app.get<{ Querystring: ListQuery }>('/v1/alerts', compliance, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const reader = new QueryReader(request.query);
    const status = single(reader, 'status', ALERT_STATUSES);
    const subject = subjectFilter(reader);
    const detector = reader.text('detector', { max: 128 });
    const since = reader.dateTime('since');
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
    const filters = { r: 'alerts', t: tenantId, s: status ?? null, q: subject.id ?? null, k: subject.kind ?? null, d: detector ?? null, f: since?.toISOString() ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);

    const { rows } = await deps.pool.query<AlertRow>(
      `SELECT ${ALERT_COLUMNS} FROM alerts a
        WHERE a.tenant_id = $1 AND a.mode = 'live'
          AND ($2::text IS NULL OR a.status = $2) AND ($3::text IS NULL OR a.subject_id = $3) AND ($4::text IS NULL OR a.subject_kind = $4)
          AND ($5::text IS NULL OR a.detector_id = $5) AND ($6::timestamptz IS NULL OR a.created_at >= $6)
          AND ($7::timestamptz IS NULL OR (a.created_at, a.alert_id) < ($7::timestamptz, $8::uuid))
        ORDER BY a.created_at DESC, a.alert_id DESC
        LIMIT $9`,
      [tenantId, status ?? null, subject.id ?? null, subject.kind ?? null, detector ?? null, since ?? null, after?.at ?? null, after?.id ?? null, limit + 1],
    );
    return page(rows, limit, alertView, (last) => deps.cursors.encode({ ...filters, o: last.cursor_at, e: last.alert_id }));
  });

  app.get<{ Params: { alert_id: string } }>('/v1/alerts/:alert_id', compliance, async (request, reply) => {
    const id = parseId('alert', request.params.alert_id);
    const alert = id && (await loadAlertDetail(deps.pool, request.apiKey!.tenantId, id));
    return alert || notFound(request, reply, 'alert');
  });

  app.get<{ Querystring: ListQuery }>('/v1/episodes', compliance, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const reader = new QueryReader(request.query);
    const status = single(reader, 'status', EPISODE_STATUSES);
    const subject = subjectFilter(reader);
    const since = reader.dateTime('since');
    const { limit, cursorText } = paging(reader);
    if (reader.errors.length > 0) return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });
    const filters = { r: 'episodes', t: tenantId, s: status ?? null, q: subject.id ?? null, k: subject.kind ?? null, f: since?.toISOString() ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);

    // Most recently changed first: a client syncing with `since` sees every change.
    const { rows } = await deps.pool.query<EpisodeRow>(
      `SELECT ${EPISODE_COLUMNS} FROM episodes e
        WHERE e.tenant_id = $1 AND ($2::text IS NULL OR e.status = $2)
          AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM episode_members m
                                            WHERE m.tenant_id = e.tenant_id AND m.episode_id = e.episode_id
                                              AND m.subject_id = $3 AND ($4::text IS NULL OR m.subject_kind = $4)))
          AND ($5::timestamptz IS NULL OR e.updated_at >= $5)
          AND ($6::timestamptz IS NULL OR (e.updated_at, e.episode_id) < ($6::timestamptz, $7::uuid))
        ORDER BY e.updated_at DESC, e.episode_id DESC
        LIMIT $8`,
      [tenantId, status ?? null, subject.id ?? null, subject.kind ?? null, since ?? null, after?.at ?? null, after?.id ?? null, limit + 1],
    );
    return page(rows, limit, episodeView, (last) => deps.cursors.encode({ ...filters, o: last.cursor_at, e: last.episode_id }));
  });

  app.get<{ Params: { episode_id: string } }>('/v1/episodes/:episode_id', compliance, async (request, reply) => {
    const id = parseId('episode', request.params.episode_id);
    const episode = id && (await loadEpisodeDetail(deps.pool, request.apiKey!.tenantId, id));
    return episode || notFound(request, reply, 'episode');
  });

  app.post<{ Params: { episode_id: string } }>('/v1/episodes/:episode_id/case', compliance, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const id = parseId('episode', request.params.episode_id);
    if (!id) return notFound(request, reply, 'episode');
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const checked = validateCaseAction(body.value);
    if (!checked.ok) return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the case action is not valid', errors: checked.errors });
    const outcome = await applyCaseAction(deps.pool, { tenantId, episodeId: id, ...checked.action, actor: request.apiKey!.keyId }, deps.clock.now());
    switch (outcome.kind) {
      case 'invalid':
        return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the case action is not valid', errors: outcome.errors });
      case 'not_found':
        return notFound(request, reply, 'episode');
      case 'applied':
        return (await loadEpisodeDetail(deps.pool, tenantId, id)) ?? notFound(request, reply, 'episode');
    }
  });
}

// subject (an external id) and optionally its kind; a kind alone filters nothing, so it is refused.
function subjectFilter(reader: QueryReader): { id?: string; kind?: (typeof SUBJECT_KINDS)[number] } {
  const id = reader.text('subject');
  const kind = single(reader, 'subject_kind', SUBJECT_KINDS);
  if (kind && id === undefined) reader.errors.push({ path: 'subject_kind', code: 'svc:request/invalid_parameter', message: 'needs subject' });
  return { id, kind };
}

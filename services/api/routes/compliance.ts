import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../platform/clock.ts';
import { parseId } from '../../../platform/ids.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { applyCaseAction, validateCaseAction } from '../../cases/actions.ts';
import { ALERT_STATUSES, alertDetailSchema, alertPageSchema, caseActionRequestSchema, EPISODE_STATUSES, episodeDetailSchema, episodePageSchema } from '../../../schemas/responses.ts';
import { alertView, episodeView, loadAlertDetail, loadEpisodeDetail } from '../../cases/render.ts';
import { alertPage, episodePage } from '../../cases/store.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { badCursor, page, readCursor } from '../../../platform/http/paging.ts';
import { dateTime, needs, optionalText, pagingShape, single } from '../../../platform/http/query-schema.ts';
import { idParam, invalidQuery, json, notFound as unknownId, problem } from '../http/route-schema.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';

const SUBJECT_KINDS = ['account', 'party'] as const;

const subjectShape = {
  subject: optionalText().meta({ description: 'external_id of an account or party' }),
  subject_kind: single(SUBJECT_KINDS).meta({ description: 'account or party; only with subject' }),
};
const alertsQuery = z
  .strictObject({
    status: single(ALERT_STATUSES),
    ...subjectShape,
    detector: optionalText({ max: 128 }),
    since: dateTime().meta({ description: 'alerts created at or after' }),
    ...pagingShape(),
  })
  .refine(...needs('subject_kind', 'subject'));
const episodesQuery = z
  .strictObject({
    status: single(EPISODE_STATUSES),
    ...subjectShape,
    since: dateTime().meta({ description: 'episodes changed at or after' }),
    ...pagingShape(),
  })
  .refine(...needs('subject_kind', 'subject'));
const alertParams = z.object({ alert_id: idParam('alrt_') });
const episodeParams = z.object({ episode_id: idParam('epsd_') });

// Alerts, episodes and case actions (scope compliance: restricted AML content a read key never
// sees). Every query filters on the caller's tenant; only live alerts are visible. An id that is
// not an alrt_/epsd_ id is answered like an unknown one: a governed 404.
export function registerComplianceRoutes(app: FastifyInstance, deps: { pool: Pool; clock: Clock; cursors: CursorCodec }): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const config = { scopes: ['compliance'] as const };
  const tags = ['detection and cases'];
  const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) =>
    sendProblem(request, reply, 'svc:resource/not_found', { detail: `no ${what} with this id in this tenant` });

  const alertList = {
    tags,
    summary: 'Live alerts, newest first, by opaque cursor (scope compliance)',
    querystring: alertsQuery,
    response: { 200: json(alertPageSchema, 'a page'), 400: invalidQuery },
  };
  routes.get('/v1/alerts', { config, schema: alertList }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { status, detector, since, limit, cursor: cursorText } = request.query;
    const subject = { id: request.query.subject, kind: request.query.subject_kind };
    const filters = { r: 'alerts', t: tenantId, s: status ?? null, q: subject.id ?? null, k: subject.kind ?? null, d: detector ?? null, f: since?.toISOString() ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);

    const rows = await alertPage(
      deps.pool,
      tenantId,
      { status: status ?? null, subjectId: subject.id ?? null, subjectKind: subject.kind ?? null, detector: detector ?? null, since: since ?? null },
      after,
      limit + 1,
    );
    return page(rows, limit, alertView, (last) => deps.cursors.encode({ ...filters, o: last.cursor_at, e: last.alert_id }));
  });

  const alertRead = {
    tags,
    summary: 'An alert with every evidence entry (scope compliance)',
    params: alertParams,
    response: { 200: json(alertDetailSchema, 'found'), 404: unknownId() },
  };
  routes.get('/v1/alerts/:alert_id', { config, schema: alertRead }, async (request, reply) => {
    const id = parseId('alert', request.params.alert_id);
    const alert = id && (await loadAlertDetail(deps.pool, request.apiKey!.tenantId, id));
    return alert || notFound(request, reply, 'alert');
  });

  const episodeList = {
    tags,
    summary: 'Episodes, newest first, by opaque cursor; since: changed at or after (scope compliance)',
    querystring: episodesQuery,
    response: { 200: json(episodePageSchema, 'a page'), 400: invalidQuery },
  };
  routes.get('/v1/episodes', { config, schema: episodeList }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const { status, since, limit, cursor: cursorText } = request.query;
    const subject = { id: request.query.subject, kind: request.query.subject_kind };
    const filters = { r: 'episodes', t: tenantId, s: status ?? null, q: subject.id ?? null, k: subject.kind ?? null, f: since?.toISOString() ?? null };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);

    const rows = await episodePage(deps.pool, tenantId, { status: status ?? null, subjectId: subject.id ?? null, subjectKind: subject.kind ?? null, since: since ?? null }, after, limit + 1);
    return page(rows, limit, episodeView, (last) => deps.cursors.encode({ ...filters, o: last.cursor_at, e: last.episode_id }));
  });

  const episodeRead = {
    tags,
    summary: 'An episode with its alerts and case history (scope compliance)',
    params: episodeParams,
    response: { 200: json(episodeDetailSchema, 'found'), 404: unknownId() },
  };
  routes.get('/v1/episodes/:episode_id', { config, schema: episodeRead }, async (request, reply) => {
    const id = parseId('episode', request.params.episode_id);
    const episode = id && (await loadEpisodeDetail(deps.pool, request.apiKey!.tenantId, id));
    return episode || notFound(request, reply, 'episode');
  });

  // The body is read after authentication from the signed bytes (contracts.ts).
  const caseAction = {
    tags,
    summary: 'Set the case status and/or disposition of an episode (scope compliance)',
    description:
      'A disposition closes the case (status omitted or closed) and resolves the episode; closed needs a disposition; ' +
      'escalated escalates the episode; open or investigating reopens a resolved episode. Setting what is already set changes nothing and sends no event; ' +
      'a note given with it is kept in the case history (once, when the same key repeats it).',
    params: episodeParams,
    body: caseActionRequestSchema,
    response: {
      200: json(episodeDetailSchema, 'the episode after the action'),
      400: problem('svc:validation/schema with field paths, or a malformed body'),
      404: unknownId('no such episode in this tenant'),
      415: problem('the body is not application/json'),
    },
  };
  // Honoured only by ingest (the spec): a key here is refused rather than silently ignored.
  routes.post('/v1/episodes/:episode_id/case', { config, schema: caseAction, preHandler: refuseIdempotencyKey('case actions') }, async (request, reply) => {
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
      case 'refused':
        return sendProblem(request, reply, 'svc:sequence/conflict', { detail: outcome.detail });
      case 'applied':
        return (await loadEpisodeDetail(deps.pool, tenantId, id)) ?? notFound(request, reply, 'episode');
    }
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { withTransaction } from '../../../platform/postgres/pool.ts';
import {
  TIMELINE_ACTIONS_MAX,
  TIMELINE_MOVEMENTS_MAX,
  TIMELINE_VIEWS_MAX,
  caseDetailSchema,
  caseNotePageSchema,
  caseNoteRequestSchema,
  caseNoteSchema,
  caseParamsSchema,
  caseTimelineSchema,
  pagingQuerySchema,
  type CaseDetail,
  type TimelineEntry,
} from '../../../schemas/console/cases.ts';
import { loadEpisodeDetail } from '../../cases/render.ts';
import { caseActions, episodeExists } from '../../cases/store.ts';
import { badCursor, readCursor } from '../../../platform/http/paging.ts';
import { consoleContext } from '../app.ts';
import { addCaseNote, caseNotes, findCaseNote } from '../queries/case-notes.ts';
import { findInboxCase } from '../queries/case-inbox.ts';
import { reportProposals } from '../queries/case-reports.ts';
import { citedMovements, movementsByIds, subjectParties } from '../queries/case-timeline.ts';
import { caseAudit, caseViewCount } from '../queries/cases.ts';
import { caseNoteView, caseSummaryView, reportProposalView, typedPage } from './case-views.ts';
import { auditAs, notFound, type ConsoleRouteDeps } from './common.ts';

const NOTES_PAGE = { fallback: 50 };

// The case page: the case with its alerts, parties and cited movements; its timeline; its notes
// (append-only: there is no route to change or remove one). Docs: docs/decisions/0030-case-inbox.md.
export function registerCasePageRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  // The bare uuid of an episode of the session's tenant, or the 404 already sent.
  const caseOf = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): Promise<string | FastifyReply> => {
    const id = parseId('episode', request.params.id);
    const tenantId = consoleContext(request).user.tenant_id;
    if (!id || !(await episodeExists(deps.pool, tenantId, id))) {
      return notFound(request, reply, 'case');
    }
    return id;
  };

  // Viewing a case is audited as viewing its episode (episode.viewed).
  typed.get('/console/v1/cases/:id', { schema: { params: caseParamsSchema, response: { 200: caseDetailSchema } } }, async (request, reply) => {
    const id = await caseOf(request, reply);
    if (typeof id !== 'string') return id;
    const tenantId = consoleContext(request).user.tenant_id;
    const now = deps.clock.now();
    const [row, episode] = await Promise.all([findInboxCase(deps.pool, tenantId, id), loadEpisodeDetail(deps.pool, tenantId, id)]);
    if (!row || !episode) return notFound(request, reply, 'case');
    await auditAs(deps.pool, request, 'episode.viewed', ID_PREFIXES.episode + id, { via: 'case' }, now);
    const [parties, cited, proposals, registry] = await Promise.all([
      subjectParties(deps.pool, tenantId, id),
      citedMovements(deps.pool, tenantId, id),
      reportProposals(deps.pool, tenantId, id),
      deps.assets.forTenant(tenantId),
    ]);
    const detail = episode as unknown as Pick<CaseDetail, 'alerts' | 'case_history'> & { members: CaseDetail['subjects']; related: CaseDetail['related'] };
    return {
      ...caseSummaryView(row, now, registry),
      subjects: detail.members,
      related: detail.related,
      parties,
      alerts: detail.alerts,
      movement_ids: [...new Set(cited.map((c) => c.movement_id))],
      report: proposals[0] ? reportProposalView(proposals[0]) : null,
      case_history: detail.case_history,
    };
  });

  // Everything that happened to the case, oldest first: its alerts, the movements they cite, its
  // case actions (any channel), the console's audit entries naming it, and its notes. Views of the
  // case are capped apart from the rest of the audit, so page loads never push the story out.
  typed.get('/console/v1/cases/:id/timeline', { schema: { params: caseParamsSchema, response: { 200: caseTimelineSchema } } }, async (request, reply) => {
    const id = await caseOf(request, reply);
    if (typeof id !== 'string') return id;
    const tenantId = consoleContext(request).user.tenant_id;
    const ref = ID_PREFIXES.episode + id;
    // Restricted content (notes, cited movements): its view is audited too, as the case's is, so
    // a session reading it without the case page still leaves a row (decision 0018).
    await auditAs(deps.pool, request, 'episode.viewed', ref, { via: 'timeline' }, deps.clock.now());
    const [episode, cited, actions, story, views, viewCount, notes] = await Promise.all([
      loadEpisodeDetail(deps.pool, tenantId, id),
      citedMovements(deps.pool, tenantId, id),
      caseActions(deps.pool, tenantId, id),
      caseAudit(deps.pool, tenantId, ref, undefined, TIMELINE_ACTIONS_MAX + 1, 'story'),
      caseAudit(deps.pool, tenantId, ref, undefined, TIMELINE_VIEWS_MAX, 'views'),
      caseViewCount(deps.pool, tenantId, ref),
      caseNotes(deps.pool, tenantId, id, undefined, TIMELINE_ACTIONS_MAX + 1),
    ]);
    if (!episode) return notFound(request, reply, 'case');
    const movementIds = [...new Set(cited.map((c) => c.movement_id))];
    const movements = await movementsByIds(deps.pool, tenantId, movementIds, TIMELINE_MOVEMENTS_MAX + 1);
    const citedBy = new Map<string, string[]>();
    for (const c of cited) citedBy.set(c.movement_id, [...(citedBy.get(c.movement_id) ?? []), ID_PREFIXES.alert + c.alert_id]);
    const cites = new Map<string, string[]>();
    for (const c of cited) cites.set(ID_PREFIXES.alert + c.alert_id, [...(cites.get(ID_PREFIXES.alert + c.alert_id) ?? []), c.movement_id]);
    const alerts = (episode as unknown as CaseDetail).alerts;
    const entries: TimelineEntry[] = [
      ...alerts.map((a): TimelineEntry => ({
        kind: 'alert',
        at: a.created_at,
        alert_id: a.alert_id,
        detector: a.detector,
        typology: a.typology,
        severity: a.severity,
        summary: a.summary,
        subject: a.subject,
        movement_ids: cites.get(a.alert_id) ?? [],
      })),
      ...movements.slice(0, TIMELINE_MOVEMENTS_MAX).map((m): TimelineEntry => ({
        kind: 'movement',
        at: m.occurred_at.toISOString(),
        movement_id: m.external_id,
        type: m.type,
        status: m.status,
        amount: { value: m.amount_value, asset: m.amount_asset, scale: m.amount_scale },
        debit_account: m.debit_account_id,
        credit_account: m.credit_account_id,
        cited_by: citedBy.get(m.external_id) ?? [],
      })),
      ...actions.map((c): TimelineEntry => ({
        kind: 'case_action',
        at: c.at.toISOString(),
        actor: c.actor,
        case_status: c.case_status as 'open',
        disposition: c.disposition as null,
        note: c.note,
      })),
      ...[...story.slice(0, TIMELINE_ACTIONS_MAX), ...views].map((a): TimelineEntry => ({ kind: 'audit', at: a.at.toISOString(), actor_email: a.actor_email, action: a.action, details: a.details })),
      ...notes.slice(0, TIMELINE_ACTIONS_MAX).map((n): TimelineEntry => ({ kind: 'note', at: n.created_at.toISOString(), note_id: n.note_id, author: { user_id: n.author_user_id, email: n.author_email }, body: n.body })),
    ];
    // Stable: entries at the same instant keep the order above (alert, movement, action, audit, note).
    entries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    return {
      episode_id: ref,
      entries,
      movement_ids: movementIds,
      truncated: movements.length > TIMELINE_MOVEMENTS_MAX || story.length > TIMELINE_ACTIONS_MAX || notes.length > TIMELINE_ACTIONS_MAX,
      views: { shown: views.length, total: viewCount.views },
    };
  });

  typed.get('/console/v1/cases/:id/notes', { schema: { params: caseParamsSchema, querystring: pagingQuerySchema, response: { 200: caseNotePageSchema } } }, async (request, reply) => {
    const id = await caseOf(request, reply);
    if (typeof id !== 'string') return id;
    const tenantId = consoleContext(request).user.tenant_id;
    const limit = request.query.limit === undefined ? NOTES_PAGE.fallback : Number(request.query.limit);
    const filters = { r: 'console-case-notes', t: tenantId, p: id };
    const after = readCursor(deps.cursors, request.query.cursor, filters);
    if (after === false) return badCursor(request, reply);
    await auditAs(deps.pool, request, 'episode.viewed', ID_PREFIXES.episode + id, { via: 'notes' }, deps.clock.now());
    const rows = await caseNotes(deps.pool, tenantId, id, after, limit + 1);
    return typedPage(rows, limit, caseNoteView, (last) => deps.cursors.encode({ ...filters, o: last.cursor_at, e: last.note_id }));
  });

  // A note is written with its audit row (case.note_added) in one transaction.
  typed.post('/console/v1/cases/:id/notes', { schema: { params: caseParamsSchema, body: caseNoteRequestSchema, response: { 201: caseNoteSchema } } }, async (request, reply) => {
    const id = await caseOf(request, reply);
    if (typeof id !== 'string') return id;
    const { user } = consoleContext(request);
    const now = deps.clock.now();
    const noteId = await withTransaction(deps.pool, async (db) => {
      const created = await addCaseNote(db, user.tenant_id, id, user.user_id, request.body.body, now);
      await auditAs(db, request, 'case.note_added', ID_PREFIXES.episode + id, { note_id: created, chars: request.body.body.length }, now);
      return created;
    });
    const note = await findCaseNote(deps.pool, user.tenant_id, noteId);
    return reply.code(201).send(caseNoteView(note!));
  });
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { withTransaction } from '../../../platform/postgres/pool.ts';
import { applyCaseAction, type CaseActionRule } from '../../cases/actions.ts';
import { assignRequestSchema, auditPageSchema, caseDispositionRequestSchema, caseStatusRequestSchema, consoleEpisodeDetailSchema } from '../../../schemas/console/cases.ts';
import { auditQuerySchema, episodeParamsSchema } from '../../../schemas/console/routes.ts';
import { loadEpisodeDetail } from '../../cases/render.ts';
import { episodeExists } from '../../cases/store.ts';
import { lockTenantDetection } from '../../detection/detection-lock.ts';
import { badCursor, page, readCursor } from '../../../platform/http/paging.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { consoleContext } from '../app.ts';
import { mayAssign } from '../case-rights.ts';
import { fourEyesCaseRule, REPORT_DISPOSITION } from '../four-eyes.ts';
import { subjectParties } from '../queries/case-timeline.ts';
import { activeUserOfTenant, auditView, caseAudit, findAssignee, lockAssignment, setAssignee } from '../queries/cases.ts';
import { auditAs, notFound, type ConsoleRouteDeps } from './common.ts';

// The audit entries a case detail embeds; the rest through GET /console/v1/audit.
const EMBEDDED_AUDIT = 100;

type Params = { Params: { episode_id: string } };

// Episodes (cases): detail with assignee and audit, assignment, status and disposition, and the
// case's audit log (docs/decisions/0018-console-api.md).
// Refuses a change to a case that no longer stands as the analyst saw it (another analyst closed
// or reopened it meanwhile), so no one's decision is replaced unseen.
function asSeen(expected: { case_status: string; disposition: string | null } | undefined): CaseActionRule | undefined {
  if (!expected) return undefined;
  return async (_db, { from }) =>
    from.caseStatus === expected.case_status && from.disposition === expected.disposition
      ? undefined
      : `the case changed since it was shown: it is now ${from.caseStatus}${from.disposition ? ` (${from.disposition.replaceAll('_', ' ')})` : ''}; look again before acting`;
}

// The first refusal of the rules given.
function bothRules(...rules: Array<CaseActionRule | undefined>): CaseActionRule {
  return async (db, change) => {
    for (const rule of rules) {
      const refusal = await rule?.(db, change);
      if (refusal) return refusal;
    }
    return undefined;
  };
}

export function registerEpisodeRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const detail = async (tenantId: string, episodeId: string) => {
    const episode = await loadEpisodeDetail(deps.pool, tenantId, episodeId);
    if (!episode) return undefined;
    const audit = await caseAudit(deps.pool, tenantId, ID_PREFIXES.episode + episodeId, undefined, EMBEDDED_AUDIT);
    return {
      ...episode,
      assignee: await findAssignee(deps.pool, tenantId, episodeId),
      audit: audit.map(auditView),
      // The parties behind account members too (the members list accounts and parties alike).
      parties: await subjectParties(deps.pool, tenantId, episodeId),
    };
  };

  // Bodies are checked against the route's schema before the handler (platform/http/contracts.ts).
  const bodyOf = <S extends z.ZodType>(request: FastifyRequest, _schema: S): z.infer<S> => request.body as z.infer<S>;
  const detailRoute = (body?: z.ZodType) => ({ schema: { params: episodeParamsSchema, ...(body ? { body } : {}), response: { 200: consoleEpisodeDetailSchema } } });

  // Viewing a case is audited (episode.viewed) before its log is read, so the view is in it.
  app.get<Params>('/console/v1/episodes/:episode_id', detailRoute(), async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const id = parseId('episode', request.params.episode_id);
    if (!id || !(await episodeExists(deps.pool, tenantId, id))) return notFound(request, reply, 'episode');
    await auditAs(deps.pool, request, 'episode.viewed', ID_PREFIXES.episode + id, {}, deps.clock.now());
    return (await detail(tenantId, id)) ?? notFound(request, reply, 'episode');
  });

  // An analyst may take an unassigned case (or one of their own) and give it up; a supervisor
  // assigns any case to any active user of the tenant, or to nobody.
  app.post<Params>('/console/v1/episodes/:episode_id/assign', detailRoute(assignRequestSchema), async (request, reply) => {
    const { user } = consoleContext(request);
    const tenantId = user.tenant_id;
    const id = parseId('episode', request.params.episode_id);
    if (!id) return notFound(request, reply, 'episode');
    const target = bodyOf(request, assignRequestSchema).user_id;
    const outcome = await withTransaction(deps.pool, async (db) => {
      if (!(await episodeExists(db, tenantId, id))) return 'not_found' as const;
      const assignee = target === null ? null : await activeUserOfTenant(db, tenantId, target);
      if (assignee === undefined) return 'unknown_user' as const;
      // Detection's tenant lock before the episode row (see the bulk assignment).
      await lockTenantDetection(db, tenantId);
      const current = await lockAssignment(db, tenantId, id);
      if (!mayAssign(user, current, target)) return 'forbidden' as const;
      if (current === target) return 'unchanged' as const;
      const now = deps.clock.now();
      await setAssignee(db, tenantId, id, target, user.user_id, now);
      await auditAs(db, request, 'case.assigned', ID_PREFIXES.episode + id, { from: current, to: target, to_email: assignee?.email ?? null }, now);
      return 'assigned' as const;
    });
    if (outcome === 'not_found') return notFound(request, reply, 'episode');
    if (outcome === 'unknown_user') {
      return sendProblem(request, reply, 'svc:validation/schema', {
        detail: 'the assignment is not valid',
        errors: [{ path: 'user_id', code: 'svc:validation/schema', message: 'no active console user with this id in this tenant' }],
      });
    }
    if (outcome === 'forbidden') {
      return sendProblem(request, reply, 'svc:auth/insufficient_scope', {
        detail: 'an analyst may assign a case only to themselves, and not one assigned to someone else; a supervisor may assign any case',
      });
    }
    return (await detail(tenantId, id)) ?? notFound(request, reply, 'episode');
  });

  // Status and disposition go through the case pipeline (services/cases/actions.ts): the same
  // rules, case history and outgoing events (case.status_changed, case.disposed) as /v1. The
  // reason is the case action's note and is kept in the console audit log.
  const caseAction = (path: string, what: string, schema: typeof caseStatusRequestSchema | typeof caseDispositionRequestSchema, action: string) =>
    app.post<Params>(`/console/v1/episodes/:episode_id/${path}`, detailRoute(schema), async (request, reply) => {
      const { user } = consoleContext(request);
      const tenantId = user.tenant_id;
      const id = parseId('episode', request.params.episode_id);
      if (!id) return notFound(request, reply, 'episode');
      const { reason, expected, ...change } = bodyOf(request, schema) as {
        reason: string;
        expected?: { case_status: string; disposition: string | null };
        status?: string;
        disposition?: string;
      };
      // Filing a report needs a second pair of eyes (four-eyes.ts): it is proposed, not applied.
      if (change.disposition === REPORT_DISPOSITION) {
        return sendProblem(request, reply, 'svc:validation/schema', {
          detail: `the ${what} is not valid`,
          errors: [{ path: 'disposition', code: 'svc:validation/schema', message: 'a report is proposed for approval: POST /console/v1/cases/{id}/report' }],
        });
      }
      const now = deps.clock.now();
      // The audit row is written in the action's own transaction: no action without its row.
      const outcome = await applyCaseAction(deps.pool, { tenantId, episodeId: id, ...change, note: reason, actor: `console:${user.user_id}` }, now, (db, applied) =>
        auditAs(db, request, action, ID_PREFIXES.episode + id, { ...change, reason, ...applied }, now),
        bothRules(asSeen(expected), fourEyesCaseRule(tenantId, id)),
      );
      switch (outcome.kind) {
        case 'invalid':
          return sendProblem(request, reply, 'svc:validation/schema', { detail: `the ${what} is not valid`, errors: outcome.errors });
        case 'not_found':
          return notFound(request, reply, 'episode');
        case 'refused':
          return sendProblem(request, reply, 'svc:sequence/conflict', { detail: outcome.detail });
        case 'applied':
          return (await detail(tenantId, id)) ?? notFound(request, reply, 'episode');
      }
    });
  caseAction('status', 'status change', caseStatusRequestSchema, 'case.status_changed');
  caseAction('disposition', 'disposition', caseDispositionRequestSchema, 'case.disposed');

  app.get('/console/v1/audit', { schema: { querystring: auditQuerySchema, response: { 200: auditPageSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const { episode_id: episodeText, limit, cursor: cursorText } = request.query as z.output<typeof auditQuerySchema>;
    const id = parseId('episode', episodeText);
    if (!id || !(await episodeExists(deps.pool, tenantId, id))) return notFound(request, reply, 'episode');
    const filters = { r: 'console-audit', t: tenantId, p: id };
    const after = readCursor(deps.cursors, cursorText, filters);
    if (after === false) return badCursor(request, reply);
    const rows = await caseAudit(deps.pool, tenantId, ID_PREFIXES.episode + id, after, limit + 1);
    return page(rows, limit, auditView, (last) => deps.cursors.encode({ ...filters, o: last.cursor_at, e: last.audit_id }));
  });
}

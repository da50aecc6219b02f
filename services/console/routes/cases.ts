import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { withTransaction } from '../../../platform/postgres/pool.ts';
import {
  CASE_INBOX_LIMIT,
  CASE_PRIORITIES,
  caseAssignRequestSchema,
  caseAssignResponseSchema,
  caseAssigneesSchema,
  caseInboxQuerySchema,
  casePageSchema,
  type CaseAssignResponse,
} from '../../../schemas/console/cases.ts';
import { badCursor, readCursor } from '../../../platform/http/paging.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { consoleContext } from '../app.ts';
import { mayAssign } from '../case-rights.ts';
import { episodeExists } from '../../cases/store.ts';
import { lockTenantDetection } from '../../detection/detection-lock.ts';
import { caseInbox } from '../queries/case-inbox.ts';
import { activeUserOfTenant, assignableUsers, lockAssignment, setAssignee } from '../queries/cases.ts';
import { caseSummaryView, typedPage } from './case-views.ts';
import { auditAs, type ConsoleRouteDeps } from './common.ts';

// The case inbox and assignment of one or many cases (docs/decisions/0030-case-inbox.md).
export function registerCaseRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  typed.get('/console/v1/cases', { schema: { querystring: caseInboxQuerySchema, response: { 200: casePageSchema } } }, async (request, reply) => {
    const { user } = consoleContext(request);
    const tenantId = user.tenant_id;
    const q = request.query;
    const sort = q.sort ?? 'age';
    const assignee = q.assignee === undefined ? undefined : q.assignee === 'unassigned' ? null : q.assignee === 'me' ? user.user_id : q.assignee;
    const limit = q.limit === undefined ? CASE_INBOX_LIMIT.fallback : Number(q.limit);
    // The cursor is bound to the list, the tenant, the filters (me resolved to the user) and the order.
    const filters = {
      r: 'console-cases',
      t: tenantId,
      s: q.status ?? null,
      a: assignee === undefined ? null : (assignee ?? 'unassigned'),
      y: q.typology ?? null,
      p: q.priority ?? null,
      d: q.overdue ?? null,
      w: q.awaiting_approval ?? null,
      x: sort,
    };
    const after = readCursor(deps.cursors, q.cursor, filters);
    if (after === false) return badCursor(request, reply);
    const now = deps.clock.now();
    const rows = await caseInbox(
      deps.pool,
      tenantId,
      {
        status: q.status,
        assignee,
        typology: q.typology,
        priority: q.priority === undefined ? undefined : CASE_PRIORITIES.indexOf(q.priority) + 1,
        overdue: q.overdue === undefined ? undefined : q.overdue === 'true',
        awaitingApproval: q.awaiting_approval === undefined ? undefined : q.awaiting_approval === 'true',
        sort,
      },
      now,
      after,
      limit + 1,
    );
    const registry = await deps.assets.forTenant(tenantId);
    return typedPage(rows, limit, (row) => caseSummaryView(row, now, registry), (last) => deps.cursors.encode({ ...filters, o: last.position, e: last.episode_id }));
  });

  // A supervisor assigns any case to any active user of the tenant, or to nobody; an analyst may
  // take unassigned cases and give up their own. Each case is decided on its own (one outcome per
  // id) in one transaction; each change is audited (case.assigned).
  // Whom a case can be assigned to: the tenant's active users (a supervisor's picker).
  typed.get('/console/v1/cases/assignees', { schema: { response: { 200: caseAssigneesSchema } } }, async (request) => {
    const { user } = consoleContext(request);
    return { data: await assignableUsers(deps.pool, user.tenant_id) };
  });

  typed.post('/console/v1/cases/assign', { schema: { body: caseAssignRequestSchema, response: { 200: caseAssignResponseSchema } } }, async (request, reply) => {
    const { user } = consoleContext(request);
    const tenantId = user.tenant_id;
    const target = request.body.user_id;
    const outcome = await withTransaction(deps.pool, async (db) => {
      const assignee = target === null ? null : await activeUserOfTenant(db, tenantId, target);
      if (assignee === undefined) return 'unknown_user' as const;
      // Detection's tenant lock before any episode row: detection changes episodes under it, in its
      // own order, so rows locked first could deadlock with a detection commit.
      await lockTenantDetection(db, tenantId);
      const results: CaseAssignResponse['results'] = [];
      const now = deps.clock.now();
      // In id order, so two bulk assignments over the same cases lock them in the same order. The
      // schema admits only well-formed ids.
      const ids = [...new Set(request.body.episode_ids.map((text) => parseId('episode', text)!))].sort();
      for (const id of ids) {
        const ref = ID_PREFIXES.episode + id;
        const exists = await episodeExists(db, tenantId, id);
        if (!exists) {
          results.push({ episode_id: ref, outcome: 'not_found', assignee: null });
          continue;
        }
        const current = await lockAssignment(db, tenantId, id);
        const currentRef = current === null ? null : ((await activeUserOfTenant(db, tenantId, current)) ?? null);
        if (!mayAssign(user, current, target)) {
          results.push({ episode_id: ref, outcome: 'forbidden', assignee: currentRef });
          continue;
        }
        if (current === target) {
          results.push({ episode_id: ref, outcome: 'unchanged', assignee: currentRef });
          continue;
        }
        await setAssignee(db, tenantId, id, target, user.user_id, now);
        await auditAs(db, request, 'case.assigned', ref, { from: current, to: target, to_email: assignee?.email ?? null, bulk: ids.length > 1 }, now);
        results.push({ episode_id: ref, outcome: 'assigned', assignee: assignee === null ? null : { user_id: assignee.user_id, email: assignee.email } });
      }
      return results;
    });
    if (outcome === 'unknown_user') {
      return sendProblem(request, reply, 'svc:validation/schema', {
        detail: 'the assignment is not valid',
        errors: [{ path: 'user_id', code: 'svc:validation/schema', message: 'no active console user with this id in this tenant' }],
      });
    }
    return { results: outcome };
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { withTransaction } from '../../../platform/postgres/pool.ts';
import { redateOpenCases } from '../../cases/inbox.ts';
import {
  caseParamsSchema,
  caseSlaSchema,
  caseSlaUpdateRequestSchema,
  reportDecisionRequestSchema,
  reportProposalListSchema,
  reportProposalRequestSchema,
  reportProposalSchema,
  type CaseSla,
} from '../../../schemas/console/cases.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { consoleContext } from '../app.ts';
import { decideReport, proposeReport, type AuditStep, type ReportOutcome } from '../four-eyes.ts';
import { findCaseSla, saveCaseSla, type CaseSlaRow } from '../queries/case-sla.ts';
import { reportProposals } from '../queries/case-reports.ts';
import { episodeExists } from '../../cases/store.ts';
import { reportProposalView } from './case-views.ts';
import { auditAs, notFound, type ConsoleRouteDeps } from './common.ts';

const slaView = (row: CaseSlaRow): CaseSla => ({ hours: row.hours, customised: row.customised, updated_at: row.updated_at?.toISOString() ?? null, updated_by: row.updated_by });

// Four-eyes reporting (docs/decisions/0031-four-eyes-reporting.md) and the tenant's case SLA
// (docs/decisions/0030-case-inbox.md).
export function registerCaseReportRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const typed = app.withTypeProvider<ZodTypeProvider>();

  // The outcome of a step as HTTP: the one place these map.
  const send = (request: FastifyRequest, reply: FastifyReply, outcome: ReportOutcome, status: 200 | 201) => {
    switch (outcome.kind) {
      case 'done':
        return reply.code(status).send(reportProposalView(outcome.proposal));
      case 'not_found':
        return notFound(request, reply, 'case');
      case 'conflict':
        return sendProblem(request, reply, 'svc:sequence/conflict', { detail: outcome.detail });
      case 'forbidden':
        return sendProblem(request, reply, 'svc:auth/insufficient_scope', { detail: outcome.detail });
      case 'invalid':
        return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the disposition is not valid', errors: outcome.errors });
    }
  };
  const auditFor = (request: FastifyRequest, episodeId: string): AuditStep => (db, action, details) => auditAs(db, request, action, ID_PREFIXES.episode + episodeId, details, deps.clock.now());

  typed.get('/console/v1/cases/:id/report', { schema: { params: caseParamsSchema, response: { 200: reportProposalListSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const id = parseId('episode', request.params.id);
    if (!id || !(await episodeExists(deps.pool, tenantId, id))) return notFound(request, reply, 'case');
    // Every narrative proposed: restricted content, whose view is audited (decision 0018).
    await auditAs(deps.pool, request, 'episode.viewed', ID_PREFIXES.episode + id, { via: 'report' }, deps.clock.now());
    return { data: (await reportProposals(deps.pool, tenantId, id)).map(reportProposalView) };
  });

  typed.post('/console/v1/cases/:id/report', { schema: { params: caseParamsSchema, body: reportProposalRequestSchema, response: { 201: reportProposalSchema } } }, async (request, reply) => {
    const id = parseId('episode', request.params.id);
    if (!id) return notFound(request, reply, 'case');
    const outcome = await proposeReport(deps.pool, consoleContext(request).user, id, request.body.narrative, deps.clock.now(), auditFor(request, id));
    return send(request, reply, outcome, 201);
  });

  typed.post(
    '/console/v1/cases/:id/report/decision',
    { schema: { params: caseParamsSchema, body: reportDecisionRequestSchema, response: { 200: reportProposalSchema } } },
    async (request, reply) => {
      const id = parseId('episode', request.params.id);
      if (!id) return notFound(request, reply, 'case');
      const outcome = await decideReport(deps.pool, consoleContext(request).user, id, request.body.decision, request.body.reason, deps.clock.now(), auditFor(request, id));
      return send(request, reply, outcome, 200);
    },
  );

  typed.get('/console/v1/settings/case-sla', { schema: { response: { 200: caseSlaSchema } } }, async (request) => slaView(await findCaseSla(deps.pool, consoleContext(request).user.tenant_id)));

  // A supervisor sets the tenant's SLA; the due dates of every case not closed follow at once.
  typed.put('/console/v1/settings/case-sla', { schema: { body: caseSlaUpdateRequestSchema, response: { 200: caseSlaSchema } } }, async (request, reply) => {
    const { user } = consoleContext(request);
    if (user.role !== 'supervisor') return sendProblem(request, reply, 'svc:auth/insufficient_scope', { detail: 'only a supervisor sets the case SLA' });
    const now = deps.clock.now();
    await withTransaction(deps.pool, async (db) => {
      const before = await findCaseSla(db, user.tenant_id);
      await saveCaseSla(db, user.tenant_id, request.body.hours, user.user_id, now);
      await redateOpenCases(db, user.tenant_id, request.body.hours);
      await auditAs(db, request, 'case_sla.changed', `tenant:${user.tenant_id}`, { from: before.hours, to: request.body.hours }, now);
    });
    return slaView(await findCaseSla(deps.pool, user.tenant_id));
  });
}

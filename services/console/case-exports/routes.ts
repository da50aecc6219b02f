import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ID_PREFIXES, parseId } from '../../../platform/ids.ts';
import { caseParamsSchema } from '../../../schemas/console/cases.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { consoleContext } from '../app.ts';
import { auditAs, notFound, type ConsoleRouteDeps } from '../routes/common.ts';
import { CONSOLE_CSP } from '../static.ts';
import { loadCaseFile } from './case-file.ts';
import { goamlReport } from './goaml.ts';
import { CASE_FILE_CSS, CASE_FILE_CSS_PATH, renderCaseFile } from './html.ts';
import { findReportingEntity } from './reporting-entity.ts';
import { findCase } from './store.ts';
import { renderXml } from './xml-writer.ts';

// The responses are XML, HTML and CSS, not JSON: no response schema; no query parameters taken.
const exportSchema = { params: caseParamsSchema, querystring: z.strictObject({}) };

// A case's exports for a regulator: the goAML report and the readable case file
// (docs/decisions/0032-goaml-export.md). Any analyst of the tenant may export; each export is
// audited (case.exported) before the audit trail is read, so the file shows its own making.
export function registerCaseExportRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const assets = (tenantId: string) => deps.assets.forTenant(tenantId);

  typed.get('/console/v1/cases/:id/goaml.xml', { schema: exportSchema }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const id = parseId('episode', request.params.id);
    if (!id) return notFound(request, reply, 'case');
    const file = await loadCaseFile(deps.pool, tenantId, id, assets);
    if (!file) return notFound(request, reply, 'case');
    const rentity = await findReportingEntity(deps.pool, tenantId);
    if (!rentity) return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no goAML reporting entity is set up for this tenant: ask the operator to set one' });
    const now = deps.clock.now();
    const outcome = goamlReport(file, rentity, now);
    switch (outcome.kind) {
      case 'local_currency_not_iso':
        return sendProblem(request, reply, 'svc:resource/not_found', { detail: `goAML reports in an ISO 4217 currency; the tenant's base asset ${outcome.asset} is not one` });
      case 'report':
        await auditAs(deps.pool, request, 'case.exported', ID_PREFIXES.episode + id, { format: 'goaml', transactions: outcome.transactions, left_out: outcome.leftOut.length }, now);
        return reply
          .type('application/xml; charset=utf-8')
          .header('Content-Disposition', `attachment; filename="goaml-${ID_PREFIXES.episode}${id}.xml"`)
          .send(renderXml(outcome.document));
    }
  });

  typed.get('/console/v1/cases/:id/file.html', { schema: exportSchema }, async (request, reply) => {
    const { user } = consoleContext(request);
    const id = parseId('episode', request.params.id);
    if (!id) return notFound(request, reply, 'case');
    const now = deps.clock.now();
    // The export is audited first (only for a case of this tenant), then read with its audit.
    if (!(await findCase(deps.pool, user.tenant_id, id))) return notFound(request, reply, 'case');
    await auditAs(deps.pool, request, 'case.exported', ID_PREFIXES.episode + id, { format: 'case_file' }, now);
    const file = await loadCaseFile(deps.pool, user.tenant_id, id, assets);
    if (!file) return notFound(request, reply, 'case');
    return reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', CONSOLE_CSP)
      .send(renderCaseFile(file, { generatedAt: now, generatedBy: user.email }));
  });

  // The case file's stylesheet: the console's CSP allows no inline style.
  typed.get(CASE_FILE_CSS_PATH, { schema: { querystring: z.strictObject({}) } }, async (_request, reply) => reply.type('text/css; charset=utf-8').send(CASE_FILE_CSS));
}

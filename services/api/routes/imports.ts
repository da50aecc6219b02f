import type { FastifyInstance } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { dryRunImport } from '../../../pipelines/imports/dry-run.ts';
import { readJsonBody } from '../http/json-body.ts';
import { sendProblem } from '../http/problem-reply.ts';

// Historical imports (scope ingest: an import lands events exactly as ingest does, so the same
// credential may run one). POST /v1/imports/dry-run runs a mapping over a sample and stores
// nothing; its work is bounded by the payload cap, so it is not charged to the rate limit.
export function registerImportRoutes(app: FastifyInstance, deps: { clock: Clock; assets: TenantAssetRegistry; occurredAtFutureSkewS: number }): void {
  app.post('/v1/imports/dry-run', { config: { scopes: ['ingest'] } }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, { detail: body.detail });
    const outcome = await dryRunImport(body.value, {
      registry: await deps.assets.forTenant(request.apiKey!.tenantId),
      nowMs: deps.clock.now().getTime(),
      futureSkewMs: deps.occurredAtFutureSkewS * 1000,
    });
    if (!outcome.ok) return sendProblem(request, reply, outcome.code, { detail: outcome.detail, errors: outcome.errors });
    return outcome.report;
  });
}

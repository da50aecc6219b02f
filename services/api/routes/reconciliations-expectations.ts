import type { FastifyInstance } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { parseId } from '../../../platform/ids.ts';
import type { Reconciliations } from '../../../pipelines/reconcile/reconciliations.ts';
import { bodyRefusal, readJsonBody } from '../http/json-body.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { sendProblem } from '../http/problem-reply.ts';

// Expected declarations: the feed's owner (ingest key) says which daily declarations it sends and
// by when; ingest and read keys list them. A day whose declaration is late is announced as
// coverage.degraded by the reconcile pipeline.
export function registerReconciliationExpectationRoutes(app: FastifyInstance, deps: { clock: Clock; assets: TenantAssetRegistry; reconciliations: Reconciliations }): void {
  const noKey = refuseIdempotencyKey('reconciliation expectations');
  const expectations = deps.reconciliations.expectations;

  app.post('/v1/reconciliation-expectations', { config: { scopes: ['ingest'] as const }, preHandler: noKey }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const tenantId = request.apiKey!.tenantId;
    const outcome = await expectations.create(tenantId, body.value, await deps.assets.forTenant(tenantId), deps.clock.now());
    if (outcome.kind === 'invalid') return sendProblem(request, reply, outcome.code, { detail: 'the expectation is not valid', errors: outcome.errors });
    if (outcome.kind === 'conflict') return sendProblem(request, reply, 'svc:reconciliation/expectation_exists', { detail: outcome.detail });
    return reply.code(201).send(outcome.view);
  });

  app.get('/v1/reconciliation-expectations', { config: { scopes: ['ingest', 'read'] as const }, preHandler: noKey }, async (request) => ({
    data: await expectations.list(request.apiKey!.tenantId),
  }));

  app.delete<{ Params: { id: string } }>('/v1/reconciliation-expectations/:id', { config: { scopes: ['ingest'] as const }, preHandler: noKey }, async (request, reply) => {
    const id = parseId('reconciliationExpectation', request.params.id);
    if (id && (await expectations.remove(request.apiKey!.tenantId, id, deps.clock.now()))) return reply.code(204).send();
    return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no expectation with this id in this tenant' });
  });
}

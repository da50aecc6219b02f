import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import { validateItem } from '../../../schemas/validation/validate-item.ts';
import type { AcceptanceQueue } from '../../../platform/inbox/acceptance-queue.ts';
import type { NonceLedger } from '../../../platform/keys/nonce-ledger.ts';
import type { TokenBuckets } from '../../../platform/rate-limit/token-buckets.ts';
import { bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { admissionOf, answerRefusedAdmission, refuseClaimingNonce } from '../http/admission.ts';
import { problemFor } from '../../../platform/http/problem-reply.ts';
import { validateContract } from '../http/ingest-contracts.ts';
import { validateRequestItems, wrapperRefusal } from '../ingest/request-items.ts';
import type { DryRunResponse, DryRunResult } from '../../../schemas/responses.ts';

// POST /v1/validate: exactly the live validation, nothing stored. 200 when every item is valid,
// 422 with the same body shape when any is not.
export function registerValidateRoute(
  app: FastifyInstance,
  deps: { clock: Clock; assets: TenantAssetRegistry; buckets: TokenBuckets; admissions: AcceptanceQueue; nonces: NonceLedger; occurredAtFutureSkewS: number },
): void {
  // The nonce is claimed with the charge, in one round trip (http/admission.ts).
  app.post('/v1/validate', { config: { scopes: ['ingest', 'read'], claimsNonce: true }, schema: validateContract }, async (request, reply) => {
    const body = readJsonBody(request, { batch: true });
    if (!body.ok) return refuseClaimingNonce(request, reply, deps, body.code, bodyRefusal(body));

    const found = validateRequestItems(body.value);
    if (found.kind !== 'items') {
      const { code, ...refusal } = wrapperRefusal(found);
      return refuseClaimingNonce(request, reply, deps, code, refusal);
    }

    // Validation is charged like ingest: one token per item checked.
    const cost = found.items.length;
    const admission = admissionOf(request, cost, await deps.buckets.prepare(request.apiKey!.tenantId));
    const refused = answerRefusedAdmission(request, reply, await deps.admissions.admit(admission), cost);
    if (refused) return refused;

    const context = {
      registry: await deps.assets.forTenant(request.apiKey!.tenantId),
      nowMs: deps.clock.now().getTime(),
      futureSkewMs: deps.occurredAtFutureSkewS * 1000,
    };
    const results: DryRunResult[] = found.items.map((item, index) => {
      const refusal = body.batch?.items[index]?.refusal;
      if (refusal) return { index, outcome: 'rejected', problem: problemFor(request, 'svc:validation/schema', { detail: 'the item failed validation', errors: [refusal] }) };
      const outcome = validateItem(item, context, found.prefix(index));
      if (outcome.ok) {
        return { index, outcome: 'valid', object: outcome.object, external_id: outcome.event.external_id };
      }
      return {
        index,
        outcome: 'rejected',
        ...(outcome.object ? { object: outcome.object } : {}),
        ...(outcome.externalId !== undefined ? { external_id: outcome.externalId } : {}),
        problem: problemFor(request, outcome.code, { detail: 'the item failed validation', errors: outcome.errors }),
      };
    });
    const accepted = results.filter((r) => r.outcome === 'valid').length;
    const response: DryRunResponse = {
      valid: accepted === results.length,
      checked: results.length,
      accepted,
      rejected: results.length - accepted,
      results,
    };
    return reply.code(response.valid ? 200 : 422).send(response);
  });
}

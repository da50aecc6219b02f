import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Admission, AdmissionOutcome } from '../../../platform/inbox/admission.ts';
import type { NonceLedger } from '../../../platform/keys/nonce-ledger.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import type { BucketLimits, TokenBuckets } from '../../../platform/rate-limit/token-buckets.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import type { FieldError } from '../../../schemas/problem.ts';
import { NONCE_REPLAYED_DETAIL } from '../auth/authenticate.ts';
import { applyRateLimitHeaders } from './rate-limit-headers.ts';

// Routes that claim their request's nonce themselves (config.claimsNonce) answer nothing before
// the claim: a request refused before its admission claims the nonce alone, then answers 401 if
// it was used, so a replay is refused the same way whatever else is wrong with it. The refusal
// reports the tenant's bucket, as every ingest, batch and validate response does; it spends
// nothing from it.
export async function refuseClaimingNonce(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: { nonces: NonceLedger; buckets: TokenBuckets },
  code: ErrorCode,
  options: { detail?: string; errors?: FieldError[] },
): Promise<FastifyReply> {
  const pending = takePendingNonce(request);
  if (!(await deps.nonces.claim(request.apiKey!, pending.nonce, pending.at))) return nonceReplayed(request, reply);
  applyRateLimitHeaders(reply, await deps.buckets.peek(request.apiKey!.tenantId));
  return sendProblem(request, reply, code, options);
}

// The request's admission: its nonce, and its cost in events at its tenant's limits.
export function admissionOf(request: FastifyRequest, cost: number, limits: BucketLimits): Admission {
  const { nonce, at } = takePendingNonce(request);
  const key = request.apiKey!;
  return { tenantId: key.tenantId, keyId: key.keyId, nonce, at, cost, limits };
}

// Reports the bucket on the reply; when the request was not admitted, answers it (401 for a
// replayed nonce, 429 over the limit) and returns that reply.
export function answerRefusedAdmission(request: FastifyRequest, reply: FastifyReply, outcome: AdmissionOutcome, cost: number): FastifyReply | undefined {
  if (outcome.kind === 'replayed') return nonceReplayed(request, reply);
  applyRateLimitHeaders(reply, outcome.bucket);
  if (outcome.kind === 'admitted') return undefined;
  return sendProblem(request, reply, 'svc:rate_limit/exceeded', { detail: `this request costs ${cost} events; retry after ${outcome.bucket.retryAfterS} s` });
}

function takePendingNonce(request: FastifyRequest): { nonce: string; at: Date } {
  const pending = request.pendingNonce;
  if (!pending) throw new Error('no pending nonce: the route must declare claimsNonce, and take it once');
  request.pendingNonce = undefined;
  return pending;
}

function nonceReplayed(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(request, reply, 'svc:auth/nonce_replayed', { detail: NONCE_REPLAYED_DETAIL });
}

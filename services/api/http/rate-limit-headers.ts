import type { FastifyReply } from 'fastify';
import type { BucketState, TokenBuckets } from '../../../platform/rate-limit/token-buckets.ts';

export function applyRateLimitHeaders(reply: FastifyReply, state: BucketState): void {
  reply.header('Svc-RateLimit-Limit', String(state.limit));
  reply.header('Svc-RateLimit-Remaining', String(state.remaining));
  reply.header('Svc-RateLimit-Reset', String(state.resetS));
  if (!state.granted) reply.header('Retry-After', String(state.retryAfterS));
}

// Charges a request's events to its tenant's bucket and reports the bucket on the reply.
// Undefined when granted; otherwise the detail of the 429 svc:rate_limit/exceeded to answer.
export async function chargeEvents(reply: FastifyReply, buckets: TokenBuckets, tenantId: string, events: number): Promise<string | undefined> {
  const state = await buckets.take(tenantId, events);
  applyRateLimitHeaders(reply, state);
  return state.granted ? undefined : `this request costs ${events} events; retry after ${state.retryAfterS} s`;
}

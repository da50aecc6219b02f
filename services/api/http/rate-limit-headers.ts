import type { FastifyReply } from 'fastify';
import type { BucketState } from '../../../platform/rate-limit/token-buckets.ts';

export function applyRateLimitHeaders(reply: FastifyReply, state: BucketState): void {
  reply.header('Svc-RateLimit-Limit', String(state.limit));
  reply.header('Svc-RateLimit-Remaining', String(state.remaining));
  reply.header('Svc-RateLimit-Reset', String(state.resetS));
  if (!state.granted) reply.header('Retry-After', String(state.retryAfterS));
}

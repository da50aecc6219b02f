import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../../../platform/http/problem-reply.ts';

// A route-level preHandler for routes that honour no Idempotency-Key (the spec: only ingest does):
// a request carrying one is refused, so no client believes a blind retry of such a write is safe.
// Attached to the routes themselves, it runs after authentication and whatever the URL's spelling.
export function refuseIdempotencyKey(what: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers['idempotency-key'] === undefined) return;
    return sendProblem(request, reply, 'svc:request/bad_request', { detail: `${what} take no Idempotency-Key; do not retry these writes blindly` });
  };
}

import type { FastifyInstance } from 'fastify';
import { sendProblem } from './problem-reply.ts';

// Routes that honour no Idempotency-Key (the spec: only ingest does) refuse a request carrying
// one, so no client believes a blind retry of such a write is safe.
export function refuseIdempotencyKeys(app: FastifyInstance, pathPrefixes: string[], what: string): void {
  app.addHook('preHandler', async (request, reply) => {
    // The route's pattern, not the raw URL: a percent-encoded path reaches the same route.
    const route = request.routeOptions.url ?? '';
    if (request.headers['idempotency-key'] === undefined || !pathPrefixes.some((prefix) => route.startsWith(prefix))) return;
    return sendProblem(request, reply, 'svc:request/bad_request', { detail: `${what} take no Idempotency-Key; do not retry these writes blindly` });
  });
}

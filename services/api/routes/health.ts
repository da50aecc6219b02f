import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { healthSchema } from '../../../schemas/responses.ts';
import { json, problem } from '../http/route-schema.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { pingDatabase } from '../health-store.ts';

// Liveness needs no signature and touches nothing; readiness also checks the database.
export function registerHealthRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get(
    '/health',
    { config: { public: true }, schema: { tags: ['health'], summary: 'Liveness (unauthenticated)', response: { 200: json(healthSchema, 'alive') } } },
    async () => ({ status: 'ok' as const }),
  );
  routes.get(
    '/ready',
    {
      config: { public: true },
      schema: { summary: 'Readiness: the database answers', response: { 200: json(healthSchema, 'ready'), 500: problem('the database is not reachable') } },
    },
    async (request, reply) => {
      try {
        await pingDatabase(deps.pool);
        return { status: 'ok' as const };
      } catch {
        return sendProblem(request, reply, 'svc:internal/error', { detail: 'the database is not reachable' });
      }
    },
  );
}

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { healthSchema } from '../../../schemas/responses.ts';
import { json, problem } from '../http/route-schema.ts';
import { sendUnavailable } from '../../../platform/http/error-handling.ts';
import { pingDatabase } from '../../../platform/postgres/ping.ts';

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
      schema: { summary: 'Readiness: the database answers', response: { 200: json(healthSchema, 'ready'), 503: problem('the database is not reachable (Retry-After)') } },
    },
    async (request, reply) => {
      try {
        await pingDatabase(deps.pool);
        return { status: 'ok' as const };
      } catch {
        return sendUnavailable(request, reply, 'the database is not reachable');
      }
    },
  );
}

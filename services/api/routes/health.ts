import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { sendProblem } from '../http/problem-reply.ts';

// Liveness needs no signature and touches nothing; readiness also checks the database.
export function registerHealthRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  app.get('/health', { config: { public: true } }, async () => ({ status: 'ok' as const }));
  app.get('/ready', { config: { public: true } }, async (request, reply) => {
    try {
      await deps.pool.query('SELECT 1');
      return { status: 'ok' as const };
    } catch {
      return sendProblem(request, reply, 'svc:internal/error', { detail: 'the database is not reachable' });
    }
  });
}

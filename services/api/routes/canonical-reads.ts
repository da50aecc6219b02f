import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { CursorCodec } from '../http/cursor.ts';
import { sendProblem } from '../http/problem-reply.ts';
import { findEntity, loadPosture, partyMovements, sendMovementPage, type MovementQuery } from '../reads/parties.ts';
import { entityView, MOVEMENT_COLUMNS, movementView, type MovementRow } from '../reads/views.ts';

const ENTITY_PATHS = { party: '/v1/parties', account: '/v1/accounts', instrument: '/v1/instruments' } as const;

type Params = { Params: { external_id: string } };

// Canonical reads (scope read). Every query filters on the caller's tenant; an unknown id is a
// governed 404, never an empty 200.
export function registerCanonicalReads(app: FastifyInstance, deps: { pool: Pool; clock: Clock; cursors: CursorCodec }): void {
  const read = { config: { scopes: ['read'] as const } };
  const notFound = (what: string) => ({ detail: `no ${what} with this external_id in this tenant` });

  for (const [object, path] of Object.entries(ENTITY_PATHS)) {
    app.get<Params>(`${path}/:external_id`, read, async (request, reply) => {
      const row = await findEntity(deps.pool, request.apiKey!.tenantId, object, request.params.external_id);
      if (!row) return sendProblem(request, reply, 'svc:resource/not_found', notFound(object));
      return entityView(row);
    });
  }

  app.get<Params>('/v1/movements/:external_id', read, async (request, reply) => {
    const { rows } = await deps.pool.query<MovementRow>(
      `SELECT ${MOVEMENT_COLUMNS} FROM canonical_movements m WHERE m.tenant_id = $1 AND m.external_id = $2`,
      [request.apiKey!.tenantId, request.params.external_id],
    );
    if (!rows[0]) return sendProblem(request, reply, 'svc:resource/not_found', notFound('movement'));
    return movementView(rows[0]);
  });

  app.get<Params & { Querystring: MovementQuery }>('/v1/parties/:external_id/movements', read, async (request, reply) => {
    const outcome = await partyMovements(deps.pool, deps.cursors, request.apiKey!.tenantId, request.params.external_id, request.query);
    return sendMovementPage(request, reply, outcome);
  });

  // Band only (tipping-off control): no reasons, typologies, detector names or narratives.
  app.get<Params>('/v1/posture/parties/:external_id', read, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const partyId = request.params.external_id;
    if (!(await findEntity(deps.pool, tenantId, 'party', partyId))) return sendProblem(request, reply, 'svc:resource/not_found', notFound('party'));
    return { external_id: partyId, ...(await loadPosture(deps.pool, tenantId, partyId, deps.clock.now())) };
  });
}

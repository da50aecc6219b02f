import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../platform/clock.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { entityViewSchema, movementPageSchema, movementViewSchema, postureSchema } from '../../../schemas/responses.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { windowCheck } from '../../../platform/http/query-schema.ts';
import { externalIdParam, invalidQuery, json, notFound } from '../http/route-schema.ts';
import { findEntity, findMovement, loadPosture, movementPage, sendMovementPage } from '../../reads/parties.ts';
import { entityView, movementView } from '../../reads/views.ts';
import { movementQueryShape } from '../../reads/query-schemas.ts';

const ENTITY_PATHS = { party: '/v1/parties', account: '/v1/accounts', instrument: '/v1/instruments' } as const;

const params = z.object({ external_id: externalIdParam() });
const unknown = notFound('unknown in this tenant');
const movementQuery = z.strictObject(movementQueryShape).refine(...windowCheck('from', 'to'));

// Canonical reads (scope read). Every query filters on the caller's tenant; an unknown id is a
// governed 404, never an empty 200.
export function registerCanonicalReads(app: FastifyInstance, deps: { pool: Pool; clock: Clock; cursors: CursorCodec }): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const read = { scopes: ['read'] as const };
  const tags = ['canonical reads'];
  const notFoundDetail = (what: string) => ({ detail: `no ${what} with this external_id in this tenant` });

  for (const [object, path] of Object.entries(ENTITY_PATHS)) {
    const schema = { tags, summary: `The current version of ${object === 'account' ? 'an' : 'a'} ${object} (scope read)`, params, response: { 200: json(entityViewSchema, 'found'), 404: unknown } };
    routes.get(`${path}/:external_id`, { config: read, schema }, async (request, reply) => {
      const row = await findEntity(deps.pool, request.apiKey!.tenantId, object, request.params.external_id);
      if (!row) return sendProblem(request, reply, 'svc:resource/not_found', notFoundDetail(object));
      return entityView(row);
    });
  }

  const movementSchema = { tags, summary: 'A movement, with its normalised amount and FX provenance (scope read)', params, response: { 200: json(movementViewSchema, 'found'), 404: unknown } };
  routes.get('/v1/movements/:external_id', { config: read, schema: movementSchema }, async (request, reply) => {
    const movement = await findMovement(deps.pool, request.apiKey!.tenantId, request.params.external_id);
    if (!movement) return sendProblem(request, reply, 'svc:resource/not_found', notFoundDetail('movement'));
    return movementView(movement);
  });

  const pageSchema = {
    tags,
    summary: 'A party\'s movements, newest first, by opaque cursor (scope read)',
    params,
    querystring: movementQuery,
    response: { 200: json(movementPageSchema, 'a page'), 400: invalidQuery, 404: unknown },
  };
  routes.get('/v1/parties/:external_id/movements', { config: read, schema: pageSchema }, async (request, reply) => {
    const { direction, ...rest } = request.query;
    const outcome = await movementPage(deps.pool, deps.cursors, request.apiKey!.tenantId, request.params.external_id, { ...rest, direction: direction ?? 'both' });
    return sendMovementPage(request, reply, outcome);
  });

  // Band only (tipping-off control): no reasons, typologies, detector names or narratives.
  const postureRoute = { tags, summary: 'The banded posture of a party; no reasons (scope read)', params, response: { 200: json(postureSchema, 'found'), 404: unknown } };
  routes.get('/v1/posture/parties/:external_id', { config: read, schema: postureRoute }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const partyId = request.params.external_id;
    if (!(await findEntity(deps.pool, tenantId, 'party', partyId))) return sendProblem(request, reply, 'svc:resource/not_found', notFoundDetail('party'));
    return { external_id: partyId, ...(await loadPosture(deps.pool, tenantId, partyId, deps.clock.now())) };
  });
}

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { graphNetworkSchema, graphPathsSchema } from '../../../schemas/responses.ts';
import { windowCheck } from '../../../platform/http/query-schema.ts';
import { externalIdParam, invalidQuery, json, notFound } from '../http/route-schema.ts';
import { networkOf, pathsBetween, sendGraphProblem, type GraphDeps } from '../../reads/graph.ts';
import { edgeFilterOf, networkQueryShape, pathsQueryShape } from '../../reads/query-schemas.ts';

const networkQuery = z.strictObject(networkQueryShape()).refine(...windowCheck('since', 'until'));
const pathsQuery = z.strictObject(pathsQueryShape).refine(...windowCheck('since', 'until'));

// The analysts' graph queries (scope read): a party's network and the shortest paths between two
// parties, as nodes and edges ready to draw (services/reads/graph.ts). Unknown parties are a
// governed 404.
export function registerGraphRoutes(app: FastifyInstance, deps: GraphDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const read = { scopes: ['read'] as const };
  const tags = ['canonical reads'];

  const network = {
    tags,
    summary: 'A party\'s network to a depth, as nodes and edges to draw (scope read)',
    params: z.object({ external_id: externalIdParam() }),
    querystring: networkQuery,
    response: { 200: json(graphNetworkSchema, 'found'), 400: invalidQuery, 404: notFound('unknown party in this tenant') },
  };
  routes.get('/v1/graph/parties/:external_id/network', { config: read, schema: network }, async (request, reply) => {
    const { depth, limit, ...filter } = request.query;
    const outcome = await networkOf(deps, request.apiKey!.tenantId, request.params.external_id, { depth, nodeCap: limit, filter: edgeFilterOf(filter) });
    return outcome.kind === 'ok' ? outcome.body : sendGraphProblem(request, reply, outcome);
  });

  const paths = {
    tags,
    summary: 'Shortest paths between two parties, as nodes and edges to draw (scope read)',
    querystring: pathsQuery,
    response: { 200: json(graphPathsSchema, 'found'), 400: invalidQuery, 404: notFound('from or to is unknown in this tenant (errors name which)') },
  };
  routes.get('/v1/graph/paths', { config: read, schema: paths }, async (request, reply) => {
    const { from, to, max_depth, limit, ...filter } = request.query;
    const outcome = await pathsBetween(deps, request.apiKey!.tenantId, { from, to, maxDepth: max_depth, limit, filter: edgeFilterOf(filter) });
    return outcome.kind === 'ok' ? outcome.body : sendGraphProblem(request, reply, outcome);
  });
}

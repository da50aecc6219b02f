import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { EDGE_TYPES } from '../../../platform/graph/port.ts';
import { graphNetworkSchema, graphPathsSchema } from '../../../schemas/responses.ts';
import { dateTime, integer, list, minorUnits, text, windowCheck } from '../http/query-schema.ts';
import { externalIdParam, invalidQuery, json, notFound } from '../http/route-schema.ts';
import { GRAPH_LIMITS, networkOf, pathsBetween, sendGraphProblem, type GraphDeps } from '../reads/graph.ts';

// The edge filter both queries take: an event-time window, edge types and a transfer floor.
const filterShape = {
  since: dateTime().meta({ description: 'event-time window start (transfers in it; other edges valid in it)' }),
  until: dateTime(),
  edge_types: list(EDGE_TYPES),
  min_amount: minorUnits().meta({ description: 'transfers of at least this many base-asset minor units' }),
};
const filterOf = (query: { since?: Date; until?: Date; edge_types?: (typeof EDGE_TYPES)[number][]; min_amount?: bigint }) => ({
  since: query.since,
  until: query.until,
  types: query.edge_types,
  minAmount: query.min_amount,
});

const networkQuery = z
  .object({
    depth: integer(GRAPH_LIMITS.depth).meta({ description: 'hops over edges of any type and direction' }),
    limit: integer(GRAPH_LIMITS.nodes).meta({ description: 'most nodes returned (the party included)' }),
    ...filterShape,
  })
  .refine(...windowCheck('since', 'until'));

const pathsQuery = z
  .object({
    from: text({ required: true }).meta({ description: 'party external_id' }),
    to: text({ required: true }).meta({ description: 'party external_id' }),
    max_depth: integer(GRAPH_LIMITS.pathDepth),
    limit: integer(GRAPH_LIMITS.paths).meta({ description: 'most paths returned' }),
    ...filterShape,
  })
  .refine(...windowCheck('since', 'until'));

// The analysts' graph queries (scope read): a party's network and the shortest paths between two
// parties, as nodes and edges ready to draw (services/api/reads/graph.ts). Unknown parties are a
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
    const outcome = await networkOf(deps, request.apiKey!.tenantId, request.params.external_id, { depth, nodeCap: limit, filter: filterOf(filter) });
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
    const outcome = await pathsBetween(deps, request.apiKey!.tenantId, { from, to, maxDepth: max_depth, limit, filter: filterOf(filter) });
    return outcome.kind === 'ok' ? outcome.body : sendGraphProblem(request, reply, outcome);
  });
}

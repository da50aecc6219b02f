import type { FastifyInstance } from 'fastify';
import { partyNetwork, partyPaths, sendGraphProblem, type GraphDeps } from '../reads/graph.ts';

type Query = Record<string, unknown>;

// The analysts' graph queries (scope read): a party's network and the shortest paths between two
// parties, as nodes and edges ready to draw (services/api/reads/graph.ts). Unknown parties are a
// governed 404.
export function registerGraphRoutes(app: FastifyInstance, deps: GraphDeps): void {
  const read = { config: { scopes: ['read'] as const } };

  app.get<{ Params: { external_id: string }; Querystring: Query }>('/v1/graph/parties/:external_id/network', read, async (request, reply) => {
    const outcome = await partyNetwork(deps, request.apiKey!.tenantId, request.params.external_id, request.query);
    return outcome.kind === 'ok' ? outcome.body : sendGraphProblem(request, reply, outcome);
  });

  app.get<{ Querystring: Query }>('/v1/graph/paths', read, async (request, reply) => {
    const outcome = await partyPaths(deps, request.apiKey!.tenantId, request.query);
    return outcome.kind === 'ok' ? outcome.body : sendGraphProblem(request, reply, outcome);
  });
}

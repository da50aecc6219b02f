import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { EdgeFilter, GraphStore } from '../../platform/graph/port.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../platform/tenants/tenants.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { renderPath, renderSubgraph, type BaseAsset } from './graph-render.ts';
import { sendProblem } from '../../platform/http/problem-reply.ts';

// The analysts' graph queries shared by the /v1 API (scope read) and the console: a party's
// network and the shortest paths between two parties, as nodes and edges ready to draw.

// Bounds of every analyst query: whatever is asked, no request can run away on a large graph
// (the store adds a statement timeout and answers `truncated` when it stops short).
export const GRAPH_LIMITS = {
  depth: { min: 1, max: 4, fallback: 2 },
  nodes: { min: 1, max: 1000, fallback: 200 },
  pathDepth: { min: 1, max: 8, fallback: 6 },
  paths: { min: 1, max: 50, fallback: 10 },
} as const;

type Range = { min: number; max: number; fallback: number };
export type GraphLimits = { [K in keyof typeof GRAPH_LIMITS]: Range };

export interface GraphDeps {
  pool: Pool;
  graph: GraphStore;
  assets: TenantAssetRegistry;
}

// The network for checked parameters (the route's declared query schema).
export async function networkOf(deps: GraphDeps, tenantId: string, party: string, query: { depth: number; nodeCap: number; filter: EdgeFilter }) {
  const { depth, nodeCap, filter } = query;
  if (!(await partyExists(deps.pool, tenantId, party))) return { kind: 'not_found' } as const;
  const subgraph = await deps.graph.egoNetwork(tenantId, { kind: 'party', key: party }, { depth, filter, nodeCap });
  return {
    kind: 'ok',
    body: { center: `party:${party}`, depth, window: windowOf(filter), ...renderSubgraph(subgraph, await baseAsset(deps, tenantId)) },
  } as const;
}

// The shortest paths for checked parameters (the route's declared query schema).
export async function pathsBetween(deps: GraphDeps, tenantId: string, query: { from: string; to: string; maxDepth: number; limit: number; filter: EdgeFilter }) {
  const { from, to, maxDepth, limit, filter } = query;
  const missing: FieldError[] = [];
  for (const [path, party] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!(await partyExists(deps.pool, tenantId, party))) missing.push({ path, code: 'svc:resource/not_found', message: 'no party with this external_id in this tenant' });
  }
  if (missing.length > 0) return { kind: 'not_found', errors: missing } as const;
  const { paths, subgraph } = await deps.graph.shortestPaths(tenantId, { kind: 'party', key: from }, { kind: 'party', key: to }, { maxDepth, filter, limit });
  return {
    kind: 'ok',
    body: {
      from: `party:${from}`,
      to: `party:${to}`,
      max_depth: maxDepth,
      window: windowOf(filter),
      paths: paths.map(renderPath),
      ...renderSubgraph(subgraph, await baseAsset(deps, tenantId)),
    },
  } as const;
}

// A graph query about an unknown party: a governed 404 (the errors name which, for paths).
export function sendGraphProblem(request: FastifyRequest, reply: FastifyReply, outcome: { kind: 'not_found'; errors?: FieldError[] }) {
  return outcome.errors
    ? sendProblem(request, reply, 'svc:resource/not_found', { detail: 'unknown party', errors: outcome.errors })
    : sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no party with this external_id in this tenant' });
}

function windowOf(filter: EdgeFilter) {
  return { since: filter.since?.toISOString() ?? null, until: filter.until?.toISOString() ?? null };
}

// A party is known when the canonical model has it, whether or not it has any edge yet.
async function partyExists(pool: Pool, tenantId: string, party: string): Promise<boolean> {
  const { rows } = await pool.query({
    name: 'graph-party-exists',
    text: `SELECT 1 FROM canonical_entities WHERE tenant_id = $1 AND object = 'party' AND external_id = $2`,
    values: [tenantId, party],
  });
  return rows.length > 0;
}

async function baseAsset(deps: { pool: Pool; assets: TenantAssetRegistry }, tenantId: string): Promise<BaseAsset> {
  const asset = await baseAssetOf(deps.pool, tenantId);
  return { asset, scale: (await deps.assets.forTenant(tenantId)).scaleOf(asset) ?? 0 };
}

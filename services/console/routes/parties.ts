import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { strictQuery, windowCheck } from '../../../platform/http/query-schema.ts';
import { networkOf, pathsBetween, sendGraphProblem, GRAPH_LIMITS, type GraphLimits } from '../../reads/graph.ts';
import { findEntity, loadPosture, movementPage, partyAccounts, sendMovementPage } from '../../reads/parties.ts';
import { edgeFilterOf, movementQueryShape, networkQueryShape, pathsQueryShape } from '../../reads/query-schemas.ts';
import { entityView } from '../../reads/views.ts';
import { consoleContext } from '../app.ts';
import { openAlertCounts, postureReasons } from '../queries/cases.ts';
import { auditAs, type ConsoleRouteDeps } from './common.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import {
  consoleMovementPageSchema,
  consoleNetworkSchema,
  consolePathsSchema,
  partyPageSchema,
  partyParamsSchema,
} from '../../../schemas/console/routes.ts';

// Accounts shown with a party; a party holding more is rare and says so (accounts_truncated).
const MAX_ACCOUNTS = 200;
// The console's network explorer expands at most three hops at a time.
const CONSOLE_GRAPH_LIMITS: GraphLimits = { ...GRAPH_LIMITS, depth: { min: 1, max: 3, fallback: 1 } };

// The canonical reads' queries, read the console's way (an unknown parameter refused, every
// finding at once).
const movementsQuery = strictQuery(movementQueryShape, windowCheck('from', 'to'));
const networkQuery = strictQuery(networkQueryShape(CONSOLE_GRAPH_LIMITS), windowCheck('since', 'until'));
const pathsQuery = strictQuery(pathsQueryShape, windowCheck('since', 'until'));

type Params = { Params: { external_id: string } };

// Identifying values only as their keyed hashes: the canonical model stores nothing else, and the
// view keeps to type, value_hash and verification status whatever the stored object carries.
function hashedIdentifiers(value: unknown): unknown {
  if (!Array.isArray(value)) return [];
  return value.map((item: Record<string, unknown>) => ({
    type: item?.type,
    value_hash: item?.value_hash,
    ...(item?.verification_status !== undefined ? { verification_status: item.verification_status } : {}),
  }));
}

// The party view, its movements, and the network explorer (docs/decisions/0018-console-api.md).
export function registerPartyRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  // Viewing a party is audited (party.viewed).
  app.get<Params>('/console/v1/parties/:external_id', { schema: { params: partyParamsSchema, response: { 200: partyPageSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const partyId = request.params.external_id;
    const row = await findEntity(deps.pool, tenantId, 'party', partyId);
    if (!row) return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no party with this external_id in this tenant' });
    const now = deps.clock.now();
    const accounts = await partyAccounts(deps.pool, tenantId, partyId, MAX_ACCOUNTS + 1);
    const party = entityView(row);
    await auditAs(deps.pool, request, 'party.viewed', `party:${partyId}`, {}, now);
    return {
      party: { ...party, identifiers: hashedIdentifiers(party.identifiers) },
      accounts: accounts.slice(0, MAX_ACCOUNTS).map((account) => {
        const view = entityView(account);
        return { ...view, ...(view.identifiers !== undefined ? { identifiers: hashedIdentifiers(view.identifiers) } : {}) };
      }),
      accounts_truncated: accounts.length > MAX_ACCOUNTS,
      posture: { ...(await loadPosture(deps.pool, tenantId, partyId, now)), reasons: await postureReasons(deps.pool, tenantId, partyId) },
    };
  });

  app.get<Params>(
    '/console/v1/parties/:external_id/movements',
    { schema: { params: partyParamsSchema, querystring: movementsQuery, response: { 200: consoleMovementPageSchema } } },
    async (request, reply) => {
      const { direction, ...rest } = request.query as z.output<typeof movementsQuery>;
      const outcome = await movementPage(deps.pool, deps.cursors, consoleContext(request).user.tenant_id, request.params.external_id, { ...rest, direction: direction ?? 'both' });
      return sendMovementPage(request, reply, outcome);
    },
  );

  // Each node of a party or an account carries open_alerts: how many open alerts have it as
  // their subject. Expanding a node is another call with that party at the centre.
  app.get<Params>('/console/v1/network/:external_id', { schema: { params: partyParamsSchema, querystring: networkQuery, response: { 200: consoleNetworkSchema } } }, async (request, reply) => {
    const tenantId = consoleContext(request).user.tenant_id;
    const { depth, limit, ...filter } = request.query as z.output<typeof networkQuery>;
    const outcome = await networkOf(deps, tenantId, request.params.external_id, { depth, nodeCap: limit, filter: edgeFilterOf(filter) });
    if (outcome.kind !== 'ok') return sendGraphProblem(request, reply, outcome);
    const subjectOf = (n: (typeof outcome.body.nodes)[number]) => ((n.kind === 'party' || n.kind === 'account') && 'external_id' in n ? `${n.kind}:${n.external_id}` : undefined);
    const subjects = outcome.body.nodes.flatMap((n) => ((n.kind === 'party' || n.kind === 'account') && 'external_id' in n ? [{ kind: n.kind, id: n.external_id }] : []));
    const counts = await openAlertCounts(deps.pool, tenantId, subjects);
    return { ...outcome.body, nodes: outcome.body.nodes.map((n) => ({ ...n, open_alerts: counts.get(subjectOf(n) ?? '') ?? 0 })) };
  });

  app.get('/console/v1/paths', { schema: { querystring: pathsQuery, response: { 200: consolePathsSchema } } }, async (request, reply) => {
    const { from, to, max_depth: maxDepth, limit, ...filter } = request.query as z.output<typeof pathsQuery>;
    const outcome = await pathsBetween(deps, consoleContext(request).user.tenant_id, { from, to, maxDepth, limit, filter: edgeFilterOf(filter) });
    return outcome.kind === 'ok' ? outcome.body : sendGraphProblem(request, reply, outcome);
  });
}

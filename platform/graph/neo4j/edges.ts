import { edgeId, type EdgeFilter, type EdgeType, type GraphEdge, type NodeKind, type NodeRef } from '../port.ts';
import { INCIDENT_EDGES, INCIDENT_TRANSFERS, RECENT_MOVEMENTS as RECENT_MOVEMENTS_STATEMENT } from './cypher.ts';
import { bigintOf, bigintOrNull, dateOf, dateOrNull, jsonOrNull, numberOf, type ReadBudget, type Row } from './session.ts';

// An EDGE row of INCIDENT_EDGES as the port's GraphEdge.
export function toEdge(row: Row): GraphEdge {
  const from = { kind: row.fromKind as NodeKind, key: String(row.fromKey) };
  const to = { kind: row.toKind as NodeKind, key: String(row.toKey) };
  const qualifier = typeof row.qualifier === 'string' ? row.qualifier : '';
  return {
    id: edgeId(String(row.type), from, to, qualifier),
    type: row.type as EdgeType,
    from,
    to,
    qualifier,
    validFrom: dateOrNull(row.validFrom),
    validTo: dateOrNull(row.validTo),
    count: row.count === null || row.count === undefined ? 0 : numberOf(row.count),
    sum: bigintOrNull(row.sum),
    unpriced: row.unpriced === null || row.unpriced === undefined ? 0 : numberOf(row.unpriced),
    firstAt: dateOrNull(row.firstAt),
    lastAt: dateOrNull(row.lastAt),
    attrs: jsonOrNull(row.attrs) ?? {},
  };
}

// With a window or a minimum amount, a transfer edge is rebuilt from the movements that pass them.
function transfersFiltered(filter: EdgeFilter | undefined): boolean {
  return filter?.since !== undefined || filter?.until !== undefined || filter?.minAmount !== undefined;
}

function wants(filter: EdgeFilter | undefined, type: EdgeType): boolean {
  return !filter?.types || filter.types.includes(type);
}

// The edges touching any node of the frontier (either direction) that pass the filter, at most
// `limit` rows (the caller asks one more than it will keep, to know it was cut). With `within`,
// only edges whose other end is in that set. As the PostgreSQL adapter's incidentEdges.
export async function incidentEdges(
  budget: ReadBudget,
  tenantId: string,
  frontier: NodeRef[],
  filter: EdgeFilter | undefined,
  limit: number,
  within?: NodeRef[],
): Promise<{ edges: GraphEdge[]; complete: boolean }> {
  const byId = new Map<string, GraphEdge>();
  const filtered = transfersFiltered(filter);
  // Types read from EDGE: every type asked for, except transfers when they are rebuilt.
  const edgeTypes = filter?.types ? filter.types.filter((t) => !(filtered && t === 'transfer')) : null;
  let complete = true;
  if (edgeTypes === null || edgeTypes.length > 0) {
    const rows = await budget.run(INCIDENT_EDGES, {
      tenant: tenantId,
      frontier: frontier.map((n) => ({ kind: n.kind, key: n.key })),
      types: edgeTypes,
      rebuilt: filtered,
      until: filter?.until ?? null,
      since: filter?.since ?? null,
      within: within ? within.map((n) => [n.kind, n.key]) : null,
      limit,
    });
    if (rows === undefined) return { edges: [], complete: false };
    if (rows.length >= limit) complete = false;
    for (const row of rows) {
      const edge = toEdge(row);
      byId.set(edge.id, edge);
    }
  }

  const accounts = frontier.filter((n) => n.kind === 'account').map((n) => n.key);
  if (filtered && wants(filter, 'transfer') && accounts.length > 0) {
    const rows = await budget.run(INCIDENT_TRANSFERS, {
      tenant: tenantId,
      accounts,
      since: filter?.since ?? null,
      until: filter?.until ?? null,
      minAmount: filter?.minAmount ?? null,
      within: within ? within.filter((n) => n.kind === 'account').map((n) => n.key) : null,
      limit,
    });
    if (rows === undefined) return { edges: [...byId.values()], complete: false };
    if (rows.length >= limit) complete = false;
    for (const row of rows) {
      const from = { kind: 'account' as const, key: String(row.src) };
      const to = { kind: 'account' as const, key: String(row.dst) };
      const edge: GraphEdge = {
        id: edgeId('transfer', from, to, ''),
        type: 'transfer',
        from,
        to,
        qualifier: '',
        validFrom: null,
        validTo: null,
        count: numberOf(row.count),
        sum: bigintOf(row.sum),
        unpriced: numberOf(row.unpriced),
        firstAt: dateOf(row.firstAt),
        lastAt: dateOf(row.lastAt),
        attrs: {},
      };
      byId.set(edge.id, edge);
    }
  }
  return { edges: [...byId.values()], complete };
}

export const RECENT_MOVEMENTS = 10;

// The latest movements (in the filter's window) of each transfer edge, attached as `recent`.
export async function attachRecentMovements(budget: ReadBudget, tenantId: string, edges: GraphEdge[], filter: EdgeFilter | undefined): Promise<void> {
  const transfers = edges.filter((e) => e.type === 'transfer');
  if (transfers.length === 0) return;
  const rows = await budget.run(RECENT_MOVEMENTS_STATEMENT, {
    tenant: tenantId,
    pairs: transfers.map((e, i) => ({ i, src: e.from.key, dst: e.to.key })),
    since: filter?.since ?? null,
    until: filter?.until ?? null,
    minAmount: filter?.minAmount ?? null,
    recent: RECENT_MOVEMENTS,
  });
  for (const edge of transfers) edge.recent = [];
  for (const row of rows ?? []) {
    const edge = transfers[numberOf(row.i)]!;
    edge.recent!.push({
      movementId: String(row.movementId),
      from: edge.from.key,
      to: edge.to.key,
      occurredAt: dateOf(row.at),
      amount: bigintOrNull(row.amount),
    });
  }
  // Rows of one pair arrive in the subquery's order (latest first); kept as the port promises.
  for (const edge of transfers) edge.recent!.sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime() || compare(b.movementId, a.movementId));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}


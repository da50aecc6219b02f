import { edgeId, type EdgeFilter, type EdgeType, type GraphEdge, type NodeRef } from '../port.ts';
import type { GraphReads } from './access.ts';

// The latest movements a transfer edge carries (`recent`).
const RECENT_MOVEMENTS = 10;

// An edge of the port from its decoded parts; the id is computed from them, never stored. Field
// by field, not a spread: this runs for every edge row a traversal reads.
export function graphEdge(parts: Omit<GraphEdge, 'id' | 'recent'>): GraphEdge {
  return {
    id: edgeId(parts.type, parts.from, parts.to, parts.qualifier),
    type: parts.type,
    from: parts.from,
    to: parts.to,
    qualifier: parts.qualifier,
    validFrom: parts.validFrom,
    validTo: parts.validTo,
    count: parts.count,
    sum: parts.sum,
    unpriced: parts.unpriced,
    firstAt: parts.firstAt,
    lastAt: parts.lastAt,
    attrs: parts.attrs,
  };
}

// The transfer edge of a pair of accounts, rebuilt from its movements.
export function transferEdge(src: string, dst: string, totals: Pick<GraphEdge, 'count' | 'sum' | 'unpriced' | 'firstAt' | 'lastAt'>): GraphEdge {
  return graphEdge({
    type: 'transfer',
    from: { kind: 'account', key: src },
    to: { kind: 'account', key: dst },
    qualifier: '',
    validFrom: null,
    validTo: null,
    count: totals.count,
    sum: totals.sum,
    unpriced: totals.unpriced,
    firstAt: totals.firstAt,
    lastAt: totals.lastAt,
    attrs: {},
  });
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
// only edges whose other end is in that set.
export async function incidentEdges(
  reads: GraphReads,
  frontier: NodeRef[],
  filter: EdgeFilter | undefined,
  limit: number,
  within?: NodeRef[],
): Promise<{ edges: GraphEdge[]; complete: boolean }> {
  const byId = new Map<string, GraphEdge>();
  const filtered = transfersFiltered(filter);
  // Types read from the stored edges: every type asked for, except transfers when they are rebuilt.
  const types = filter?.types ? filter.types.filter((t) => !(filtered && t === 'transfer')) : null;
  let complete = true;
  if (types === null || types.length > 0) {
    const edges = await reads.storedEdges({
      frontier,
      types,
      rebuilt: filtered,
      since: filter?.since ?? null,
      until: filter?.until ?? null,
      within: within ?? null,
      limit,
    });
    if (edges === undefined) return { edges: [], complete: false };
    if (edges.length >= limit) complete = false;
    for (const edge of edges) byId.set(edge.id, edge);
  }

  const accounts = frontier.filter((n) => n.kind === 'account').map((n) => n.key);
  if (filtered && wants(filter, 'transfer') && accounts.length > 0) {
    const edges = await reads.rebuiltTransfers({
      accounts,
      since: filter?.since ?? null,
      until: filter?.until ?? null,
      minAmount: filter?.minAmount ?? null,
      within: within ? within.filter((n) => n.kind === 'account').map((n) => n.key) : null,
      limit,
    });
    if (edges === undefined) return { edges: [...byId.values()], complete: false };
    if (edges.length >= limit) complete = false;
    for (const edge of edges) byId.set(edge.id, edge);
  }
  return { edges: [...byId.values()], complete };
}

// incidentEdges (without `within`) for many frontiers at once, each with its own filter and
// limit: the stored edges of all of them in one statement, the rebuilt transfers in another. Each
// answer is what incidentEdges answers for its request alone.
export async function incidentEdgesMany(
  reads: GraphReads,
  requests: Array<{ frontier: NodeRef[]; filter: EdgeFilter | undefined; limit: number }>,
): Promise<Array<{ edges: GraphEdge[]; complete: boolean }>> {
  const answers = requests.map(() => ({ byId: new Map<string, GraphEdge>(), complete: true }));
  const stored = requests.flatMap((r, i) => {
    const filtered = transfersFiltered(r.filter);
    const types = r.filter?.types ? r.filter.types.filter((t) => !(filtered && t === 'transfer')) : null;
    if (types !== null && types.length === 0) return [];
    return [{ i, query: { frontier: r.frontier, types, rebuilt: filtered, since: r.filter?.since ?? null, until: r.filter?.until ?? null, limit: r.limit } }];
  });
  if (stored.length > 0) {
    const lists = await reads.storedEdgesMany(stored.map((s) => s.query));
    if (lists === undefined) return requests.map(() => ({ edges: [], complete: false }));
    stored.forEach(({ i, query }, n) => {
      const edges = lists[n]!;
      if (edges.length >= query.limit) answers[i]!.complete = false;
      for (const edge of edges) answers[i]!.byId.set(edge.id, edge);
    });
  }
  const rebuilt = requests.flatMap((r, i) => {
    const accounts = r.frontier.filter((n) => n.kind === 'account').map((n) => n.key);
    if (!transfersFiltered(r.filter) || !wants(r.filter, 'transfer') || accounts.length === 0) return [];
    return [{ i, query: { accounts, since: r.filter?.since ?? null, until: r.filter?.until ?? null, minAmount: r.filter?.minAmount ?? null, limit: r.limit } }];
  });
  if (rebuilt.length > 0) {
    const lists = await reads.rebuiltTransfersMany(rebuilt.map((r) => r.query));
    rebuilt.forEach(({ i, query }, n) => {
      const edges = lists?.[n];
      if (edges === undefined || edges.length >= query.limit) answers[i]!.complete = false;
      for (const edge of edges ?? []) answers[i]!.byId.set(edge.id, edge);
    });
  }
  return answers.map((a) => ({ edges: [...a.byId.values()], complete: a.complete }));
}

// The latest movements (in the filter's window) of each transfer edge, attached as `recent`.
export async function attachRecentMovements(reads: GraphReads, edges: GraphEdge[], filter: EdgeFilter | undefined): Promise<void> {
  const transfers = edges.filter((e) => e.type === 'transfer');
  if (transfers.length === 0) return;
  const rows = await reads.recentMovements(transfers, filter, RECENT_MOVEMENTS);
  for (const edge of transfers) edge.recent = [];
  for (const row of rows ?? []) {
    const edge = transfers[row.pair]!;
    edge.recent!.push({ movementId: row.movementId, from: edge.from.key, to: edge.to.key, occurredAt: row.occurredAt, amount: row.amount });
  }
}

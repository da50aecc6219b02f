import { edgeId, type EdgeFilter, type EdgeType, type GraphEdge, type NodeKind, type NodeRef } from '../port.ts';
import type { ReadBudget } from './budget.ts';

export interface EdgeRow {
  src_kind: string;
  src_key: string;
  type: string;
  dst_kind: string;
  dst_key: string;
  qualifier: string;
  valid_from: Date | null;
  valid_to: Date | null;
  count: bigint | string;
  sum: string | null;
  unpriced: bigint | string;
  first_at: Date | null;
  last_at: Date | null;
  attrs: Record<string, unknown>;
}

export function toEdge(row: EdgeRow): GraphEdge {
  const from = { kind: row.src_kind as NodeKind, key: row.src_key };
  const to = { kind: row.dst_kind as NodeKind, key: row.dst_key };
  return {
    id: edgeId(row.type, from, to, row.qualifier),
    type: row.type as EdgeType,
    from,
    to,
    qualifier: row.qualifier,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    count: Number(row.count),
    sum: row.sum === null ? null : BigInt(row.sum),
    unpriced: Number(row.unpriced),
    firstAt: row.first_at,
    lastAt: row.last_at,
    attrs: row.attrs,
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
// only edges whose other end is in that set.
export async function incidentEdges(
  budget: ReadBudget,
  tenantId: string,
  frontier: NodeRef[],
  filter: EdgeFilter | undefined,
  limit: number,
  within?: NodeRef[],
): Promise<{ edges: GraphEdge[]; complete: boolean }> {
  const byId = new Map<string, GraphEdge>();
  const kinds = frontier.map((n) => n.kind);
  const keys = frontier.map((n) => n.key);
  const inside = within ? [within.map((n) => n.kind), within.map((n) => n.key)] : [null, null];
  const filtered = transfersFiltered(filter);
  // Types read from graph_edges: every type asked for, except transfers when they are rebuilt.
  const edgeTypes = filter?.types ? filter.types.filter((t) => !(filtered && t === 'transfer')) : null;

  const sides = (near: 'src' | 'dst', far: 'src' | 'dst') => `
    SELECT e.src_kind, e.src_key, e.type, e.dst_kind, e.dst_key, e.qualifier, e.valid_from, e.valid_to, e.count, e.sum::text AS sum,
           e.unpriced, e.first_at, e.last_at, e.attrs
      FROM unnest($2::text[], $3::text[]) AS f(kind, key)
      JOIN graph_edges e ON e.tenant_id = $1 AND e.${near}_kind = f.kind AND e.${near}_key = f.key
     WHERE ($4::text[] IS NULL OR e.type = ANY ($4))
       AND NOT ($5::boolean AND e.type = 'transfer')
       AND ($6::timestamptz IS NULL OR coalesce(e.valid_from, e.first_at) IS NULL OR coalesce(e.valid_from, e.first_at) <= $6)
       AND ($7::timestamptz IS NULL OR coalesce(e.valid_to, CASE WHEN e.origin IS NULL THEN e.last_at END) IS NULL
            OR coalesce(e.valid_to, CASE WHEN e.origin IS NULL THEN e.last_at END) >= $7)
       AND ($8::text[] IS NULL OR EXISTS (SELECT 1 FROM unnest($8::text[], $9::text[]) AS s(kind, key)
                                          WHERE s.kind = e.${far}_kind AND s.key = e.${far}_key))`;
  let complete = true;
  if (edgeTypes === null || edgeTypes.length > 0) {
    const rows = await budget.query<EdgeRow>({
      name: `graph-incident`,
      text: `${sides('src', 'dst')} UNION ALL ${sides('dst', 'src')} LIMIT $10`,
      values: [tenantId, kinds, keys, edgeTypes, filtered, filter?.until ?? null, filter?.since ?? null, inside[0], inside[1], limit],
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
    const withinAccounts = within ? within.filter((n) => n.kind === 'account').map((n) => n.key) : null;
    const side = (near: 'src' | 'dst', far: 'src' | 'dst') => `
      SELECT t.src, t.dst, count(*) AS count, coalesce(sum(t.amount), 0)::text AS sum, count(*) FILTER (WHERE t.amount IS NULL) AS unpriced,
             min(t.occurred_at) AS first_at, max(t.occurred_at) AS last_at
        FROM unnest($2::text[]) AS f(key)
        JOIN graph_transfers t ON t.tenant_id = $1 AND t.${near} = f.key
       WHERE ($3::timestamptz IS NULL OR t.occurred_at >= $3) AND ($4::timestamptz IS NULL OR t.occurred_at <= $4)
         AND ($5::numeric IS NULL OR t.amount >= $5)
         AND ($6::text[] IS NULL OR t.${far} = ANY ($6))
       GROUP BY t.src, t.dst`;
    const rows = await budget.query<{ src: string; dst: string; count: bigint; sum: string; unpriced: bigint; first_at: Date; last_at: Date }>({
      name: 'graph-incident-transfers',
      text: `${side('src', 'dst')} UNION ALL ${side('dst', 'src')} LIMIT $7`,
      values: [tenantId, accounts, filter?.since ?? null, filter?.until ?? null, filter?.minAmount?.toString() ?? null, withinAccounts, limit],
    });
    if (rows === undefined) return { edges: [...byId.values()], complete: false };
    if (rows.length >= limit) complete = false;
    for (const row of rows) {
      const edge = toEdge({
        src_kind: 'account',
        src_key: row.src,
        type: 'transfer',
        dst_kind: 'account',
        dst_key: row.dst,
        qualifier: '',
        valid_from: null,
        valid_to: null,
        count: row.count,
        sum: row.sum,
        unpriced: row.unpriced,
        first_at: row.first_at,
        last_at: row.last_at,
        attrs: {},
      });
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
  const rows = await budget.query<{ i: number; movement_id: string; occurred_at: Date; amount: string | null }>({
    name: 'graph-recent-movements',
    text: `SELECT u.i, t.movement_id, t.occurred_at, t.amount::text AS amount
             FROM unnest($2::int[], $3::text[], $4::text[]) AS u(i, src, dst)
             CROSS JOIN LATERAL (
               SELECT movement_id, occurred_at, amount FROM graph_transfers
                WHERE tenant_id = $1 AND src = u.src AND dst = u.dst
                  AND ($5::timestamptz IS NULL OR occurred_at >= $5) AND ($6::timestamptz IS NULL OR occurred_at <= $6)
                  AND ($7::numeric IS NULL OR amount >= $7)
                ORDER BY occurred_at DESC, movement_id DESC LIMIT ${RECENT_MOVEMENTS}
             ) t`,
    values: [
      tenantId,
      transfers.map((_, i) => i),
      transfers.map((e) => e.from.key),
      transfers.map((e) => e.to.key),
      filter?.since ?? null,
      filter?.until ?? null,
      filter?.minAmount?.toString() ?? null,
    ],
  });
  for (const edge of transfers) edge.recent = [];
  for (const row of rows ?? []) {
    const edge = transfers[row.i]!;
    edge.recent!.push({
      movementId: row.movement_id,
      from: edge.from.key,
      to: edge.to.key,
      occurredAt: row.occurred_at,
      amount: row.amount === null ? null : BigInt(row.amount),
    });
  }
}

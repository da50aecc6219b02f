import type { PoolClient } from '../../postgres/pool.ts';
import type { DeclaredEdge, GraphChange, NodeRef } from '../port.ts';

type Db = Pick<PoolClient, 'query'>;

// Separates the parts of an edge's identity in one string (never in an id or a hash).
const SEP = '\u001f';

export function edgeIdentity(type: string, from: NodeRef, to: NodeRef, qualifier: string): string {
  return [type, from.kind, from.key, to.kind, to.key, qualifier].join(SEP);
}

// Applies a batch of graph changes in the caller's transaction, set-based: a handful of statements
// whatever the batch size. Changes whose event was applied before are dropped first, so the
// counters of transfer pairs and observed edges never count a movement twice. Every upsert reads
// its rows in key order, so concurrent batches lock shared rows in one order and cannot deadlock.
export async function applyChanges(db: Db, changes: GraphChange[]): Promise<void> {
  const fresh = await claimEvents(db, changes);
  if (fresh.length === 0) return;
  for (const round of versionRounds(fresh.filter((c) => c.entity))) await applyEntities(db, round);
  await applyTransfers(db, fresh.filter((c) => c.transfer));
  await applyObserved(db, fresh.filter((c) => c.observed && c.observed.length > 0));
}

async function claimEvents(db: Db, changes: GraphChange[]): Promise<GraphChange[]> {
  const unique = new Map(changes.map((c) => [`${c.tenantId}${SEP}${c.eventId}`, c]));
  if (unique.size === 0) return [];
  const { rows } = await db.query<{ tenant_id: string; event_id: string }>({
    name: 'graph-claim',
    text: `INSERT INTO graph_applied (tenant_id, event_id)
           SELECT t, e FROM unnest($1::text[], $2::uuid[]) AS u(t, e) ORDER BY t, e
           ON CONFLICT DO NOTHING RETURNING tenant_id, event_id`,
    values: [[...unique.values()].map((c) => c.tenantId), [...unique.values()].map((c) => c.eventId)],
  });
  const claimed = new Set(rows.map((r) => `${r.tenant_id}${SEP}${r.event_id}`));
  // In log order: a later version of an entity in the same batch wins.
  return changes.filter((c) => claimed.delete(`${c.tenantId}${SEP}${c.eventId}`));
}

// Entity versions in rounds: the first version of each entity in the batch, then the second, and
// so on. Each round is applied set-based, in order, so a batch holding two versions of one entity
// leaves the history one-by-one application would (the first version's edges, closed by the second).
function versionRounds(changes: GraphChange[]): GraphChange[][] {
  const seen = new Map<string, number>();
  const rounds: GraphChange[][] = [];
  for (const change of changes) {
    const origin = `${change.tenantId}${SEP}${change.entity!.origin}`;
    const round = seen.get(origin) ?? 0;
    seen.set(origin, round + 1);
    (rounds[round] ??= []).push(change);
  }
  return rounds;
}

// One version of each entity at most (see versionRounds).
async function applyEntities(db: Db, entities: GraphChange[]): Promise<void> {
  if (entities.length === 0) return;

  const nodes = entities
    .filter((c) => c.entity!.node)
    .map((c) => ({ tenant_id: c.tenantId, kind: c.entity!.node!.ref.kind, key: c.entity!.node!.ref.key, attrs: c.entity!.node!.attrs, at: c.occurredAt }));
  if (nodes.length > 0) {
    await db.query({
      name: 'graph-nodes',
      text: `INSERT INTO graph_nodes (tenant_id, kind, key, attrs, updated_at)
             SELECT tenant_id, kind, key, attrs, at FROM json_to_recordset($1::json) AS r(tenant_id text, kind text, key text, attrs jsonb, at timestamptz)
              ORDER BY tenant_id, kind, key
             ON CONFLICT (tenant_id, kind, key) DO UPDATE SET attrs = EXCLUDED.attrs, updated_at = EXCLUDED.updated_at`,
      values: [JSON.stringify(nodes)],
    });
  }

  // Edges an entity no longer declares are closed at the new version's time, not deleted: the
  // network keeps who held an account before.
  await db.query({
    name: 'graph-close-declared',
    text: `UPDATE graph_edges e SET valid_to = o.at
             FROM json_to_recordset($1::json) AS o(tenant_id text, origin text, at timestamptz, keep text[])
            WHERE e.tenant_id = o.tenant_id AND e.origin = o.origin
              AND NOT (concat_ws(chr(31), e.type, e.src_kind, e.src_key, e.dst_kind, e.dst_key, e.qualifier) = ANY (o.keep))
              AND (e.valid_to IS NULL OR e.valid_to > o.at)`,
    values: [
      JSON.stringify(
        entities.map((c) => ({
          tenant_id: c.tenantId,
          origin: c.entity!.origin,
          at: c.occurredAt,
          keep: c.entity!.edges.map((e) => edgeIdentity(e.type, e.from, e.to, e.qualifier)),
        })),
      ),
    ],
  });

  const declared = dedupeEdges(entities.flatMap((c) => c.entity!.edges.map((edge) => ({ change: c, edge }))));
  if (declared.length === 0) return;
  await db.query({
    name: 'graph-declared',
    text: `INSERT INTO graph_edges (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier, origin, valid_from, valid_to, attrs, first_at, last_at)
           SELECT tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier, origin, valid_from, valid_to, attrs, at, at
             FROM json_to_recordset($1::json) AS r(tenant_id text, src_kind text, src_key text, type text, dst_kind text, dst_key text,
                  qualifier text, origin text, valid_from timestamptz, valid_to timestamptz, attrs jsonb, at timestamptz)
            ORDER BY tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier
           ON CONFLICT (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier) DO UPDATE
             SET origin = EXCLUDED.origin, valid_from = EXCLUDED.valid_from, valid_to = EXCLUDED.valid_to, attrs = EXCLUDED.attrs,
                 first_at = least(graph_edges.first_at, EXCLUDED.first_at), last_at = greatest(graph_edges.last_at, EXCLUDED.last_at)`,
    values: [
      JSON.stringify(
        declared.map(({ change, edge }) => ({
          tenant_id: change.tenantId,
          ...endpoints(edge.from, edge.to),
          type: edge.type,
          qualifier: edge.qualifier,
          origin: change.entity!.origin,
          valid_from: edge.validFrom,
          valid_to: edge.validTo,
          attrs: edge.attrs,
          at: change.occurredAt,
        })),
      ),
    ],
  });
}

// One row per edge identity (an upsert cannot touch a row twice); the later declaration wins.
function dedupeEdges(edges: Array<{ change: GraphChange; edge: DeclaredEdge }>): Array<{ change: GraphChange; edge: DeclaredEdge }> {
  const byIdentity = new Map<string, { change: GraphChange; edge: DeclaredEdge }>();
  for (const item of edges) byIdentity.set(`${item.change.tenantId}${SEP}${edgeIdentity(item.edge.type, item.edge.from, item.edge.to, item.edge.qualifier)}`, item);
  return [...byIdentity.values()];
}

async function applyTransfers(db: Db, changes: GraphChange[]): Promise<void> {
  if (changes.length === 0) return;
  const rows = changes.map((c) => ({
    tenant_id: c.tenantId,
    movement_id: c.transfer!.movementId,
    src: c.transfer!.from,
    dst: c.transfer!.to,
    occurred_at: c.occurredAt,
    amount: c.transfer!.amount === null ? null : c.transfer!.amount.toString(),
  }));
  // The pair edge adds up exactly the movements this statement inserted.
  await db.query({
    name: 'graph-transfers',
    text: `WITH added AS (
             INSERT INTO graph_transfers (tenant_id, movement_id, src, dst, occurred_at, amount)
             SELECT tenant_id, movement_id, src, dst, occurred_at, amount
               FROM json_to_recordset($1::json) AS r(tenant_id text, movement_id text, src text, dst text, occurred_at timestamptz, amount numeric)
             ON CONFLICT DO NOTHING
             RETURNING tenant_id, src, dst, occurred_at, amount
           )
           INSERT INTO graph_edges (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier, count, sum, unpriced, first_at, last_at)
           SELECT tenant_id, 'account', src, 'transfer', 'account', dst, '', count(*), coalesce(sum(amount), 0),
                  count(*) FILTER (WHERE amount IS NULL), min(occurred_at), max(occurred_at)
             FROM added GROUP BY tenant_id, src, dst ORDER BY tenant_id, src, dst
           ON CONFLICT (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier) DO UPDATE
             SET count = graph_edges.count + EXCLUDED.count, sum = coalesce(graph_edges.sum, 0) + EXCLUDED.sum,
                 unpriced = graph_edges.unpriced + EXCLUDED.unpriced,
                 first_at = least(graph_edges.first_at, EXCLUDED.first_at), last_at = greatest(graph_edges.last_at, EXCLUDED.last_at)`,
    values: [JSON.stringify(rows)],
  });
}

async function applyObserved(db: Db, changes: GraphChange[]): Promise<void> {
  const rows = changes.flatMap((c) =>
    c.observed!.map((o) => ({ tenant_id: c.tenantId, ...endpoints(o.from, o.to), type: o.type, at: c.occurredAt })),
  );
  if (rows.length === 0) return;
  await db.query({
    name: 'graph-observed',
    text: `INSERT INTO graph_edges (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier, count, first_at, last_at)
           SELECT tenant_id, src_kind, src_key, type, dst_kind, dst_key, '', count(*), min(at), max(at)
             FROM json_to_recordset($1::json) AS r(tenant_id text, src_kind text, src_key text, type text, dst_kind text, dst_key text, at timestamptz)
            GROUP BY tenant_id, src_kind, src_key, type, dst_kind, dst_key
            ORDER BY tenant_id, src_kind, src_key, type, dst_kind, dst_key
           ON CONFLICT (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier) DO UPDATE
             SET count = graph_edges.count + EXCLUDED.count,
                 first_at = least(graph_edges.first_at, EXCLUDED.first_at), last_at = greatest(graph_edges.last_at, EXCLUDED.last_at)`,
    values: [JSON.stringify(rows)],
  });
}

function endpoints(from: NodeRef, to: NodeRef) {
  return { src_kind: from.kind, src_key: from.key, dst_kind: to.kind, dst_key: to.key };
}

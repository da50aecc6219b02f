// The writes of an apply (shared/apply.ts decides what they are) as SQL statements, each set-based
// over JSON rows. Every upsert reads its rows in key order, so concurrent batches lock shared rows
// in one order and cannot deadlock.

import type { PoolClient } from '../../postgres/pool.ts';
import type { NodeRef } from '../port.ts';
import type { GraphWrites } from '../shared/access.ts';

type Db = Pick<PoolClient, 'query'>;

function endpoints(from: NodeRef, to: NodeRef) {
  return { src_kind: from.kind, src_key: from.key, dst_kind: to.kind, dst_key: to.key };
}

// The writes of one apply, in the caller's transaction.
export function postgresWrites(db: Db): GraphWrites {
  return {
    async claim(changes) {
      const { rows } = await db.query<{ tenant_id: string; event_id: string }>({
        name: 'graph-claim',
        text: `INSERT INTO graph_applied (tenant_id, event_id)
               SELECT t, e FROM unnest($1::text[], $2::uuid[]) AS u(t, e) ORDER BY t, e
               ON CONFLICT DO NOTHING RETURNING tenant_id, event_id`,
        values: [changes.map((c) => c.tenantId), changes.map((c) => c.eventId)],
      });
      return rows.map((r) => ({ tenantId: r.tenant_id, eventId: r.event_id }));
    },

    async upsertNodes(nodes) {
      await db.query({
        name: 'graph-nodes',
        text: `INSERT INTO graph_nodes (tenant_id, kind, key, attrs, updated_at)
               SELECT tenant_id, kind, key, attrs, at FROM json_to_recordset($1::json) AS r(tenant_id text, kind text, key text, attrs jsonb, at timestamptz)
                ORDER BY tenant_id, kind, key
               ON CONFLICT (tenant_id, kind, key) DO UPDATE SET attrs = EXCLUDED.attrs, updated_at = EXCLUDED.updated_at`,
        values: [JSON.stringify(nodes.map((n) => ({ tenant_id: n.tenantId, kind: n.ref.kind, key: n.ref.key, attrs: n.attrs, at: n.at })))],
      });
    },

    async closeUndeclared(origins) {
      await db.query({
        name: 'graph-close-declared',
        text: `UPDATE graph_edges e SET valid_to = o.at
                 FROM json_to_recordset($1::json) AS o(tenant_id text, origin text, at timestamptz, keep text[])
                WHERE e.tenant_id = o.tenant_id AND e.origin = o.origin
                  AND NOT (concat_ws(chr(31), e.type, e.src_kind, e.src_key, e.dst_kind, e.dst_key, e.qualifier) = ANY (o.keep))
                  AND (e.valid_to IS NULL OR e.valid_to > o.at)`,
        values: [JSON.stringify(origins.map((o) => ({ tenant_id: o.tenantId, origin: o.origin, at: o.at, keep: o.keep })))],
      });
    },

    async upsertDeclared(edges) {
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
            edges.map(({ tenantId, edge, origin, at }) => ({
              tenant_id: tenantId,
              ...endpoints(edge.from, edge.to),
              type: edge.type,
              qualifier: edge.qualifier,
              origin,
              valid_from: edge.validFrom,
              valid_to: edge.validTo,
              attrs: edge.attrs,
              at,
            })),
          ),
        ],
      });
    },

    // The pair edge adds up exactly the movements this statement inserted.
    async addTransfers(changes) {
      const rows = changes.map((c) => ({
        tenant_id: c.tenantId,
        movement_id: c.transfer.movementId,
        src: c.transfer.from,
        dst: c.transfer.to,
        occurred_at: c.occurredAt,
        amount: c.transfer.amount === null ? null : c.transfer.amount.toString(),
      }));
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
    },

    async addObserved(edges) {
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
        values: [JSON.stringify(edges.map((o) => ({ tenant_id: o.tenantId, ...endpoints(o.from, o.to), type: o.type, at: o.at })))],
      });
    },
  };
}

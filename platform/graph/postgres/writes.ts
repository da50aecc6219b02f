// The writes of an apply (shared/apply.ts decides what they are) as SQL statements, each set-based
// over JSON rows. Every upsert reads its rows in key order, so concurrent batches lock shared rows
// in one order and cannot deadlock.

import type { PoolClient } from '../../postgres/pool.ts';
import { lockTenants } from '../../postgres/tenant-locks.ts';
import type { NodeRef } from '../port.ts';
import type { GraphWrites } from '../shared/access.ts';

type Db = Pick<PoolClient, 'query'>;

// Advisory-lock namespace of graph writes (first key of lockTenants' locks). Reads under READ
// COMMITTED see only what committed before each statement: a batch retracting a movement and
// one recording it at the same moment would each miss the other, and the movement would stay.
const GRAPH_LOCK_NAMESPACE = 0x06a9;

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

    async claimVersions(versions) {
      const { rows } = await db.query<{ tenant_id: string; origin: string; sequence: string | null }>({
        name: 'graph-claim-versions',
        text: `INSERT INTO graph_versions AS v (tenant_id, origin, sequence)
               SELECT t, o, s FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(t, o, s) ORDER BY t, o
               ON CONFLICT (tenant_id, origin) DO UPDATE SET sequence = EXCLUDED.sequence
                WHERE coalesce(EXCLUDED.sequence, -1) > coalesce(v.sequence, -1)
               RETURNING tenant_id, origin, sequence::text`,
        values: [versions.map((v) => v.tenantId), versions.map((v) => v.origin), versions.map((v) => v.sequence)],
      });
      return rows.map((r) => ({ tenantId: r.tenant_id, origin: r.origin, sequence: r.sequence === null ? null : Number(r.sequence) }));
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

    async lockTenants(tenants, retracting) {
      await lockTenants(db, 'graph-lock-tenants', GRAPH_LOCK_NAMESPACE, tenants, retracting);
    },

    // The retracted movements' transfers and sightings go, and each edge gives back what they added.
    async retractMovements(retractions) {
      await retractTransfers(db, retractions);
      await retractSightings(db, retractions);
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
                  WHERE NOT EXISTS (SELECT 1 FROM graph_retracted x WHERE x.tenant_id = r.tenant_id AND x.movement_id = r.movement_id)
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

    // The edge adds up exactly the sightings this statement inserted.
    async addObserved(sightings) {
      await db.query({
        name: 'graph-observed',
        text: `WITH added AS (
                 INSERT INTO graph_sightings (tenant_id, src_kind, src_key, type, dst_kind, dst_key, occurred_at, event_id, movement_id)
                 SELECT tenant_id, src_kind, src_key, type, dst_kind, dst_key, at, event_id, movement_id
                   FROM json_to_recordset($1::json) AS r(tenant_id text, src_kind text, src_key text, type text, dst_kind text, dst_key text,
                        at timestamptz, event_id uuid, movement_id text)
                  WHERE r.movement_id IS NULL
                     OR NOT EXISTS (SELECT 1 FROM graph_retracted x WHERE x.tenant_id = r.tenant_id AND x.movement_id = r.movement_id)
                 ON CONFLICT DO NOTHING
                 RETURNING tenant_id, src_kind, src_key, type, dst_kind, dst_key, occurred_at
               )
               INSERT INTO graph_edges (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier, count, first_at, last_at)
               SELECT tenant_id, src_kind, src_key, type, dst_kind, dst_key, '', count(*), min(occurred_at), max(occurred_at)
                 FROM added
                GROUP BY tenant_id, src_kind, src_key, type, dst_kind, dst_key
                ORDER BY tenant_id, src_kind, src_key, type, dst_kind, dst_key
               ON CONFLICT (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier) DO UPDATE
                 SET count = graph_edges.count + EXCLUDED.count,
                     first_at = least(graph_edges.first_at, EXCLUDED.first_at), last_at = greatest(graph_edges.last_at, EXCLUDED.last_at)`,
        values: [
          JSON.stringify(
            sightings.map((o) => ({ tenant_id: o.tenantId, ...endpoints(o.from, o.to), type: o.type, at: o.at, event_id: o.eventId, movement_id: o.movementId })),
          ),
        ],
      });
    },
  };
}

type Retractions = Parameters<GraphWrites['retractMovements']>[0];

// Each pair's transfer edge gives back what the retracted movements added: its first and last
// instants are those of the movements left, and an edge left with none goes.
async function retractTransfers(db: Db, retractions: Retractions): Promise<void> {
    const { rows } = await db.query<{ tenant_id: string; src: string; dst: string; count: string }>({
      name: 'graph-retract-transfers',
      text: `WITH r AS (
               SELECT DISTINCT tenant_id, movement_id FROM json_to_recordset($1::json) AS r(tenant_id text, movement_id text)
             ), kept AS (
               INSERT INTO graph_retracted (tenant_id, movement_id) SELECT tenant_id, movement_id FROM r ORDER BY 1, 2 ON CONFLICT DO NOTHING
             ), removed AS (
               DELETE FROM graph_transfers t USING r WHERE t.tenant_id = r.tenant_id AND t.movement_id = r.movement_id
               RETURNING t.tenant_id, t.src, t.dst, t.occurred_at, t.movement_id, t.amount
             ), pairs AS (
               SELECT tenant_id, src, dst, count(*) AS n, coalesce(sum(amount), 0) AS total, count(*) FILTER (WHERE amount IS NULL) AS unpriced
                 FROM removed GROUP BY tenant_id, src, dst
             ), left_over AS (
               SELECT p.tenant_id, p.src, p.dst, min(g.occurred_at) AS first_at, max(g.occurred_at) AS last_at
                 FROM pairs p JOIN graph_transfers g ON g.tenant_id = p.tenant_id AND g.src = p.src AND g.dst = p.dst
                WHERE NOT EXISTS (SELECT 1 FROM removed d WHERE d.tenant_id = g.tenant_id AND d.src = g.src AND d.dst = g.dst
                                                            AND d.occurred_at = g.occurred_at AND d.movement_id = g.movement_id)
                GROUP BY p.tenant_id, p.src, p.dst
             )
             UPDATE graph_edges e
                SET count = e.count - p.n, sum = coalesce(e.sum, 0) - p.total, unpriced = e.unpriced - p.unpriced,
                    first_at = l.first_at, last_at = l.last_at
               FROM pairs p LEFT JOIN left_over l ON l.tenant_id = p.tenant_id AND l.src = p.src AND l.dst = p.dst
              WHERE e.tenant_id = p.tenant_id AND e.src_kind = 'account' AND e.src_key = p.src AND e.type = 'transfer'
                AND e.dst_kind = 'account' AND e.dst_key = p.dst AND e.qualifier = ''
             RETURNING e.tenant_id, e.src_key AS src, e.dst_key AS dst, e.count::text AS count`,
      values: [JSON.stringify(retractions.map((r) => ({ tenant_id: r.tenantId, movement_id: r.movementId })))],
    });
    const emptied = rows.filter((row) => row.count === '0');
    if (emptied.length === 0) return;
    await db.query({
      name: 'graph-drop-empty-transfers',
      text: `DELETE FROM graph_edges e USING unnest($1::text[], $2::text[], $3::text[]) AS u(tenant_id, src, dst)
              WHERE e.tenant_id = u.tenant_id AND e.src_kind = 'account' AND e.src_key = u.src AND e.type = 'transfer'
                AND e.dst_kind = 'account' AND e.dst_key = u.dst AND e.qualifier = '' AND e.count = 0`,
      values: [emptied.map((row) => row.tenant_id), emptied.map((row) => row.src), emptied.map((row) => row.dst)],
    });
}

// Each observed edge gives back the retracted movements' sightings: its first and last instants
// are those of the sightings left, and an edge left with none goes.
async function retractSightings(db: Db, retractions: Retractions): Promise<void> {
  await db.query({
    name: 'graph-retract-sightings',
    text: `WITH r AS (
             SELECT DISTINCT tenant_id, movement_id FROM json_to_recordset($1::json) AS r(tenant_id text, movement_id text)
           ), removed AS (
             DELETE FROM graph_sightings s USING r WHERE s.tenant_id = r.tenant_id AND s.movement_id = r.movement_id
             RETURNING s.tenant_id, s.src_kind, s.src_key, s.type, s.dst_kind, s.dst_key, s.occurred_at, s.event_id
           ), edges AS (
             SELECT tenant_id, src_kind, src_key, type, dst_kind, dst_key, count(*) AS n FROM removed GROUP BY 1, 2, 3, 4, 5, 6
           ), left_over AS (
             SELECT d.tenant_id, d.src_kind, d.src_key, d.type, d.dst_kind, d.dst_key, min(s.occurred_at) AS first_at, max(s.occurred_at) AS last_at
               FROM edges d JOIN graph_sightings s ON s.tenant_id = d.tenant_id AND s.src_kind = d.src_kind AND s.src_key = d.src_key
                                                  AND s.type = d.type AND s.dst_kind = d.dst_kind AND s.dst_key = d.dst_key
              WHERE NOT EXISTS (SELECT 1 FROM removed x WHERE x.tenant_id = s.tenant_id AND x.src_kind = s.src_kind AND x.src_key = s.src_key
                                                          AND x.type = s.type AND x.dst_kind = s.dst_kind AND x.dst_key = s.dst_key
                                                          AND x.occurred_at = s.occurred_at AND x.event_id = s.event_id)
              GROUP BY 1, 2, 3, 4, 5, 6
           ), kept AS (
             -- Edges keeping sightings are updated, edges left with none deleted: two disjoint sets
             -- of rows, so one statement never touches a row twice.
             UPDATE graph_edges e SET count = e.count - d.n, first_at = l.first_at, last_at = l.last_at
               FROM edges d LEFT JOIN left_over l USING (tenant_id, src_kind, src_key, type, dst_kind, dst_key)
              WHERE e.tenant_id = d.tenant_id AND e.src_kind = d.src_kind AND e.src_key = d.src_key AND e.type = d.type
                AND e.dst_kind = d.dst_kind AND e.dst_key = d.dst_key AND e.qualifier = '' AND e.origin IS NULL AND e.count > d.n
           )
           DELETE FROM graph_edges e USING edges d
            WHERE e.tenant_id = d.tenant_id AND e.src_kind = d.src_kind AND e.src_key = d.src_key AND e.type = d.type
              AND e.dst_kind = d.dst_kind AND e.dst_key = d.dst_key AND e.qualifier = '' AND e.origin IS NULL AND e.count <= d.n`,
    values: [JSON.stringify(retractions.map((r) => ({ tenant_id: r.tenantId, movement_id: r.movementId })))],
  });
}

// The writes of an apply (shared/apply.ts decides what they are) as statements of cypher.ts.
// Events are claimed by MERGE on their id under a uniqueness constraint, edges keyed by the same
// identity the PostgreSQL adapter keys graph_edges by. Rows are sent in key order, so concurrent
// batches lock shared nodes in one order (a deadlock Neo4j still detects is retried by executeWrite).

import { compare, type GraphWrites } from '../shared/access.ts';
import { EDGE_IDENTITY_SEPARATOR, edgeIdentity } from '../shared/apply.ts';
import { ADD_OBSERVED, ADD_TRANSFERS, CLAIM_EVENTS, CLAIM_VERSIONS, CLOSE_UNDECLARED, RETRACT_SIGHTINGS, RETRACT_TRANSFERS, UPSERT_DECLARED, UPSERT_NODES } from './cypher.ts';
import { bigintOf, run, type QueryRunner } from './session.ts';

// The writes of one apply, in the caller's write transaction; `batch` marks the events it claims.
export function neo4jWrites(tx: QueryRunner, batch: string): GraphWrites {
  return {
    async claim(changes) {
      const events = changes
        .map((c) => ({ tenant: c.tenantId, eventId: c.eventId }))
        .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.eventId, b.eventId));
      const rows = await run(tx, CLAIM_EVENTS, { events, batch });
      return rows.map((r) => ({ tenantId: String(r.tenant), eventId: String(r.eventId) }));
    },

    async claimVersions(versions) {
      const rows = versions
        .map((v) => ({ tenant: v.tenantId, origin: v.origin, sequence: v.sequence }))
        .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.origin, b.origin));
      const taken = await run(tx, CLAIM_VERSIONS, { versions: rows });
      return taken.map((r) => ({ tenantId: String(r.tenant), origin: String(r.origin), sequence: r.sequence === null ? null : Number(bigintOf(r.sequence)) }));
    },

    async upsertNodes(nodes) {
      const rows = nodes
        .map((n) => ({ tenant: n.tenantId, kind: n.ref.kind, key: n.ref.key, attrs: JSON.stringify(n.attrs), at: n.at }))
        .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.kind, b.kind) || compare(a.key, b.key));
      await run(tx, UPSERT_NODES, { nodes: rows });
    },

    async closeUndeclared(origins) {
      await run(tx, CLOSE_UNDECLARED, { entities: origins.map((o) => ({ tenant: o.tenantId, origin: o.origin, at: o.at, keep: o.keep })) });
    },

    async upsertDeclared(declared) {
      const edges = declared
        .map(({ tenantId, identity, edge, origin, at }) => ({
          tenant: tenantId,
          identity,
          type: edge.type,
          fromKind: edge.from.kind,
          fromKey: edge.from.key,
          toKind: edge.to.kind,
          toKey: edge.to.key,
          qualifier: edge.qualifier,
          origin,
          validFrom: edge.validFrom,
          validTo: edge.validTo,
          attrs: JSON.stringify(edge.attrs ?? {}),
          at,
        }))
        .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.identity, b.identity));
      await run(tx, UPSERT_DECLARED, { edges });
    },

    async retractMovements(retractions) {
      const rows = retractions
        .map((r) => ({ tenant: r.tenantId, movementId: r.movementId }))
        .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.movementId, b.movementId));
      await run(tx, RETRACT_TRANSFERS, { retractions: rows, sep: EDGE_IDENTITY_SEPARATOR });
      await run(tx, RETRACT_SIGHTINGS, { retractions: rows });
    },

    async addTransfers(changes) {
      const movements = changes
        .map((c) => ({
          tenant: c.tenantId,
          eventId: c.eventId,
          movementId: c.transfer.movementId,
          src: c.transfer.from,
          dst: c.transfer.to,
          identity: edgeIdentity('transfer', { kind: 'account', key: c.transfer.from }, { kind: 'account', key: c.transfer.to }, ''),
          at: c.occurredAt,
          // A 64-bit integer (toCypher refuses an amount beyond it rather than lose it).
          amount: c.transfer.amount,
        }))
        .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.src, b.src) || compare(a.dst, b.dst));
      await run(tx, ADD_TRANSFERS, { movements });
    },

    async addObserved(sightings) {
      const observed = sightings.map((o) => ({
        tenant: o.tenantId,
        eventId: o.eventId,
        movementId: o.movementId,
        identity: edgeIdentity(o.type, o.from, o.to, ''),
        type: o.type,
        fromKind: o.from.kind,
        fromKey: o.from.key,
        toKind: o.to.kind,
        toKey: o.to.key,
        at: o.at,
      }));
      await run(tx, ADD_OBSERVED, { observed });
    },
  };
}

import type { DeclaredEdge, GraphChange, NodeRef } from '../port.ts';
import { ADD_OBSERVED, ADD_TRANSFERS, CLAIM_EVENTS, CLOSE_UNDECLARED, UPSERT_DECLARED, UPSERT_NODES } from './cypher.ts';
import { run, type QueryRunner } from './session.ts';

// Separates the parts of an edge's identity in one string (never in an id or a hash): the same
// identity the PostgreSQL adapter keys graph_edges by.
const SEP = '\u001f';

export function edgeIdentity(type: string, from: NodeRef, to: NodeRef, qualifier: string): string {
  return [type, from.kind, from.key, to.kind, to.key, qualifier].join(SEP);
}

// Applies a batch of graph changes in the caller's write transaction, set-based: a handful of
// statements whatever the batch size, as the PostgreSQL adapter does. Events applied before are
// dropped first (claimed by MERGE on their id), so the counters of transfer pairs and observed
// edges never count a movement twice. Rows are sent in key order, so concurrent batches lock
// shared nodes in one order (a deadlock Neo4j still detects is retried by executeWrite).
export async function applyChanges(tx: QueryRunner, changes: GraphChange[], batch: string): Promise<void> {
  const fresh = await claimEvents(tx, changes, batch);
  if (fresh.length === 0) return;
  for (const round of versionRounds(fresh.filter((c) => c.entity))) await applyEntities(tx, round);
  await applyTransfers(tx, fresh.filter((c) => c.transfer));
  await applyObserved(tx, fresh.filter((c) => c.observed && c.observed.length > 0));
}

async function claimEvents(tx: QueryRunner, changes: GraphChange[], batch: string): Promise<GraphChange[]> {
  const unique = new Map(changes.map((c) => [`${c.tenantId}${SEP}${c.eventId}`, c]));
  if (unique.size === 0) return [];
  const events = [...unique.values()].map((c) => ({ tenant: c.tenantId, eventId: c.eventId })).sort((a, b) => compare(a.tenant, b.tenant) || compare(a.eventId, b.eventId));
  const rows = await run(tx, CLAIM_EVENTS, { events, batch });
  return freshChanges(changes, rows.map((r) => ({ tenant: String(r.tenant), eventId: String(r.eventId) })));
}

// The changes whose events were claimed now, in log order (a later version of an entity in the
// same batch wins); an event twice in the batch counts once.
export function freshChanges(changes: GraphChange[], claimed: Array<{ tenant: string; eventId: string }>): GraphChange[] {
  const keys = new Set(claimed.map((c) => `${c.tenant}${SEP}${c.eventId}`));
  return changes.filter((c) => keys.delete(`${c.tenantId}${SEP}${c.eventId}`));
}

// Entity versions in rounds: the first version of each entity in the batch, then the second, and
// so on. Each round is applied set-based, in order, so a batch holding two versions of one entity
// leaves the history one-by-one application would (the first version's edges, closed by the second).
export function versionRounds(changes: GraphChange[]): GraphChange[][] {
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
async function applyEntities(tx: QueryRunner, entities: GraphChange[]): Promise<void> {
  if (entities.length === 0) return;
  const nodes = entities
    .filter((c) => c.entity!.node)
    .map((c) => ({ tenant: c.tenantId, kind: c.entity!.node!.ref.kind, key: c.entity!.node!.ref.key, attrs: JSON.stringify(c.entity!.node!.attrs), at: c.occurredAt }))
    .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.kind, b.kind) || compare(a.key, b.key));
  if (nodes.length > 0) await run(tx, UPSERT_NODES, { nodes });

  // Edges an entity no longer declares are closed at the new version's time, not deleted: the
  // network keeps who held an account before.
  await run(tx, CLOSE_UNDECLARED, {
    entities: entities.map((c) => ({
      tenant: c.tenantId,
      origin: c.entity!.origin,
      at: c.occurredAt,
      keep: c.entity!.edges.map((e) => edgeIdentity(e.type, e.from, e.to, e.qualifier)),
    })),
  });

  const edges = declaredRows(entities);
  if (edges.length > 0) await run(tx, UPSERT_DECLARED, { edges });
}

// One row per edge identity, the later declaration winning, in key order.
export function declaredRows(entities: GraphChange[]) {
  const byIdentity = new Map<string, { change: GraphChange; edge: DeclaredEdge; identity: string }>();
  for (const change of entities) {
    for (const edge of change.entity!.edges) {
      const identity = edgeIdentity(edge.type, edge.from, edge.to, edge.qualifier);
      byIdentity.set(`${change.tenantId}${SEP}${identity}`, { change, edge, identity });
    }
  }
  return [...byIdentity.values()]
    .map(({ change, edge, identity }) => ({
      tenant: change.tenantId,
      identity,
      type: edge.type,
      fromKind: edge.from.kind,
      fromKey: edge.from.key,
      toKind: edge.to.kind,
      toKey: edge.to.key,
      qualifier: edge.qualifier,
      origin: change.entity!.origin,
      validFrom: edge.validFrom,
      validTo: edge.validTo,
      attrs: JSON.stringify(edge.attrs ?? {}),
      at: change.occurredAt,
    }))
    .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.identity, b.identity));
}

export function transferRows(changes: GraphChange[]) {
  return changes
    .map((c) => ({
      tenant: c.tenantId,
      eventId: c.eventId,
      movementId: c.transfer!.movementId,
      src: c.transfer!.from,
      dst: c.transfer!.to,
      identity: edgeIdentity('transfer', { kind: 'account', key: c.transfer!.from }, { kind: 'account', key: c.transfer!.to }, ''),
      at: c.occurredAt,
      // A 64-bit integer (toCypher refuses an amount beyond it rather than lose it).
      amount: c.transfer!.amount,
    }))
    .sort((a, b) => compare(a.tenant, b.tenant) || compare(a.src, b.src) || compare(a.dst, b.dst));
}

async function applyTransfers(tx: QueryRunner, changes: GraphChange[]): Promise<void> {
  if (changes.length === 0) return;
  await run(tx, ADD_TRANSFERS, { movements: transferRows(changes) });
}

async function applyObserved(tx: QueryRunner, changes: GraphChange[]): Promise<void> {
  const observed = changes.flatMap((c) =>
    c.observed!.map((o) => ({
      tenant: c.tenantId,
      identity: edgeIdentity(o.type, o.from, o.to, ''),
      type: o.type,
      fromKind: o.from.kind,
      fromKey: o.from.key,
      toKind: o.to.kind,
      toKey: o.to.key,
      at: c.occurredAt,
    })),
  );
  if (observed.length === 0) return;
  await run(tx, ADD_OBSERVED, { observed });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

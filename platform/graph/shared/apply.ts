// What applying a batch of graph changes writes, for every engine: the engine runs a handful of
// set-based statements (GraphWrites) whatever the batch size; this decides which and with what.

import type { GraphChange, NodeRef } from '../port.ts';
import type { DeclaredWrite, GraphWrites, ObservedWrite, RetractionWrite, TransferChange } from './access.ts';

// Separates the parts of an edge's identity in one string (never in an id or a hash).
export const EDGE_IDENTITY_SEPARATOR = '\u001f';
const SEP = EDGE_IDENTITY_SEPARATOR;

// What tells two edges apart in a tenant's network (the key an engine stores an edge under).
export function edgeIdentity(type: string, from: NodeRef, to: NodeRef, qualifier: string): string {
  return [type, from.kind, from.key, to.kind, to.key, qualifier].join(SEP);
}

// Applies a batch in the caller's write transaction. Changes whose event was applied before are
// dropped first, so the counters of transfer pairs and observed edges never count a movement twice.
export async function applyChanges(writes: GraphWrites, changes: GraphChange[]): Promise<void> {
  if (changes.length === 0) return;
  if (writes.lockTenants) {
    const retracting = new Set(changes.filter((c) => c.retracts !== undefined).map((c) => c.tenantId));
    await writes.lockTenants([...new Set(changes.map((c) => c.tenantId))], retracting);
  }
  const fresh = await claimEvents(writes, changes);
  if (fresh.length === 0) return;
  for (const round of versionRounds(fresh.filter((c) => c.entity))) await applyEntities(writes, round);
  // Retractions first: a movement and its correction in one batch leave the correction alone.
  const retractions = fresh.filter((c) => c.retracts !== undefined).map((c): RetractionWrite => ({ tenantId: c.tenantId, movementId: c.retracts! }));
  if (retractions.length > 0) await writes.retractMovements(retractions);
  const retracted = new Set(retractions.map((r) => `${r.tenantId}${SEP}${r.movementId}`));
  const transfers = fresh.filter((c): c is TransferChange => c.transfer !== undefined && !retracted.has(`${c.tenantId}${SEP}${c.transfer.movementId}`));
  if (transfers.length > 0) await writes.addTransfers(transfers);
  // A retracted movement's sightings are left out by the engine, which also knows the retractions
  // of earlier batches.
  const observed = fresh.flatMap((c) => sightingsOf(c));
  if (observed.length > 0) await writes.addObserved(observed);
}

// One sighting per edge an event saw (an event sees an edge once, however often it names it).
function sightingsOf(change: GraphChange): ObservedWrite[] {
  const seen = new Map<string, ObservedWrite>();
  for (const o of change.observed ?? []) {
    const sighting = { tenantId: change.tenantId, eventId: change.eventId, movementId: change.movement ?? null, type: o.type, from: o.from, to: o.to, at: change.occurredAt };
    seen.set(edgeIdentity(o.type, o.from, o.to, ''), sighting);
  }
  return [...seen.values()];
}

async function claimEvents(writes: GraphWrites, changes: GraphChange[]): Promise<GraphChange[]> {
  const unique = new Map(changes.map((c) => [`${c.tenantId}${SEP}${c.eventId}`, c]));
  if (unique.size === 0) return [];
  const claimed = new Set((await writes.claim([...unique.values()])).map((e) => `${e.tenantId}${SEP}${e.eventId}`));
  // In log order: a later version of an entity in the same batch wins; an event twice counts once.
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

// One version of each entity at most (see versionRounds). A version at or below the one the store
// holds changes nothing: releases of an entity's versions may reach the log out of order.
async function applyEntities(writes: GraphWrites, round: GraphChange[]): Promise<void> {
  const claimed = new Set(
    (await writes.claimVersions(round.map((c) => ({ tenantId: c.tenantId, origin: c.entity!.origin, sequence: c.entity!.sequence })))).map(
      (v) => `${v.tenantId}${SEP}${v.origin}`,
    ),
  );
  const entities = round.filter((c) => claimed.has(`${c.tenantId}${SEP}${c.entity!.origin}`));
  if (entities.length === 0) return;
  const nodes = entities
    .filter((c) => c.entity!.node)
    .map((c) => ({ tenantId: c.tenantId, ref: c.entity!.node!.ref, attrs: c.entity!.node!.attrs, at: c.occurredAt }));
  if (nodes.length > 0) await writes.upsertNodes(nodes);

  // Edges an entity no longer declares are closed at the new version's time, not deleted: the
  // network keeps who held an account before.
  await writes.closeUndeclared(
    entities.map((c) => ({
      tenantId: c.tenantId,
      origin: c.entity!.origin,
      at: c.occurredAt,
      keep: c.entity!.edges.map((e) => edgeIdentity(e.type, e.from, e.to, e.qualifier)),
    })),
  );

  const declared = declaredEdges(entities);
  if (declared.length > 0) await writes.upsertDeclared(declared);
}

// One edge per identity (an upsert cannot touch one twice); the later declaration wins.
function declaredEdges(entities: GraphChange[]): DeclaredWrite[] {
  const byIdentity = new Map<string, DeclaredWrite>();
  for (const change of entities) {
    for (const edge of change.entity!.edges) {
      const identity = edgeIdentity(edge.type, edge.from, edge.to, edge.qualifier);
      byIdentity.set(`${change.tenantId}${SEP}${identity}`, { tenantId: change.tenantId, identity, edge, origin: change.entity!.origin, at: change.occurredAt });
    }
  }
  return [...byIdentity.values()];
}

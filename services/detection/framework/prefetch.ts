// Loads, for a whole batch of subjects at once, what nearly every evaluation reads: each
// subject's activity snapshot, the canonical entities of the subjects and their holders, and the
// accounts each subject's party holds. A batch then costs a handful of set-based statements
// instead of a dozen round trips per subject.
import { SnapshotReader, type SnapshotRequest } from '../../../platform/aggregates/snapshot.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { EntityLoader, readEntities } from './entity-loader.ts';
import { FlaggedPartiesLoader } from './flagged-loader.ts';
import { MovementTypesLoader } from './movement-types.ts';
import { GraphLoader } from './graph-loader.ts';
import { entityKey, HOLDINGS_LIMIT, type DetectionStores, type EntityVersion, type Prefetched } from './context.ts';
import type { SubjectRef } from './detector.ts';

// A subject with more activities than this in a snapshot's range (about 90 days) is read from
// the store, which aggregates in the database instead of shipping the rows. High: a busy hub is
// evaluated in almost every batch, and a dozen store reads over its rows (each probing every
// counterparty's first sighting) cost far more than shipping them once.
const SNAPSHOT_ROW_CAP = 20_000;
// Requests per statement.
const CHUNK = 1_000;

export interface PrefetchItem {
  tenantId: string;
  subject: SubjectRef;
  at: Date;
}

// One Prefetched per item, in order. With lookaheadMs, each snapshot also holds what its subject
// did up to that long after the latest instant asked for: facts that arrived before an earlier
// one (late-facts.ts).
export async function prefetch(stores: DetectionStores, items: readonly PrefetchItem[], lookaheadMs = 0): Promise<Prefetched[]> {
  // Two independent chains, on two connections at once: activity snapshots, and entities then
  // the holdings of their parties.
  const [readers, { entities, held }] = await Promise.all([loadSnapshots(stores, items, lookaheadMs), loadEntitiesAndHoldings(stores, items)]);
  // Per tenant, what the batch's evaluations read beyond this, gathered into shared statements.
  const loaders = new Map(
    [...entities].map(([tenantId, known]) => [
      tenantId,
      {
        entityLoader: new EntityLoader(stores.pool, tenantId, known),
        flaggedLoader: new FlaggedPartiesLoader(stores.pool, tenantId),
        graphLoader: new GraphLoader(stores.graph, tenantId),
        movementTypesLoader: new MovementTypesLoader(stores.pool, tenantId),
      },
    ]),
  );
  return items.map((item, i) => ({ snapshot: readers[i]!, entities: entities.get(item.tenantId)!, accountsOfParty: held[i], ...loaders.get(item.tenantId)! }));
}

// One snapshot per subject, answering for each of its items' instants (a subject evaluated at
// several instants of a batch shares it); one reader per item, in order.
export async function loadSnapshots(stores: DetectionStores, items: readonly PrefetchItem[], lookaheadMs: number): Promise<SnapshotReader[]> {
  const bySubject = new Map<string, { request: SnapshotRequest; items: number[] }>();
  items.forEach((item, index) => {
    const key = `${item.tenantId}\u0000${item.subject.kind}\u0000${item.subject.id}`;
    const entry = bySubject.get(key);
    if (!entry) {
      bySubject.set(key, { request: { subject: { tenantId: item.tenantId, kind: item.subject.kind, id: item.subject.id }, at: item.at, since: item.at }, items: [index] });
      return;
    }
    entry.items.push(index);
    if (item.at > entry.request.at) entry.request.at = item.at;
    if (item.at < entry.request.since!) entry.request.since = item.at;
  });
  const entries = [...bySubject.values()];
  if (lookaheadMs > 0) for (const entry of entries) entry.request.at = new Date(entry.request.at.getTime() + lookaheadMs);
  const readers: SnapshotReader[] = new Array(items.length);
  for (let i = 0; i < entries.length; i += CHUNK) {
    const chunk = entries.slice(i, i + CHUNK);
    const snapshots = await stores.aggregates.snapshots(chunk.map((entry) => entry.request), SNAPSHOT_ROW_CAP);
    chunk.forEach((entry, j) => {
      const reader = new SnapshotReader(snapshots[j]!);
      for (const index of entry.items) readers[index] = reader;
    });
  }
  return readers;
}

async function loadEntitiesAndHoldings(stores: DetectionStores, items: readonly PrefetchItem[]) {
  const entities = new Map<string, ReadonlyMap<string, EntityVersion | null>>();
  for (const tenantId of new Set(items.map((item) => item.tenantId))) {
    entities.set(tenantId, await loadEntities(stores.pool, tenantId, items.filter((item) => item.tenantId === tenantId).map((item) => item.subject)));
  }
  return { entities, held: await holdings(stores, items, entities) };
}

// The accounts of each item's party (itself, or the holder of the account) up to the item's
// instant; undefined for an account whose holder is unknown.
async function holdings(stores: DetectionStores, items: readonly PrefetchItem[], entities: Map<string, ReadonlyMap<string, EntityVersion | null>>): Promise<Array<string[] | undefined>> {
  const held: Array<string[] | undefined> = items.map(() => undefined);
  for (const tenantId of new Set(items.map((item) => item.tenantId))) {
    const known = entities.get(tenantId)!;
    // Each party and instant asked once: a movement's account and its holder are evaluated at
    // the same instant, and asked for the same party's accounts.
    const asked = new Map<string, { items: number[]; party: string; until: Date }>();
    items.forEach((item, index) => {
      if (item.tenantId !== tenantId) return;
      const holder = item.subject.kind === 'party' ? item.subject.id : known.get(entityKey('account', item.subject.id))?.data.holder_party_id;
      if (typeof holder !== 'string') return;
      const key = `${holder}\u0000${item.at.getTime()}`;
      const found = asked.get(key);
      if (found) found.items.push(index);
      else asked.set(key, { items: [index], party: holder, until: item.at });
    });
    const requests = [...asked.values()];
    for (let i = 0; i < requests.length; i += CHUNK) {
      const chunk = requests.slice(i, i + CHUNK);
      const lists = await stores.graph.holdings(tenantId, chunk.map(({ party, until }) => ({ party, until })), HOLDINGS_LIMIT);
      // Shared by the items asking the same (read only: a context hands out copies).
      chunk.forEach(({ items: indexes }, j) => indexes.forEach((index) => (held[index] = lists[j])));
    }
  }
  return held;
}

// The subjects' own entities, then the holders of the accounts among them. Every key asked for
// is in the map: null when the entity has not been received.
async function loadEntities(pool: Pool, tenantId: string, subjects: readonly SubjectRef[]): Promise<Map<string, EntityVersion | null>> {
  const found = new Map<string, EntityVersion | null>();
  await loadInto(found, pool, tenantId, subjects.map((s) => ({ object: s.kind, id: s.id })));
  const holders = new Set<string>();
  for (const subject of subjects) {
    if (subject.kind !== 'account') continue;
    const holder = found.get(entityKey('account', subject.id))?.data.holder_party_id;
    if (typeof holder === 'string' && !found.has(entityKey('party', holder))) holders.add(holder);
  }
  await loadInto(found, pool, tenantId, [...holders].map((id) => ({ object: 'party', id })));
  return found;
}

async function loadInto(found: Map<string, EntityVersion | null>, pool: Pool, tenantId: string, keys: Array<{ object: string; id: string }>): Promise<void> {
  const wanted = [...new Map(keys.map((k) => [entityKey(k.object, k.id), k])).values()].filter((k) => !found.has(entityKey(k.object, k.id)));
  if (wanted.length === 0) return;
  const read = await readEntities(pool, tenantId, wanted);
  for (const k of wanted) found.set(entityKey(k.object, k.id), null);
  for (const [key, version] of read) found.set(key, version);
}

import { isTransient } from '../../platform/bus/parking/transient.ts';
import { canonicalInstant, replaceLeapSeconds } from '../../schemas/primitives/timestamp.ts';
import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { BusRecord } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../platform/tenants/tenants.ts';
import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import { FAMILIES, isFamily, type Family } from '../../schemas/families/index.ts';
import { eventsWaitingFor, markHeld, markRejected, type EventKey } from './event-status.ts';
import type { ControlEventChange, EntityChange, MovementChange } from '../../schemas/bus/canonical-change.ts';
import { baseAmountOf, controlEventChange, movementChange, movementLeg, subjectPartyOf, type ChangeHead } from '../../schemas/bus/build-change.ts';
import { commitBatch, type ReadyEvent } from './commit-batch.ts';
import { ConcurrentChange } from './concurrent-change.ts';
import { normaliseMany } from './fx.ts';
import type { IdentifierHasher } from './identifiers.ts';
import { KnownEntities } from './known-entities.ts';
import { referencesOf, type Reference } from './references.ts';
import { writeEntities, type EntityWrite, type EventMeta } from './writers.ts';
import type { z } from 'zod';
import type { movementDataSchema } from '../../schemas/families/movement.ts';
import type { controlEventDataSchema } from '../../schemas/families/control-event.ts';

// An event's data as sent (the raw bytes, before any transform of the schema).
type MovementData = z.input<typeof movementDataSchema>;
type ControlEventData = z.input<typeof controlEventDataSchema>;

export interface CanonicalDeps {
  pool: Pool;
  clock: Clock;
  hasher: IdentifierHasher;
  assets: TenantAssetRegistry;
  worker: string;
  // A batch that failed for a reason other than an engine away, before its events are taken one
  // by one (each then processed or rejected on its own): said, so that an operator sees why.
  onError?: (error: unknown) => void;
  // How many parties and instruments to remember as existing (known-entities.ts; default 50,000).
  knownEntities?: number;
}

type Db = Pick<PoolClient, 'query'>;

// What to look at again once a batch has committed (see handle).
interface FollowUps {
  held: EventKey[];
  arrived: Array<{ tenantId: string; object: string; externalId: string }>;
}

interface Locked {
  key: EventKey;
  object: Family;
  // Read from the inbox only when the bus did not carry it (retries).
  raw: Buffer | undefined;
  receivedAt: Date;
  status: string;
  // Landed by a historical import (the inbox row's flag): its change record says so.
  historical: boolean;
}

// What an event's bytes give, computed once whichever path handles it: its content, the
// entities it names and its data with identifiers hashed. A failure is kept, to be raised when
// the event is processed (so that only its own transaction fails, and it is rejected).
type Prepared = { tenantId: string; object: Family; raw: Buffer } & (
  | { event: ParsedEvent; refs: Reference[]; data: Record<string, unknown> }
  | { error: unknown }
);

interface ParsedEvent {
  external_id: string;
  sequence?: number;
  occurred_at: string;
  data: Record<string, unknown>;
}

interface Found {
  holder_party_id: string | null;
  jurisdiction: string | null;
  // The version's sequence (null: none, or not read), so that a batch's version replaces it only
  // when it is the one that becomes current.
  sequence: number | null;
}

// What a party or an instrument found tells (only an account has a holder and a jurisdiction).
const NOTHING_FOUND: Found = Object.freeze({ holder_party_id: null, jurisdiction: null, sequence: null });

interface Parsed extends Locked {
  event: ParsedEvent;
  refs: Reference[];
  data: Record<string, unknown>;
}

const RETRY_CHUNK = 500;
const INBOX_TOPIC_PREFIX = 'inbox.';
const REFERENCED: ReadonlySet<string> = new Set(['party', 'account', 'instrument']);

// pipelines/canonical: turns accepted events into the canonical model, set-based, in one pass
// over a batch (decision 0043): each event parsed and hashed once before the batch's transaction,
// then one transaction of a few statements whatever the batch's size.
// Within a batch entities are written before facts, each family in log order, so a fact sees the
// entities that arrived with it and an entity's versions keep their order. A batch that fails on
// one record is replayed record by record, so only that record is rejected. Idempotent: events
// already processed are skipped and every write is keyed by the event.
export class CanonicalProcessor {
  private readonly bases = new Map<string, { asset: string; expiresAt: number }>();
  // Parties and instruments found before: not looked up again (known-entities.ts).
  private readonly known: KnownEntities;

  constructor(private readonly deps: CanonicalDeps) {
    this.known = new KnownEntities(deps.knownEntities);
  }

  async handle(records: BusRecord[]): Promise<void> {
    const keys = records.map(keyOf);
    // Before the transaction, which holds back every reader of the log from its first row lock
    // to its commit: each event parsed and hashed once (the bus carries its bytes; only retries
    // read them from the inbox), and the entities the batch names looked up. Entities are never
    // removed, so one found here still exists when the batch commits.
    const prepared = new Map<string, Prepared>();
    for (const record of records) {
      const object = record.topic.slice(INBOX_TOPIC_PREFIX.length);
      if (isFamily(object)) prepared.set(idOf(keyOf(record)), this.prepare(keyOf(record).tenantId, object, record.value));
    }
    const found = await this.findEntities(this.deps.pool, namedEntities(prepared));
    const after: FollowUps = { held: [], arrived: [] };
    try {
      const assumed = assumedPending(records);
      if (assumed) {
        try {
          await this.attemptAssumed(assumed, after, prepared, found);
        } catch (error) {
          if (!(error instanceof ConcurrentChange) && !isDeadlock(error) && !isMovementWrittenBefore(error)) throw error;
          // An event was no longer pending (a redelivery, a release running beside this batch):
          // the batch again, its rows locked and read first.
          after.held.length = 0;
          after.arrived.length = 0;
          await this.attempt(keys, after, { prepared, found });
        }
      } else {
        await this.attempt(keys, after, { prepared, found });
      }
    } catch (error) {
      if (isTransient(error)) throw error;
      this.deps.onError?.(new Error(`canonical: a batch of ${keys.length} events failed, taking them one by one: ${(error as Error).message}`, { cause: error }));
      after.held.length = 0;
      after.arrived.length = 0;
      // Entities are looked up again in each record's transaction: those of the records before
      // it may just have been committed.
      await this.attemptEach(keys, after, { prepared });
    }
    // A hold and the arrival it waits for can be committed by two transactions that each looked
    // before the other committed. Both sides therefore look after their own commit: then at least
    // one of them sees the other. Releases run one event per transaction, so a batch never locks
    // events of another partition and batches cannot deadlock on each other.
    await this.retry(after.held);
    await this.retry(await eventsWaitingFor(this.deps.pool, after.arrived));
  }

  // Re-examines held or quarantined events: each is processed if everything it names now exists.
  // Rows are locked in event-id order like every other path, so retries cannot deadlock with
  // batches (which lock all their rows up front, in the same order).
  async retry(keys: EventKey[]): Promise<void> {
    const sorted = [...keys].sort((a, b) => compare(a.tenantId, b.tenantId) || compare(a.eventId, b.eventId));
    for (let i = 0; i < sorted.length; i += RETRY_CHUNK) {
      const chunk = sorted.slice(i, i + RETRY_CHUNK);
      const after: FollowUps = { held: [], arrived: [] };
      try {
        await this.attempt(chunk, after, { released: true });
      } catch (error) {
        if (isTransient(error)) throw error;
        await this.attemptEach(chunk, after, { released: true });
      }
    }
  }

  // One transaction for these events. From the bus, their bytes are prepared and the entities
  // they name looked up already; a retry reads both in the transaction and takes only events
  // still held or quarantined.
  private async attempt(keys: EventKey[], after: FollowUps, how: { prepared?: Map<string, Prepared>; found?: Map<string, Found>; released?: boolean }): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      const locked = await this.lock(db, keys, how.prepared === undefined);
      await this.process(db, how.released ? locked.filter((e) => e.status === 'held' || e.status === 'quarantined') : locked, after, how.prepared, how.found);
    });
  }

  // A batch from the bus whose events are taken as pending (see assumedPending): no row lock.
  // Every status write is conditional on the status assumed here and checked by count (commitBatch,
  // markHeld), so an event that was not pending fails the transaction as a whole (ConcurrentChange),
  // and nothing of it is committed.
  private async attemptAssumed(locked: Locked[], after: FollowUps, prepared: Map<string, Prepared>, found: Map<string, Found>): Promise<void> {
    await withTransaction(this.deps.pool, (db) => this.process(db, locked, after, prepared, found));
  }

  // Each event in a transaction of its own, after its batch failed: one that fails alone (other
  // than transiently) is rejected, and the others are applied.
  private async attemptEach(keys: EventKey[], after: FollowUps, how: { prepared?: Map<string, Prepared>; released?: boolean }): Promise<void> {
    for (const key of keys) {
      try {
        await this.attempt([key], after, how);
      } catch (error) {
        if (isTransient(error)) throw error;
        await markRejected(this.deps.pool, key, { code: 'canonicalization_failed', message: (error as Error).message }, {
          at: this.deps.clock.now(),
          worker: this.deps.worker,
          durationMs: null,
        });
      }
    }
  }

  // The events' inbox rows, locked in event-id order (the one order every path uses), returned
  // in the order asked for, without those already final; with their raw bytes if asked.
  private async lock(db: Db, keys: EventKey[], withRaw: boolean): Promise<Locked[]> {
    const { rows } = await db.query<{ tenant_id: string; event_id: string; object: string; raw_event: Buffer | null; received_at: Date; status: string; historical: boolean }>({
      name: withRaw ? 'lock-events-raw' : 'lock-events',
      text: `SELECT i.tenant_id, i.event_id, i.object, ${withRaw ? 'i.raw_event' : 'NULL::bytea AS raw_event'}, i.received_at, i.status, i.historical
               FROM inbox_events i JOIN unnest($1::text[], $2::uuid[]) AS u(t, e) ON i.tenant_id = u.t AND i.event_id = u.e
              ORDER BY i.tenant_id, i.event_id FOR UPDATE OF i`,
      values: [keys.map((k) => k.tenantId), keys.map((k) => k.eventId)],
    });
    const byId = new Map(rows.map((r) => [idOf({ tenantId: r.tenant_id, eventId: r.event_id }), r]));
    const locked: Locked[] = [];
    for (const key of keys) {
      const id = idOf(key);
      const row = byId.get(id);
      if (!row || !isFamily(row.object) || row.status === 'processed' || row.status === 'rejected') continue;
      byId.delete(id);
      locked.push({ key, object: row.object, raw: row.raw_event ?? undefined, receivedAt: row.received_at, status: row.status, historical: row.historical });
    }
    return locked;
  }

  // An event's bytes parsed once, its references and its hashed data. The model and its change
  // records hold instants every store can represent: only an event whose bytes hold ":60" (or an
  // escape, which could spell it) can carry a leap second, the others are not walked.
  private prepare(tenantId: string, object: Family, raw: Buffer): Prepared {
    try {
      const event = JSON.parse(raw.toString('utf8')) as ParsedEvent;
      if (raw.includes(':60') || raw.includes('\\u')) replaceLeapSeconds(event);
      return { tenantId, object, raw, event, refs: referencesOf(object, event.data), data: this.deps.hasher.hashData(tenantId, object, event.data) };
    } catch (error) {
      return { tenantId, object, raw, error };
    }
  }

  // `prepared` and `found` come from handle (a batch from the bus); a retry computes them here.
  private async process(db: Db, locked: Locked[], after: FollowUps, prepared?: Map<string, Prepared>, foundBefore?: Map<string, Found>): Promise<void> {
    if (locked.length === 0) return;
    const started = performance.now();
    const parsed = locked.map((l): Parsed => {
      let prep = prepared?.get(idOf(l.key));
      if (!prep || prep.object !== l.object) {
        const raw = l.raw ?? prep?.raw;
        if (!raw) throw new Error(`no bytes for event ${l.key.eventId}`);
        prep = this.prepare(l.key.tenantId, l.object, raw);
      }
      if ('error' in prep) throw prep.error;
      return { key: l.key, object: l.object, raw: l.raw, receivedAt: l.receivedAt, status: l.status, historical: l.historical, event: prep.event, refs: prep.refs, data: prep.data };
    });
    // Entities first, then facts; each in log order.
    const ordered = [...parsed.filter((p) => FAMILIES[p.object].kind === 'entity'), ...parsed.filter((p) => FAMILIES[p.object].kind === 'fact')];

    // What exists, and on top of it the entities of this batch (never added to foundBefore: the
    // batch may yet fail, and its records be processed one by one).
    const found = new Map(foundBefore ?? (await this.findEntities(db, parsed.flatMap((p) => p.refs.map((r) => ({ tenantId: p.key.tenantId, ...r }))))));
    // A version of the batch stands for its entity only when it is the one that becomes current
    // (writeEntities: a higher sequence than the current one, the first of equals): a late, lower
    // version in the same batch as a movement must not give the movement its old holder.
    for (const p of ordered) {
      if (REFERENCED.has(p.object) && p.refs.length === 0) {
        const key = refKey(p.key.tenantId, p.object, p.event.external_id);
        const sequence = p.event.sequence ?? null;
        const before = found.get(key);
        if (before && before !== NOTHING_FOUND && (sequence ?? -1) <= (before.sequence ?? -1)) continue;
        found.set(key, { holder_party_id: stringOrNull(p.event.data.holder_party_id), jurisdiction: stringOrNull(p.event.data.jurisdiction), sequence });
      }
    }

    const ready: Parsed[] = [];
    const toHold: Array<{ key: EventKey; missing: Reference[]; heldSince: Date }> = [];
    for (const p of ordered) {
      const missing = p.refs.filter((r) => !found.has(refKey(p.key.tenantId, r.object, r.external_id)));
      // Entities are never removed, so what an event still misses is a subset of what it was held
      // for: a retry that still misses something leaves the hold as it is.
      if (missing.length === 0) ready.push(p);
      else if (p.status === 'pending') toHold.push({ key: p.key, missing, heldSince: p.receivedAt });
    }

    const at = this.deps.clock.now();
    const tenants = new Map<string, { registry: AssetRegistry; baseAsset: string }>();
    for (const tenantId of new Set(ready.filter((p) => p.object === 'movement').map((p) => p.key.tenantId))) {
      tenants.set(tenantId, { registry: await this.deps.assets.forTenant(tenantId, db), baseAsset: await this.baseAsset(db, tenantId) });
    }
    // One pass over the ready events: each one's hashed data and, for a fact, its change record
    // (which carries the fact's rows); an entity's record waits for whether it became current.
    const entities: Array<EntityWrite & { event: Parsed }> = [];
    const facts: ReadyEvent[] = [];
    const movements: Array<{ event: ReadyEvent; change: MovementChange; tenant: { registry: AssetRegistry; baseAsset: string } }> = [];
    for (const p of ready) {
      const tenantId = p.key.tenantId;
      const meta: EventMeta = {
        tenantId,
        eventId: p.key.eventId,
        object: p.object,
        externalId: p.event.external_id,
        sequence: p.event.sequence ?? null,
        occurredAt: canonicalInstant(p.event.occurred_at),
        receivedAt: p.receivedAt.toISOString(),
        historical: p.historical,
      };
      const raw = p.event.data;
      const data = p.data;
      const wasHeld = p.status !== 'pending';
      if (FAMILIES[p.object].kind === 'entity') {
        entities.push({ meta, data, event: p });
      } else if (p.object === 'movement') {
        // Accepted events passed their family's schema at ingest.
        const movement = raw as MovementData;
        const account = (leg: MovementData['debit']) => (leg.account_id ? found.get(refKey(tenantId, 'account', leg.account_id)) : undefined);
        const change = movementChange(headOf(meta), {
          type: movement.type,
          status: movement.status,
          amount: movement.amount,
          base_amount: null,
          debit: movementLeg(movement.debit, account(movement.debit)),
          credit: movementLeg(movement.credit, account(movement.credit)),
          data,
        });
        const event: ReadyEvent = { key: p.key, wasHeld, change, links: movement.links };
        facts.push(event);
        movements.push({ event, change, tenant: tenants.get(tenantId)! });
      } else {
        const controlEvent = raw as ControlEventData;
        const subject = controlEvent.subject;
        const change: ControlEventChange = controlEventChange(headOf(meta), {
          type: controlEvent.type,
          subject,
          subject_party_id: subjectPartyOf(subject, (id) => found.get(refKey(tenantId, 'account', id))?.holder_party_id),
          data,
        });
        facts.push({ key: p.key, wasHeld, change });
      }
    }

    const current = await writeEntities(db, entities);
    const normalized = await normaliseMany(
      db,
      movements.map((m) => ({ amount: m.change.amount, baseAsset: m.tenant.baseAsset, registry: m.tenant.registry, occurredAt: m.change.occurred_at })),
      at,
    );
    movements.forEach((m, i) => {
      const n = normalized[i];
      m.event.normalized = n;
      m.change.base_amount = baseAmountOf(m.change.amount, m.tenant.baseAsset, n);
    });

    const entry = { at, worker: this.deps.worker, durationMs: Math.round(performance.now() - started) };
    await commitBatch(
      db,
      [...entities.map((e): ReadyEvent => ({ key: e.event.key, wasHeld: e.event.status !== 'pending', change: entityChange(e, current.has(e.meta.eventId)) })), ...facts],
      entry,
    );
    await markHeld(db, toHold, entry);

    after.held.push(...toHold.map((h) => h.key));
    for (const p of ready) {
      if (REFERENCED.has(p.object)) after.arrived.push({ tenantId: p.key.tenantId, object: p.object, externalId: p.event.external_id });
    }
  }

  // Which referenced entities exist, with the facts a movement needs of an account: its holder
  // and jurisdiction (only an account's data is read: a party's is large, and a batch can name a
  // thousand parties).
  private async findEntities(db: Db, refs: Array<Reference & { tenantId: string }>): Promise<Map<string, Found>> {
    // Each entity once (a batch names the same parties many times), so the statement sorts nothing;
    // and only those not known to exist already.
    const found = new Map<string, Found>();
    const distinct = new Map<string, Reference & { tenantId: string }>();
    for (const ref of refs) {
      const key = refKey(ref.tenantId, ref.object, ref.external_id);
      if (this.known.has(key)) found.set(key, NOTHING_FOUND);
      else distinct.set(key, ref);
    }
    if (distinct.size === 0) return found;
    const named = [...distinct.values()];
    const { rows } = await db.query<{ tenant_id: string; object: string; external_id: string; holder_party_id: string | null; jurisdiction: string | null; sequence: bigint | null }>({
      name: 'find-entities',
      text: `SELECT e.tenant_id, e.object, e.external_id, e.sequence,
                    CASE WHEN e.object = 'account' THEN e.data->>'holder_party_id' END AS holder_party_id,
                    CASE WHEN e.object = 'account' THEN e.data->>'jurisdiction' END AS jurisdiction FROM canonical_entities e
               JOIN unnest($1::text[], $2::text[], $3::text[]) AS u(tenant_id, object, external_id)
                 ON e.tenant_id = u.tenant_id AND e.object = u.object AND e.external_id = u.external_id`,
      values: [named.map((r) => r.tenantId), named.map((r) => r.object), named.map((r) => r.external_id)],
    });
    for (const r of rows) {
      const key = refKey(r.tenant_id, r.object, r.external_id);
      found.set(key, { holder_party_id: r.holder_party_id, jurisdiction: r.jurisdiction, sequence: r.sequence === null ? null : Number(r.sequence) });
      if (KnownEntities.remembers(r.object)) this.known.add(key);
    }
    return found;
  }

  private async baseAsset(db: Db, tenantId: string): Promise<string> {
    const cached = this.bases.get(tenantId);
    const now = this.deps.clock.now().getTime();
    if (cached && cached.expiresAt > now) return cached.asset;
    const asset = await baseAssetOf(db, tenantId);
    this.bases.set(tenantId, { asset, expiresAt: now + 60_000 });
    return asset;
  }
}

function headOf(meta: EventMeta): ChangeHead {
  return { tenant_id: meta.tenantId, event_id: meta.eventId, external_id: meta.externalId, occurred_at: meta.occurredAt, received_at: meta.receivedAt, historical: meta.historical };
}

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function entityChange(write: EntityWrite, current: boolean): EntityChange {
  const { meta } = write;
  return {
    tenant_id: meta.tenantId,
    event_id: meta.eventId,
    external_id: meta.externalId,
    occurred_at: meta.occurredAt,
    received_at: meta.receivedAt,
    historical: meta.historical,
    object: meta.object as EntityChange['object'],
    sequence: meta.sequence,
    current,
    data: write.data,
  };
}

// Every entity the prepared events name, with their tenant.
function namedEntities(prepared: Map<string, Prepared>): Array<Reference & { tenantId: string }> {
  const named: Array<Reference & { tenantId: string }> = [];
  for (const prep of prepared.values()) {
    if ('refs' in prep) for (const ref of prep.refs) named.push({ tenantId: prep.tenantId, object: ref.object, external_id: ref.external_id });
  }
  return named;
}

// A batch's events as the bus hands them over, taken as pending, when the embedded log said when
// each was received and whether it was imported (its `received_at` and `historical` headers; the
// Kafka relay carries them over): almost every event arrives once and pending, and for those the
// row lock was a statement, and a WAL record per event, that changed nothing. Without both headers
// on every record (older records on Kafka), the rows are locked and read as before.
function assumedPending(records: BusRecord[]): Locked[] | undefined {
  const locked: Locked[] = [];
  const seen = new Set<string>();
  for (const record of records) {
    const { received_at: receivedAt, historical } = record.headers;
    if (receivedAt === undefined || historical === undefined) return undefined;
    const object = record.topic.slice(INBOX_TOPIC_PREFIX.length);
    const key = keyOf(record);
    const id = idOf(key);
    if (!isFamily(object) || seen.has(id)) continue;
    seen.add(id);
    const at = new Date(receivedAt);
    if (Number.isNaN(at.getTime())) return undefined;
    locked.push({ key, object, raw: undefined, receivedAt: at, status: 'pending', historical: historical === 'true' });
  }
  return locked;
}

// PostgreSQL cancelled the transaction to break a deadlock: a batch that locks its inbox rows as
// its commit statement writes them, in that statement's order rather than by event id, can meet
// one with a release or a redelivery of the same events; it is taken again with its rows locked.
function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}

// A movement of the batch is in the canonical model already: the commit statement inserts
// movements without ON CONFLICT (commit-batch.ts), and since the inbox holds one event per
// movement id and processes it once, only a redelivery of an event processed meanwhile meets its
// row. Taken like a status that moved on: the batch again, its rows locked, its processed events
// skipped.
function isMovementWrittenBefore(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'canonical_movements_pkey';
}

function keyOf(record: BusRecord): EventKey {
  return { tenantId: record.headers.tenant_id!, eventId: record.headers.event_id! };
}

function idOf(key: EventKey): string {
  return `${key.tenantId}\u0000${key.eventId}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function refKey(tenantId: string, object: string, externalId: string): string {
  return `${tenantId}\u0000${object}\u0000${externalId}`;
}

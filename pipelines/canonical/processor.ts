import { isTransient } from '../../platform/bus/parking/transient.ts';
import { canonicalInstant, replaceLeapSeconds } from '../../schemas/primitives/timestamp.ts';
import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { BusRecord } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../platform/tenants/tenants.ts';
import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import { FAMILIES, isFamily, type Family } from '../../schemas/families/index.ts';
import { eventsWaitingFor, markHeld, markProcessed, markRejected, type EventKey, type Processed } from './event-status.ts';
import type { ControlEventChange, EntityChange, MovementChange, MovementLeg } from '../../schemas/bus/canonical-change.ts';
import { writeChangeRecords } from './change-records.ts';
import { normaliseMany, type Normalization } from './fx.ts';
import type { IdentifierHasher } from './identifiers.ts';
import { referencesOf, type Reference } from './references.ts';
import {
  writeControlEvents,
  writeEntities,
  writeMovements,
  type ControlEventWrite,
  type EntityWrite,
  type EventMeta,
  type MovementWrite,
} from './writers.ts';

export interface CanonicalDeps {
  pool: Pool;
  clock: Clock;
  hasher: IdentifierHasher;
  assets: TenantAssetRegistry;
  worker: string;
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
  raw: Buffer;
  receivedAt: Date;
  status: string;
}

interface Found {
  holder_party_id: string | null;
  jurisdiction: string | null;
}

interface Parsed extends Locked {
  event: { external_id: string; sequence?: number; occurred_at: string; data: Record<string, any> };
  refs: Reference[];
}

const RETRY_CHUNK = 500;
const REFERENCED: ReadonlySet<string> = new Set(['party', 'account', 'instrument']);

// pipelines/canonical: turns accepted events into the canonical model, set-based: one
// transaction per batch of a partition, a handful of statements per batch whatever its size.
// Within a batch entities are written before facts, each family in log order, so a fact sees the
// entities that arrived with it and an entity's versions keep their order. A batch that fails on
// one record is replayed record by record, so only that record is rejected. Idempotent: events
// already processed are skipped and every write is keyed by the event.
export class CanonicalProcessor {
  private readonly bases = new Map<string, { asset: string; expiresAt: number }>();

  constructor(private readonly deps: CanonicalDeps) {}

  async handle(records: BusRecord[]): Promise<void> {
    const keys = records.map(keyOf);
    // The bus already carries each event's raw bytes; only retries read them from the inbox.
    const raw = new Map(records.map((r) => [idOf(keyOf(r)), r.value]));
    const after: FollowUps = { held: [], arrived: [] };
    try {
      await withTransaction(this.deps.pool, async (db) => this.process(db, await this.lock(db, keys, raw), after));
    } catch (error) {
      if (isTransient(error)) throw error;
      after.held.length = 0;
      after.arrived.length = 0;
      for (const key of keys) {
        try {
          await withTransaction(this.deps.pool, async (db) => this.process(db, await this.lock(db, [key], raw), after));
        } catch (recordError) {
          if (isTransient(recordError)) throw recordError;
          await markRejected(this.deps.pool, key, { code: 'canonicalization_failed', message: (recordError as Error).message }, {
            at: this.deps.clock.now(),
            worker: this.deps.worker,
            durationMs: null,
          });
        }
      }
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
      await withTransaction(this.deps.pool, async (db) => {
        const locked = (await this.lock(db, chunk)).filter((e) => e.status === 'held' || e.status === 'quarantined');
        await this.process(db, locked, after);
      });
    }
  }

  // The events' inbox rows, locked in event-id order (the one order every path uses), returned
  // in the order asked for, without those already final. Raw bytes are read only when not given.
  private async lock(db: Db, keys: EventKey[], raw?: Map<string, Buffer>): Promise<Locked[]> {
    const { rows } = await db.query<{ tenant_id: string; event_id: string; object: string; raw_event: Buffer | null; received_at: Date; status: string }>({
      name: raw ? 'lock-events' : 'lock-events-raw',
      text: `SELECT i.tenant_id, i.event_id, i.object, ${raw ? 'NULL::bytea AS raw_event' : 'i.raw_event'}, i.received_at, i.status
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
      locked.push({ key, object: row.object, raw: row.raw_event ?? raw!.get(id)!, receivedAt: row.received_at, status: row.status });
    }
    return locked;
  }

  private async process(db: Db, locked: Locked[], after: FollowUps): Promise<void> {
    if (locked.length === 0) return;
    const started = performance.now();
    const parsed: Parsed[] = locked.map((l) => {
      const event = JSON.parse(l.raw.toString('utf8')) as Parsed['event'];
      // The model and its change records hold instants every store can represent. Only an event
      // whose bytes hold ":60" (or an escape, which could spell it) can carry a leap second: the
      // others are not walked.
      if (l.raw.includes(':60') || l.raw.includes('\\u')) replaceLeapSeconds(event);
      return { ...l, event, refs: referencesOf(l.object, event.data) };
    });
    // Entities first, then facts; each in log order.
    const ordered = [...parsed.filter((p) => FAMILIES[p.object].kind === 'entity'), ...parsed.filter((p) => FAMILIES[p.object].kind === 'fact')];

    const found = await this.findEntities(db, parsed.flatMap((p) => p.refs.map((r) => ({ tenantId: p.key.tenantId, ...r }))));
    for (const p of ordered) {
      if (REFERENCED.has(p.object) && p.refs.length === 0) {
        found.set(refKey(p.key.tenantId, p.object, p.event.external_id), {
          holder_party_id: p.event.data.holder_party_id ?? null,
          jurisdiction: p.event.data.jurisdiction ?? null,
        });
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
    const entities: EntityWrite[] = [];
    const movements: PendingMovement[] = [];
    const tenants = new Map<string, { registry: AssetRegistry; baseAsset: string }>();
    for (const tenantId of new Set(ready.filter((p) => p.object === 'movement').map((p) => p.key.tenantId))) {
      tenants.set(tenantId, { registry: await this.deps.assets.forTenant(tenantId, db), baseAsset: await this.baseAsset(db, tenantId) });
    }
    const controls: Array<ControlEventWrite & { subjectPartyId: string | null }> = [];
    for (const p of ready) {
      const meta: EventMeta = {
        tenantId: p.key.tenantId,
        eventId: p.key.eventId,
        object: p.object,
        externalId: p.event.external_id,
        sequence: p.event.sequence ?? null,
        occurredAt: canonicalInstant(p.event.occurred_at),
        receivedAt: p.receivedAt.toISOString(),
      };
      const data = this.deps.hasher.hashData(p.key.tenantId, p.object, p.event.data);
      if (FAMILIES[p.object].kind === 'entity') {
        entities.push({ meta, data });
      } else if (p.object === 'movement') {
        const raw = p.event.data;
        const debit = legOf(raw.debit, (id) => found.get(refKey(meta.tenantId, 'account', id)));
        const credit = legOf(raw.credit, (id) => found.get(refKey(meta.tenantId, 'account', id)));
        movements.push({
          meta,
          type: raw.type,
          status: raw.status,
          amount: raw.amount,
          debit,
          credit,
          debitAccountId: debit.account_id,
          debitPartyId: debit.party_id,
          creditAccountId: credit.account_id,
          creditPartyId: credit.party_id,
          links: raw.links ?? {},
          data,
          ...tenants.get(meta.tenantId)!,
        });
      } else {
        const subject = p.event.data.subject as { kind: string; external_id: string };
        const subjectPartyId =
          subject.kind === 'party' ? subject.external_id : subject.kind === 'account' ? (found.get(refKey(meta.tenantId, 'account', subject.external_id))?.holder_party_id ?? null) : null;
        controls.push({ meta, type: p.event.data.type, subject, subjectPartyId, data });
      }
    }

    const current = await writeEntities(db, entities);
    const normalized = await normaliseMany(
      db,
      movements.map((m) => ({ amount: m.amount, baseAsset: m.baseAsset, registry: m.registry, occurredAt: m.meta.occurredAt })),
      at,
    );
    await writeMovements(db, movements.map(({ registry: _r, baseAsset: _b, debit: _d, credit: _c, ...m }, i) => ({ ...m, normalized: normalized[i] })));
    await writeControlEvents(db, controls);
    await writeChangeRecords(
      db,
      [
        ...entities.map((e) => entityChange(e, current.has(e.meta.eventId))),
        ...movements.map((m, i) => movementChange(m, normalized[i])),
        ...controls.map(controlEventChange),
      ],
      at,
    );

    const entry = { at, worker: this.deps.worker, durationMs: Math.round(performance.now() - started) };
    await markProcessed(db, ready.map((p): Processed => ({ key: p.key, wasHeld: p.status !== 'pending' })), entry);
    await markHeld(db, toHold, entry);

    after.held.push(...toHold.map((h) => h.key));
    for (const p of ready) {
      if (REFERENCED.has(p.object)) after.arrived.push({ tenantId: p.key.tenantId, object: p.object, externalId: p.event.external_id });
    }
  }

  // Which referenced entities exist, with the one fact a movement needs of them: an account's
  // holder (the whole data is not read: a batch can name a thousand entities).
  private async findEntities(db: Db, refs: Array<Reference & { tenantId: string }>): Promise<Map<string, Found>> {
    if (refs.length === 0) return new Map();
    const { rows } = await db.query<{ tenant_id: string; object: string; external_id: string; holder_party_id: string | null; jurisdiction: string | null }>({
      name: 'find-entities',
      text: `SELECT e.tenant_id, e.object, e.external_id, e.data->>'holder_party_id' AS holder_party_id,
                    e.data->>'jurisdiction' AS jurisdiction FROM canonical_entities e
               JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[])) AS u(tenant_id, object, external_id)
                 ON e.tenant_id = u.tenant_id AND e.object = u.object AND e.external_id = u.external_id`,
      values: [refs.map((r) => r.tenantId), refs.map((r) => r.object), refs.map((r) => r.external_id)],
    });
    return new Map(rows.map((r) => [refKey(r.tenant_id, r.object, r.external_id), { holder_party_id: r.holder_party_id, jurisdiction: r.jurisdiction }]));
  }

  private async baseAsset(db: Db, tenantId: string): Promise<string> {
    const cached = this.bases.get(tenantId);
    if (cached && cached.expiresAt > Date.now()) return cached.asset;
    const asset = await baseAssetOf(db, tenantId);
    this.bases.set(tenantId, { asset, expiresAt: Date.now() + 60_000 });
    return asset;
  }
}

type PendingMovement = Omit<MovementWrite, 'normalized'> & { registry: AssetRegistry; baseAsset: string; debit: MovementLeg; credit: MovementLeg };

// A leg as downstream stores see it: its party is the one it names, else its account's holder;
// its country is the counterparty's declared one, else the account's jurisdiction.
function legOf(leg: Record<string, any> | undefined, account: (id: string) => Found | undefined): MovementLeg {
  const held = leg?.account_id ? account(leg.account_id) : undefined;
  return {
    account_id: leg?.account_id ?? null,
    party_id: leg?.party_id ?? held?.holder_party_id ?? null,
    country: leg?.counterparty?.country ?? held?.jurisdiction ?? null,
  };
}

function changeBase(meta: EventMeta) {
  return { tenant_id: meta.tenantId, event_id: meta.eventId, external_id: meta.externalId, occurred_at: meta.occurredAt, received_at: meta.receivedAt };
}

function entityChange(write: EntityWrite, current: boolean): EntityChange {
  return { ...changeBase(write.meta), object: write.meta.object as EntityChange['object'], sequence: write.meta.sequence, current, data: write.data };
}

function movementChange(m: PendingMovement, normalized: Normalization | undefined): MovementChange {
  const base = m.amount.asset === m.baseAsset ? m.amount : normalized?.status === 'normalized' ? normalized.amount : null;
  return { ...changeBase(m.meta), object: 'movement', type: m.type, status: m.status, amount: m.amount, base_amount: base, debit: m.debit, credit: m.credit, data: m.data };
}

function controlEventChange(c: ControlEventWrite & { subjectPartyId: string | null }): ControlEventChange {
  return { ...changeBase(c.meta), object: 'control_event', type: c.type, subject: c.subject, subject_party_id: c.subjectPartyId, data: c.data };
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

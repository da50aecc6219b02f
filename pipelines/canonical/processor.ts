import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { BusRecord } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { FAMILIES, isFamily, type Family } from '../../schemas/families/index.ts';
import {
  markHeld,
  markProcessed,
  markRejected,
  rememberMissing,
  eventsWaitingFor,
  type EventKey,
} from './event-status.ts';
import { normalise } from './fx.ts';
import type { IdentifierHasher } from './identifiers.ts';
import { referencesOf, type Reference } from './references.ts';
import { writeControlEvent, writeEntity, writeMovement, type EventMeta } from './writers.ts';

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

interface Pending {
  key: EventKey;
  object: Family;
  raw: Buffer;
  receivedAt: Date;
  status: string;
}

// Connection loss, serialization failures, resource exhaustion: a retry can help, so the batch
// is left to the bus to redeliver. Anything else about one record is that record's problem.
function isTransient(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return /^(08|40|53|57|58)/.test(code) || /^E(CONN|PIPE|TIMEDOUT|HOSTUNREACH)/.test(code) || (error as Error).message?.includes('Connection terminated');
}

// pipelines/canonical: turns accepted events into the canonical model. One transaction per
// batch of a partition (its events in order); a batch that fails on one record is replayed
// record by record so only that record is rejected. Idempotent: an event already processed is
// skipped, and every write is keyed by the event.
export class CanonicalProcessor {
  private readonly bases = new Map<string, { asset: string; expiresAt: number }>();

  constructor(private readonly deps: CanonicalDeps) {}

  async handle(records: BusRecord[]): Promise<void> {
    const after: FollowUps = { held: [], arrived: [] };
    try {
      await withTransaction(this.deps.pool, async (db) => {
        for (const record of records) await this.processRecord(db, record, after);
      });
    } catch (error) {
      if (isTransient(error)) throw error;
      after.held.length = 0;
      after.arrived.length = 0;
      for (const record of records) {
        try {
          await withTransaction(this.deps.pool, (db) => this.processRecord(db, record, after));
        } catch (recordError) {
          if (isTransient(recordError)) throw recordError;
          await markRejected(this.deps.pool, keyOf(record), { code: 'canonicalization_failed', message: (recordError as Error).message }, {
            at: this.deps.clock.now(),
            worker: this.deps.worker,
            durationMs: null,
          });
        }
      }
    }
    // A hold and the arrival it waits for can be committed by two transactions that each looked
    // before the other committed. Both sides therefore look again after their own commit: then
    // at least one of them sees the other.
    for (const key of after.held) await withTransaction(this.deps.pool, (db) => this.retry(db, key));
    for (const entity of after.arrived) {
      const waiting = await eventsWaitingFor(this.deps.pool, entity.tenantId, entity.object, entity.externalId);
      for (const eventId of waiting) await withTransaction(this.deps.pool, (db) => this.retry(db, { tenantId: entity.tenantId, eventId }));
    }
  }

  // Re-examines a held or quarantined event (used on release and after a hold).
  async retry(db: Db, key: EventKey): Promise<void> {
    const pending = await this.lockEvent(db, key);
    if (pending && (pending.status === 'held' || pending.status === 'quarantined')) await this.attempt(db, pending, undefined);
  }

  private async processRecord(db: Db, record: BusRecord, after: FollowUps): Promise<void> {
    const pending = await this.lockEvent(db, keyOf(record));
    if (!pending || pending.status === 'processed' || pending.status === 'rejected') return;
    await this.attempt(db, pending, after);
  }

  private async lockEvent(db: Db, key: EventKey): Promise<Pending | undefined> {
    const { rows } = await db.query<{ object: string; raw_event: Buffer; received_at: Date; status: string }>({
      name: 'lock-event',
      text: 'SELECT object, raw_event, received_at, status FROM inbox_events WHERE tenant_id = $1 AND event_id = $2 FOR UPDATE',
      values: [key.tenantId, key.eventId],
    });
    const row = rows[0];
    if (!row || !isFamily(row.object)) return undefined;
    return { key, object: row.object, raw: row.raw_event, receivedAt: row.received_at, status: row.status };
  }

  private async attempt(db: Db, pending: Pending, after: FollowUps | undefined): Promise<void> {
    const started = performance.now();
    const { key, object } = pending;
    const event = JSON.parse(pending.raw.toString('utf8')) as {
      external_id: string;
      sequence?: number;
      occurred_at: string;
      data: Record<string, any>;
    };
    const refs = referencesOf(object, event.data);
    const found = await this.findEntities(db, key.tenantId, refs);
    const missing = refs.filter((r) => !found.has(refKey(r)));
    const at = this.deps.clock.now();
    const duration = () => Math.round(performance.now() - started);
    if (missing.length > 0) {
      if (pending.status === 'pending') {
        await markHeld(db, key, missing, pending.receivedAt, { at, worker: this.deps.worker, durationMs: duration() });
        after?.held.push(key);
      } else {
        await rememberMissing(db, key, missing);
      }
      return;
    }

    const meta: EventMeta = {
      tenantId: key.tenantId,
      eventId: key.eventId,
      externalId: event.external_id,
      sequence: event.sequence ?? null,
      occurredAt: event.occurred_at,
      receivedAt: pending.receivedAt.toISOString(),
    };
    const data = this.deps.hasher.hashData(key.tenantId, object, event.data);
    if (FAMILIES[object].kind === 'entity') {
      await writeEntity(db, object, meta, data);
    } else if (object === 'movement') {
      await this.writeMovement(db, meta, event.data, data, found, at);
    } else {
      await writeControlEvent(db, meta, { type: event.data.type, subject: event.data.subject }, data);
    }
    const wasHeld = pending.status !== 'pending';
    await markProcessed(db, key, { at, worker: this.deps.worker, durationMs: duration(), detail: wasHeld ? { released: true } : null }, wasHeld);

    if (object === 'party' || object === 'account' || object === 'instrument') {
      after?.arrived.push({ tenantId: key.tenantId, object, externalId: event.external_id });
      for (const eventId of await eventsWaitingFor(db, key.tenantId, object, event.external_id)) {
        await this.retry(db, { tenantId: key.tenantId, eventId });
      }
    }
  }

  private async writeMovement(
    db: Db,
    meta: EventMeta,
    raw: Record<string, any>,
    data: Record<string, unknown>,
    found: Map<string, Record<string, any>>,
    now: Date,
  ): Promise<void> {
    // A leg's party is the one it names, else the holder of its account.
    const partyOf = (leg: Record<string, any> | undefined): string | null =>
      leg?.party_id ?? (leg?.account_id ? (found.get(refKey({ object: 'account', external_id: leg.account_id }))?.holder_party_id ?? null) : null);
    const registry = await this.deps.assets.forTenant(meta.tenantId, db);
    const normalized = await normalise(db, raw.amount, await this.baseAsset(db, meta.tenantId), registry, meta.occurredAt, now);
    await writeMovement(
      db,
      meta,
      {
        type: raw.type,
        status: raw.status,
        amount: raw.amount,
        debitAccountId: raw.debit?.account_id ?? null,
        debitPartyId: partyOf(raw.debit),
        creditAccountId: raw.credit?.account_id ?? null,
        creditPartyId: partyOf(raw.credit),
        normalized,
        links: raw.links ?? {},
      },
      data,
    );
  }

  private async findEntities(db: Db, tenantId: string, refs: Reference[]): Promise<Map<string, Record<string, any>>> {
    if (refs.length === 0) return new Map();
    const { rows } = await db.query<{ object: string; external_id: string; data: Record<string, any> }>({
      name: 'find-entities',
      text: `SELECT e.object, e.external_id, e.data FROM canonical_entities e
               JOIN unnest($2::text[], $3::text[]) AS u(object, external_id)
                 ON e.tenant_id = $1 AND e.object = u.object AND e.external_id = u.external_id`,
      values: [tenantId, refs.map((r) => r.object), refs.map((r) => r.external_id)],
    });
    return new Map(rows.map((r) => [refKey({ object: r.object as Reference['object'], external_id: r.external_id }), r.data]));
  }

  private async baseAsset(db: Db, tenantId: string): Promise<string> {
    const cached = this.bases.get(tenantId);
    if (cached && cached.expiresAt > Date.now()) return cached.asset;
    const { rows } = await db.query<{ base_asset: string }>('SELECT base_asset FROM tenants WHERE tenant_id = $1', [tenantId]);
    const asset = rows[0]!.base_asset;
    this.bases.set(tenantId, { asset, expiresAt: Date.now() + 60_000 });
    return asset;
  }
}

function keyOf(record: BusRecord): EventKey {
  return { tenantId: record.headers.tenant_id!, eventId: record.headers.event_id! };
}

function refKey(ref: Reference): string {
  return `${ref.object}\u0000${ref.external_id}`;
}

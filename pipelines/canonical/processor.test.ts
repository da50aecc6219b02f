import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { BusRecord } from '../../platform/bus/port.ts';
import { ManualClock } from '../../platform/clock.ts';
import { acceptEvents } from '../../platform/inbox/accept-events.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import type { Family } from '../../schemas/families/index.ts';
import { accountEvent, movementEvent, partyEvent } from '../../test/fixtures/events.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { releasableEvents } from './event-status.ts';
import { IdentifierHasher } from './identifiers.ts';
import { CanonicalProcessor } from './processor.ts';

// The processor fed batches as the bus hands them over: one set-based transaction per batch, a
// record that cannot be made canonical rejected alone, a batch delivered again changing nothing.
const TENANT = 'proc';
let db: TestDatabase;
let processor: CanonicalProcessor;
const reported: unknown[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, TENANT, 'USD');
  processor = new CanonicalProcessor({
    pool: db.pool,
    clock: new ManualClock(new Date('2026-09-01T12:00:00Z')),
    hasher: new IdentifierHasher(Buffer.alloc(32, 3)),
    assets: new TenantAssetRegistry(db.pool),
    worker: 'canonical:test',
    onError: (error) => reported.push(error),
  });
});
afterAll(async () => {
  await db?.drop();
});

// Accepts the events (inbox, log and `received` rows, as the API does) and returns them as the
// bus would deliver them.
async function accepted(events: Array<{ object: Family; externalId: string; sequence: number | null; json: string }>, historical = false): Promise<BusRecord[]> {
  const prepared = events.map((e) => ({
    tenantId: TENANT,
    eventId: randomUUID(),
    object: e.object,
    externalId: e.externalId,
    sequence: e.sequence,
    rawEvent: Buffer.from(e.json),
    contentHash: createHash('sha256').update(e.json).digest(),
    occurredAt: new Date('2026-09-01T12:00:00Z'),
    receivedAt: new Date('2026-09-01T12:00:01Z'),
    correlationId: null,
    importId: null,
    historical,
  }));
  const outcomes = await acceptEvents(db.pool, prepared);
  expect(outcomes.map((o) => o.kind)).toEqual(events.map(() => 'accepted'));
  return prepared.map((p, i) => ({
    topic: `inbox.${p.object}`,
    partition: 0,
    offset: `0:${i}`,
    key: `${TENANT}/${p.object}/${p.externalId}`,
    value: p.rawEvent,
    headers: { tenant_id: TENANT, event_id: p.eventId },
  }));
}

// As the embedded log hands accepted events over: with when each was received and whether a
// historical import landed it, read from its inbox row.
async function withLogHeaders(records: BusRecord[]): Promise<BusRecord[]> {
  const { rows } = await db.pool.query<{ event_id: string; received_at: Date; historical: boolean }>(
    'SELECT event_id, received_at, historical FROM inbox_events WHERE tenant_id = $1 AND event_id = ANY($2::uuid[])',
    [TENANT, records.map((r) => r.headers.event_id)],
  );
  const byId = new Map(rows.map((r) => [r.event_id, r]));
  return records.map((r) => {
    const row = byId.get(r.headers.event_id!)!;
    return { ...r, headers: { ...r.headers, received_at: row.received_at.toISOString(), historical: String(row.historical) } };
  });
}

const party = (id: string, sequence: number) => ({ object: 'party' as const, externalId: id, sequence, json: JSON.stringify(partyEvent(id, sequence)) });
const movement = (id: string, debit: string, credit: string, value = '12550') => {
  const event = movementEvent(id);
  return { object: 'movement' as const, externalId: id, sequence: null, json: JSON.stringify({ ...event, data: { ...event.data, amount: { value, asset: 'USD', scale: 2 }, debit: { party_id: debit }, credit: { party_id: credit } } }) };
};

async function statusOf(records: BusRecord[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ event_id: string; status: string; code: string | null }>(
    `SELECT event_id, status, rejection->>'code' AS code FROM inbox_events WHERE tenant_id = $1 AND event_id = ANY($2::uuid[])`,
    [TENANT, records.map((r) => r.headers.event_id)],
  );
  const byId = new Map(rows.map((r) => [r.event_id, r.code ? `${r.status}:${r.code}` : r.status]));
  return records.map((r) => byId.get(r.headers.event_id!)!);
}

async function counts(records: BusRecord[]): Promise<{ changes: number; stages: number }> {
  const ids = records.map((r) => r.headers.event_id);
  const { rows } = await db.pool.query<{ changes: number; stages: number }>(
    `SELECT (SELECT count(*)::int FROM outbox WHERE tenant_id = $1 AND event_id = ANY($2::uuid[]) AND stream = 'canonical') AS changes,
            (SELECT count(*)::int FROM event_stages WHERE tenant_id = $1 AND event_id = ANY($2::uuid[]) AND stage = 'canonical') AS stages`,
    [TENANT, ids],
  );
  return rows[0]!;
}

describe('canonical batches', () => {
  it('applies a mixed batch in one pass: entities before facts, versions by sequence, a change record and a stage entry per event', async () => {
    const records = await accepted([movement('b-m1', 'b-p1', 'b-p2'), party('b-p1', 1), party('b-p2', 2), party('b-p2', 1), movement('b-m2', 'b-p2', 'b-p1')]);
    await processor.handle(records);
    expect(await statusOf(records)).toEqual(['processed', 'processed', 'processed', 'processed', 'processed']);
    const { rows: current } = await db.pool.query(`SELECT external_id, sequence FROM canonical_entities WHERE tenant_id = $1 AND external_id = 'b-p2'`, [TENANT]);
    expect(current).toEqual([{ external_id: 'b-p2', sequence: 2n }]);
    const { rows: changes } = await db.pool.query<{ payload: string; topic: string; event_id: string }>(
      `SELECT topic, event_id, payload FROM outbox WHERE tenant_id = $1 AND stream = 'canonical' ORDER BY position`,
      [TENANT],
    );
    // Entities first, then facts, each in log order; the late lower version is not current.
    expect(changes.map((c) => `${c.topic}:${JSON.parse(c.payload).external_id}:${JSON.parse(c.payload).current ?? '-'}`)).toEqual([
      'canonical.party:b-p1:true',
      'canonical.party:b-p2:true',
      'canonical.party:b-p2:false',
      'canonical.movement:b-m1:-',
      'canonical.movement:b-m2:-',
    ]);
    const m1 = JSON.parse(changes[3]!.payload);
    expect(m1).toMatchObject({ event_id: records[0]!.headers.event_id, debit: { party_id: 'b-p1' }, credit: { party_id: 'b-p2' }, base_amount: { value: '12550', asset: 'USD', scale: 2 } });
    const { rows: movements } = await db.pool.query(
      `SELECT external_id, debit_party_id, credit_party_id, amount_value::text, data->>'memo' AS memo FROM canonical_movements WHERE tenant_id = $1 ORDER BY external_id`,
      [TENANT],
    );
    expect(movements).toEqual([
      { external_id: 'b-m1', debit_party_id: 'b-p1', credit_party_id: 'b-p2', amount_value: '12550', memo: 'dinner' },
      { external_id: 'b-m2', debit_party_id: 'b-p2', credit_party_id: 'b-p1', amount_value: '12550', memo: 'dinner' },
    ]);
    expect(await counts(records)).toEqual({ changes: 5, stages: 5 });

    // Delivered again (at least once): nothing more is written.
    await processor.handle(records);
    expect(await counts(records)).toEqual({ changes: 5, stages: 5 });
  });

  it('rejects only the records that cannot be made canonical; the rest of the batch is applied', async () => {
    const records = await accepted([
      party('r-p1', 1),
      // PostgreSQL refuses it (numeric(38, 0) overflows): the batch's statement fails.
      movement('r-m-overflow', 'r-p1', 'r-p1', '9'.repeat(40)),
      movement('r-m-good', 'r-p1', 'r-p1'),
      // Fails in the processor itself (no data to read references from).
      { object: 'movement', externalId: 'r-m-nodata', sequence: null, json: JSON.stringify({ external_id: 'r-m-nodata', occurred_at: '2026-09-01T12:00:00Z' }) },
    ]);
    reported.length = 0;
    await processor.handle(records);
    expect(await statusOf(records)).toEqual(['processed', 'rejected:canonicalization_failed', 'processed', 'rejected:canonicalization_failed']);
    // The batch's failure is said once, with its cause, before its events are taken one by one.
    expect(reported.map((e) => (e as Error).message)).toEqual([expect.stringMatching(/^canonical: a batch of 4 events failed, taking them one by one: /)]);
    const { rows } = await db.pool.query<{ external_id: string }>(`SELECT external_id FROM canonical_movements WHERE tenant_id = $1 AND external_id LIKE 'r-%' ORDER BY 1`, [TENANT]);
    expect(rows.map((r) => r.external_id)).toEqual(['r-m-good']);
    const { rows: stages } = await db.pool.query<{ event_id: string; status: string }>(
      `SELECT event_id, status FROM event_stages WHERE tenant_id = $1 AND event_id = ANY($2::uuid[]) AND stage = 'canonical' ORDER BY id`,
      [TENANT, records.map((r) => r.headers.event_id)],
    );
    const stageOf = (i: number) => stages.filter((s) => s.event_id === records[i]!.headers.event_id).map((s) => s.status);
    expect([0, 1, 2, 3].map(stageOf)).toEqual([['ok'], ['rejected'], ['ok'], ['rejected']]);
    expect(await counts(records)).toEqual({ changes: 2, stages: 4 });
  });

  it('looks up a party or an instrument once per process, and an account on every batch', async () => {
    // The processor's lookups before each batch's transaction are made on its pool: counted here.
    const lookups: string[][] = [];
    const pool = new Proxy(db.pool, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
        return (config: unknown, values?: unknown) => {
          if (typeof config === 'object' && config !== null && (config as { name?: string }).name === 'find-entities') {
            lookups.push(((config as { values: unknown[] }).values[2] as string[]).slice().sort());
          }
          return target.query(config as string, values as unknown[]);
        };
      },
    });
    const remembering = new CanonicalProcessor({ pool, clock: new ManualClock(new Date('2026-09-01T12:00:00Z')), hasher: new IdentifierHasher(Buffer.alloc(32, 3)), assets: new TenantAssetRegistry(db.pool), worker: 'canonical:test' });
    const account = { object: 'account' as const, externalId: 'k-a1', sequence: 1, json: JSON.stringify(accountEvent('k-a1', 'k-p1', 1)) };
    await remembering.handle(await accepted([party('k-p1', 1), party('k-p2', 1), account]));
    const viaAccount = () => {
      const event = movementEvent(`k-m-${lookups.length}`);
      return { object: 'movement' as const, externalId: event.external_id, sequence: null, json: JSON.stringify({ ...event, data: { ...event.data, debit: { account_id: 'k-a1' }, credit: { party_id: 'k-p2' } } }) };
    };
    lookups.length = 0;
    const first = await accepted([movement('k-m1', 'k-p1', 'k-p2'), viaAccount()]);
    await remembering.handle(first);
    const second = await accepted([movement('k-m2', 'k-p2', 'k-p1'), viaAccount()]);
    await remembering.handle(second);
    expect(await statusOf([...first, ...second])).toEqual(['processed', 'processed', 'processed', 'processed']);
    // First batch: both parties and the account are looked up; second: only the account.
    expect(lookups).toEqual([['k-a1', 'k-p1', 'k-p2'], ['k-a1']]);
    const { rows } = await db.pool.query(`SELECT debit_party_id FROM canonical_movements WHERE tenant_id = $1 AND debit_account_id = 'k-a1' ORDER BY external_id`, [TENANT]);
    expect(rows).toEqual([{ debit_party_id: 'k-p1' }, { debit_party_id: 'k-p1' }]);
  });

  it("gives a movement its account's current holder, not that of a late lower version in the same batch", async () => {
    const account = (holder: string, sequence: number) => ({ object: 'account' as const, externalId: 'v-a1', sequence, json: JSON.stringify(accountEvent('v-a1', holder, sequence)) });
    const viaAccount = (id: string) => {
      const event = movementEvent(id);
      return { object: 'movement' as const, externalId: id, sequence: null, json: JSON.stringify({ ...event, data: { ...event.data, debit: { account_id: 'v-a1' }, credit: { party_id: 'v-p1' } } }) };
    };
    await processor.handle(await accepted([party('v-p1', 1), party('v-p2', 1), account('v-p2', 2)]));
    // Version 1 (held by v-p1) comes late, beside a movement on the account; then versions 4
    // and 3 come together, out of order, with another.
    const late = await accepted([account('v-p1', 1), viaAccount('v-m1')]);
    await processor.handle(late);
    const shuffled = await accepted([account('v-p1', 4), account('v-p2', 3), viaAccount('v-m2')]);
    await processor.handle(shuffled);
    expect(await statusOf([...late, ...shuffled])).toEqual(['processed', 'processed', 'processed', 'processed', 'processed']);
    const { rows } = await db.pool.query(`SELECT external_id, debit_party_id FROM canonical_movements WHERE tenant_id = $1 AND debit_account_id = 'v-a1' ORDER BY external_id`, [TENANT]);
    expect(rows).toEqual([
      { external_id: 'v-m1', debit_party_id: 'v-p2' },
      { external_id: 'v-m2', debit_party_id: 'v-p1' },
    ]);
  });

  it('takes a batch that says when its events were received without locking their rows, and locks them when one was not pending', async () => {
    // The statements of the processor's transactions (on connections checked out of its pool).
    const transactions: string[][] = [];
    const pool = new Proxy(db.pool, {
      get(target, prop, receiver) {
        if (prop !== 'connect') return Reflect.get(target, prop, receiver) as unknown;
        // pool.query checks a client out with a callback: those statements are not counted.
        return async (callback?: Parameters<typeof target.connect>[0]) => {
          if (callback) return target.connect(callback);
          const client = await target.connect();
          return new Proxy(client, {
            get(c, name, r) {
              if (name !== 'query') return Reflect.get(c, name, r) as unknown;
              return (config: unknown, values?: unknown) => {
                const text = typeof config === 'string' ? config : (config as { text: string }).text;
                if (text === 'BEGIN') transactions.push([]);
                transactions.at(-1)?.push(text.includes('FOR UPDATE') ? 'lock' : text.includes('canonical_movements') ? 'commit' : text);
                return c.query(config as string, values as unknown[]);
              };
            },
          });
        };
      },
    });
    const optimistic = new CanonicalProcessor({ pool, clock: new ManualClock(new Date('2026-09-01T12:00:00Z')), hasher: new IdentifierHasher(Buffer.alloc(32, 3)), assets: new TenantAssetRegistry(db.pool), worker: 'canonical:test' });
    // How each transaction of a call to handle began and ended: with or without a row lock.
    const handled = async (records: BusRecord[]) => {
      transactions.length = 0;
      await optimistic.handle(records);
      return transactions.map((t) => `${t.includes('lock') ? 'lock' : 'no lock'}, ${t.at(-1)}`);
    };
    const batch = await withLogHeaders(await accepted([party('o-p1', 1), movement('o-m1', 'o-p1', 'o-p1'), movement('o-m-held', 'o-p1', 'o-p2')]));
    // The batch without a lock; then its held event looked at again after the commit (a retry,
    // which locks).
    expect(await handled(batch)).toEqual(['no lock, COMMIT', 'lock, COMMIT']);
    expect(await statusOf(batch)).toEqual(['processed', 'processed', 'held']);
    expect(await counts(batch)).toEqual({ changes: 2, stages: 3 });
    const { rows: change } = await db.pool.query<{ received_at: string }>(
      `SELECT payload::json->>'received_at' AS received_at FROM outbox WHERE tenant_id = $1 AND event_id = $2 AND stream = 'canonical'`,
      [TENANT, batch[1]!.headers.event_id],
    );
    expect(change).toEqual([{ received_at: batch[1]!.headers.received_at }]);

    // Delivered again: its events are no longer pending, so the batch is rolled back and taken
    // again with its rows locked; nothing more is written, and the held event is held once.
    expect(await handled(batch)).toEqual(['no lock, ROLLBACK', 'lock, COMMIT']);
    expect(await statusOf(batch)).toEqual(['processed', 'processed', 'held']);
    expect(await counts(batch)).toEqual({ changes: 2, stages: 3 });
    // The held event alone: its hold is not written again either.
    expect(await handled([batch[2]!])).toEqual(['no lock, ROLLBACK', 'lock, COMMIT']);
    expect(await counts([batch[2]!])).toEqual({ changes: 0, stages: 1 });

    // What it waits for arrives: the arrival without a lock, the release with one.
    expect(await handled(await withLogHeaders(await accepted([party('o-p2', 1)])))).toEqual(['no lock, COMMIT', 'lock, COMMIT']);
    expect(await statusOf(batch)).toEqual(['processed', 'processed', 'processed']);
    expect(await counts(batch)).toEqual({ changes: 3, stages: 4 });
  });

  it('marks the change records of historically imported events, from the log\'s headers or from their inbox rows', async () => {
    const flagged = async (records: BusRecord[]) => {
      const { rows } = await db.pool.query<{ event_id: string; historical: boolean | null }>(
        `SELECT event_id, (payload::json->>'historical')::boolean AS historical FROM outbox WHERE tenant_id = $1 AND event_id = ANY($2::uuid[]) AND stream = 'canonical'`,
        [TENANT, records.map((r) => r.headers.event_id)],
      );
      const byId = new Map(rows.map((r) => [r.event_id, r.historical]));
      return records.map((r) => byId.get(r.headers.event_id!));
    };
    // Without the headers (a record relayed before they existed) the rows are read and locked.
    const read = await accepted([party('hi-p1', 1), movement('hi-m1', 'hi-p1', 'hi-p1')], true);
    await processor.handle(read);
    expect(await flagged(read)).toEqual([true, true]);
    const told = await withLogHeaders([...(await accepted([movement('hi-m2', 'hi-p1', 'hi-p1')], true)), ...(await accepted([movement('hi-m3', 'hi-p1', 'hi-p1')]))]);
    expect(told.map((r) => r.headers.historical)).toEqual(['true', 'false']);
    await processor.handle(told);
    expect(await statusOf(told)).toEqual(['processed', 'processed']);
    expect(await flagged(told)).toEqual([true, false]);
    // A record with only one of the two headers is not trusted to say either: its row is read.
    const half = (await withLogHeaders(await accepted([movement('hi-m4', 'hi-p1', 'hi-p1')], true))).map((r) => ({ ...r, headers: { ...r.headers } }));
    for (const record of half) delete record.headers.historical;
    await processor.handle(half);
    expect(await flagged(half)).toEqual([true]);
  });

  it('rejects a held event that cannot be made canonical when it is released, and still applies what released it', async () => {
    const [held] = await accepted([movement('h-m-overflow', 'h-p1', 'h-p1', '9'.repeat(40))]);
    await processor.handle([held!]);
    expect(await statusOf([held!])).toEqual(['held']);
    const [arrival] = await accepted([party('h-p1', 1)]);
    await processor.handle([arrival!]);
    expect(await statusOf([arrival!, held!])).toEqual(['processed', 'rejected:canonicalization_failed']);
    // Rejected, it waits for nothing: no hold row keeps it among the releasable ones forever.
    const heldId = held!.headers.event_id!;
    for (const table of ['held_events', 'held_references']) {
      expect((await db.pool.query(`SELECT 1 FROM ${table} WHERE tenant_id = $1 AND event_id = $2`, [TENANT, heldId])).rowCount).toBe(0);
    }
    expect((await releasableEvents(db.pool)).map((k) => k.eventId)).not.toContain(heldId);
  });
});

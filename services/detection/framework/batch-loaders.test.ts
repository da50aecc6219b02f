// The batch's shared reads: entities, flagged parties and movement types asked for by several
// evaluations in one turn of the event loop are read in one statement, and each ask gets exactly
// its own answer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../../platform/ids.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { entityKey, SubjectContext, type EntityVersion } from './context.ts';
import { EntityLoader } from './entity-loader.ts';
import { FlaggedPartiesLoader } from './flagged-loader.ts';
import { MovementTypesLoader } from './movement-types.ts';

let db: TestDatabase;
const T0 = new Date('2026-09-01T12:00:00Z');

// The pool, counting the statements sent through it.
function counting(pool: Pool): { pool: Pool; statements: () => number } {
  let n = 0;
  const counted = new Proxy(pool, {
    get(target, name, receiver) {
      if (name === 'query') {
        return (...args: Parameters<Pool['query']>) => {
          n++;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { pool: counted, statements: () => n };
}

async function entity(object: string, id: string, data: Record<string, unknown>): Promise<void> {
  await db.pool.query(
    `INSERT INTO canonical_entities (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
     VALUES ('acme', $1, $2, 1, $3, $4, $4, $5)`,
    [object, id, randomUUID(), T0, JSON.stringify(data)],
  );
}

async function alert(party: string, options: { mode?: string; status?: string; from: Date }): Promise<void> {
  await db.pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                         window_from, window_to, score, severity, status, summary, explanation, hits, created_at, updated_at)
     VALUES ('acme', $1, $2, 1, 'fan_in', 1, 'fan_in', 'party', $3, $3, $4, $4, 0.5, 'medium', $5, 's', 'e', 1, $4, $4)`,
    [uuidv7(options.from.getTime()), options.mode ?? 'live', party, options.from, options.status ?? 'open'],
  );
}

async function movement(id: string, type: string, tenantId = 'acme'): Promise<void> {
  await db.pool.query(
    `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status, amount_value, amount_asset, amount_scale, data)
     VALUES ($1, $2, $3, $4, $4, $5, 'completed', 100, 'USD', 2, '{}')`,
    [tenantId, id, randomUUID(), T0, type],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  await entity('account', 'a1', { type: 'checking', holder_party_id: 'p1' });
  await entity('account', 'a2', { type: 'merchant', holder_party_id: 'p2' });
  await entity('party', 'p1', { type: 'person', segment: 'retail' });
  await alert('p1', { from: new Date(T0.getTime() - 3_600_000) });
  await alert('p2', { from: new Date(T0.getTime() + 3_600_000) });
  await alert('p3', { from: T0, status: 'closed' });
  await alert('p4', { from: T0, mode: 'shadow' });
  await alert('p5', { from: T0 });
  await movement('m1', 'p2p');
  await movement('m2', 'merchant_payment');
  await movement('m3', 'refund');
  await createTenant(db.pool, 'other', 'USD');
  await movement('m4', 'wire', 'other');
});
afterAll(async () => db?.drop());

describe('EntityLoader', () => {
  it('reads the entities asked for in one turn in one statement, null for those not received', async () => {
    const { pool, statements } = counting(db.pool);
    const loader = new EntityLoader(pool, 'acme');
    const [a1, a2, missing, p1] = await Promise.all([loader.get('account', 'a1'), loader.get('account', 'a2'), loader.get('account', 'nope'), loader.get('party', 'p1')]);
    expect(statements()).toBe(1);
    expect(a1?.data).toEqual({ type: 'checking', holder_party_id: 'p1' });
    expect(a1?.occurredAt).toEqual(T0);
    expect(a2?.data.type).toBe('merchant');
    expect(missing).toBeNull();
    expect(p1?.data.segment).toBe('retail');
    // Asked again, by this or another evaluation of the batch: no further read.
    expect((await loader.get('account', 'a1'))?.externalId).toBe('a1');
    expect(await loader.get('account', 'nope')).toBeNull();
    expect(statements()).toBe(1);
  });

  it('answers what prefetch loaded (found or absent) without a read', async () => {
    const { pool, statements } = counting(db.pool);
    const known: EntityVersion = { externalId: 'a1', occurredAt: T0, data: { type: 'savings' } };
    const loader = new EntityLoader(pool, 'acme', new Map([[entityKey('account', 'a1'), known], [entityKey('account', 'gone'), null]]));
    expect(await loader.get('account', 'a1')).toBe(known);
    expect(await loader.get('account', 'gone')).toBeNull();
    expect(statements()).toBe(0);
  });

  it('serves SubjectContext.entity for what prefetch did not load', async () => {
    const { pool, statements } = counting(db.pool);
    const loader = new EntityLoader(pool, 'acme');
    const stores = { pool, graph: undefined as never, aggregates: undefined as never };
    const contexts = ['s1', 's2'].map((id) => new SubjectContext(stores, 'acme', 'USD', { kind: 'account', id }, T0, null, { entities: new Map(), entityLoader: loader }));
    const holders = await Promise.all(contexts.map(async (ctx) => (await ctx.entity('account', 'a2'))?.data.holder_party_id));
    expect(holders).toEqual(['p2', 'p2']);
    expect(statements()).toBe(1);
  });
});

describe('FlaggedPartiesLoader', () => {
  it('answers each ask of one turn with its own open live alerts raised by its instant, in one statement', async () => {
    const { pool, statements } = counting(db.pool);
    const loader = new FlaggedPartiesLoader(pool, 'acme');
    const later = new Date(T0.getTime() + 7_200_000);
    const [now, afterwards, none, empty] = await Promise.all([
      loader.flagged(['p1', 'p2', 'p3', 'p4', 'p5', 'p6'], T0),
      loader.flagged(['p2', 'p2', 'p6'], later),
      loader.flagged(['p6'], T0),
      loader.flagged([], T0),
    ]);
    expect(statements()).toBe(1);
    // p2's alert starts after T0; p3's is closed, p4's is a shadow one; p6 has none.
    expect(now.sort()).toEqual(['p1', 'p5']);
    expect(afterwards).toEqual(['p2']);
    expect(none).toEqual([]);
    expect(empty).toEqual([]);
  });

  it('gives SubjectContext.flaggedParties the same answer as its own read', async () => {
    const stores = { pool: db.pool, graph: undefined as never, aggregates: undefined as never };
    const subject = { kind: 'party' as const, id: 'p9' };
    const batched = new SubjectContext(stores, 'acme', 'USD', subject, T0, null, { flaggedLoader: new FlaggedPartiesLoader(db.pool, 'acme') });
    const alone = new SubjectContext(stores, 'acme', 'USD', subject, T0, null);
    const parties = ['p5', 'p1', 'p2', 'p3', 'p4'];
    expect((await batched.flaggedParties(parties)).sort()).toEqual((await alone.flaggedParties(parties)).sort());
    expect((await alone.flaggedParties(parties)).sort()).toEqual(['p1', 'p5']);
  });
});

describe('MovementTypesLoader', () => {
  it('reads the types asked for in one turn in one statement, of its own tenant only, and keeps them', async () => {
    const { pool, statements } = counting(db.pool);
    const loader = new MovementTypesLoader(pool, 'acme');
    const [first, second, none] = await Promise.all([loader.types(['m1', 'm2']), loader.types(['m2', 'm3', 'm4']), loader.types([])]);
    expect(statements()).toBe(1);
    expect(first).toEqual(new Map([['m1', 'p2p'], ['m2', 'merchant_payment']]));
    // m4 is another tenant's movement.
    expect(second).toEqual(new Map([['m2', 'merchant_payment'], ['m3', 'refund']]));
    expect(none).toEqual(new Map());
    // Asked again (a type never changes): no further read, the one not found included.
    expect(await loader.types(['m3', 'm1', 'm4'])).toEqual(new Map([['m3', 'refund'], ['m1', 'p2p']]));
    expect(statements()).toBe(1);
  });

  it('gives SubjectContext.movementTypes the same answer as its own read', async () => {
    const stores = { pool: db.pool, graph: undefined as never, aggregates: undefined as never };
    const subject = { kind: 'account' as const, id: 'a1' };
    const batched = new SubjectContext(stores, 'acme', 'USD', subject, T0, null, { movementTypesLoader: new MovementTypesLoader(db.pool, 'acme') });
    const alone = new SubjectContext(stores, 'acme', 'USD', subject, T0, null);
    const ids = ['m3', 'm1', 'm4', 'm2'];
    expect(await batched.movementTypes(ids)).toEqual(await alone.movementTypes(ids));
    expect(await alone.movementTypes(ids)).toEqual(new Map([['m3', 'refund'], ['m1', 'p2p'], ['m2', 'merchant_payment']]));
  });
});

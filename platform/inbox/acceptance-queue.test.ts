import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.ts';
import type { Pool } from '../postgres/pool.ts';
import { TokenBuckets } from '../rate-limit/token-buckets.ts';
import { createTenant } from '../tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import type { PreparedEvent } from './accept-events.ts';
import { AcceptanceQueue } from './acceptance-queue.ts';
import type { Admission } from './admission.ts';

// Group commit with admission: each request's nonce claim, its rate-limit charge and its events
// settled in one statement per group, against a real PostgreSQL.
const LIMITS = { capacity: 10, refillPerS: 1 };
let db: TestDatabase;
let statements = 0;
const clock = new ManualClock(new Date('2026-11-28T12:00:00Z'));
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// The database pool, counting the statements sent through it.
function countingPool(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (...args: unknown[]) => {
        statements++;
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

// The database pool, with the lookup of the rows that repeated events match failing as a dropped
// connection would, after the group's statement has committed.
const LOOKUP_FAILURE = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
function lookupFailing(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (...args: unknown[]) =>
        typeof args[0] === 'string' && args[0].includes('FROM inbox_events i')
          ? Promise.reject(LOOKUP_FAILURE)
          : (target.query as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

async function tenant(): Promise<{ id: string; queue: AcceptanceQueue; buckets: TokenBuckets }> {
  const id = `aq-${randomUUID().slice(0, 8)}`;
  await createTenant(db.pool, id, 'USD');
  const buckets = new TokenBuckets(db.pool, clock, LIMITS);
  await buckets.prepare(id);
  return { id, queue: new AcceptanceQueue(countingPool(db.pool), buckets), buckets };
}

const admission = (tenantId: string, nonce: string, cost = 1): Admission => ({ tenantId, keyId: 'k1', nonce, at: clock.now(), cost, limits: LIMITS });

function event(tenantId: string, externalId: string): PreparedEvent {
  const json = JSON.stringify({ external_id: externalId });
  return {
    tenantId,
    eventId: randomUUID(),
    object: 'movement',
    externalId,
    sequence: null,
    rawEvent: Buffer.from(json),
    contentHash: createHash('sha256').update(json).digest(),
    occurredAt: clock.now(),
    receivedAt: clock.now(),
    correlationId: null,
    importId: null,
    historical: false,
  };
}

const written = async (tenantId: string): Promise<string[]> =>
  (await db.pool.query<{ external_id: string }>('SELECT external_id FROM inbox_events WHERE tenant_id = $1 ORDER BY external_id', [tenantId])).rows.map((r) => r.external_id);
const tokens = async (tenantId: string): Promise<number> =>
  (await db.pool.query<{ tokens: number }>('SELECT tokens FROM rate_limit_buckets WHERE tenant_id = $1', [tenantId])).rows[0]!.tokens;
const claimed = async (tenantId: string): Promise<string[]> =>
  (await db.pool.query<{ nonce: string }>('SELECT nonce FROM api_nonces WHERE tenant_id = $1 ORDER BY nonce', [tenantId])).rows.map((r) => r.nonce);

describe('acceptance with admission', () => {
  it('claims, charges and writes the requests that arrive together in one statement', async () => {
    const { id, queue } = await tenant();
    statements = 0;
    const results = await Promise.all([
      queue.submit([event(id, 'a')], admission(id, 'n1')),
      queue.submit([event(id, 'b'), event(id, 'c')], admission(id, 'n2', 2)),
      queue.submit([], admission(id, 'n3')),
    ]);
    expect(statements).toBe(1);
    expect(results.map((r) => r.admission?.kind)).toEqual(['admitted', 'admitted', 'admitted']);
    expect(results.map((r) => r.outcomes.map((o) => o.kind))).toEqual([['accepted'], ['accepted', 'accepted'], []]);
    expect(await written(id)).toEqual(['a', 'b', 'c']);
    expect(await claimed(id)).toEqual(['n1', 'n2', 'n3']);
    expect(await tokens(id)).toBe(6);
    const last = results[2]!.admission!;
    expect(last.kind === 'admitted' && last.bucket.remaining).toBe(6);
  });

  it('writes and charges nothing for a replayed nonce, within a group or after it', async () => {
    const { id, queue } = await tenant();
    const [first, repeat] = await Promise.all([queue.submit([event(id, 'a')], admission(id, 'n1')), queue.submit([event(id, 'b')], admission(id, 'n1'))]);
    expect(first.admission?.kind).toBe('admitted');
    expect(repeat).toEqual({ admission: { kind: 'replayed' }, outcomes: [] });
    const later = await queue.submit([event(id, 'c')], admission(id, 'n1'));
    expect(later).toEqual({ admission: { kind: 'replayed' }, outcomes: [] });
    expect(await written(id)).toEqual(['a']);
    expect(await tokens(id)).toBe(9);
  });

  it('grants each request of a group that what is left pays for, in arrival order, past one that does not fit', async () => {
    const { id, queue, buckets } = await tenant();
    const results = await Promise.all([
      queue.submit([event(id, 'a')], admission(id, 'n1', 6)),
      queue.submit([event(id, 'b')], admission(id, 'n2', 5)),
      queue.submit([event(id, 'c')], admission(id, 'n3', 1)),
      queue.submit([event(id, 'd')], admission(id, 'n4', 4)),
    ]);
    // 10 tokens: 6 paid (4 left), 5 refused, 1 paid (3 left), 4 refused.
    expect(results.map((r) => r.admission?.kind)).toEqual(['admitted', 'limited', 'admitted', 'limited']);
    const refused = results[1]!.admission!;
    // 3 tokens left after the group, 2 more needed at 1 per second.
    expect(refused.kind === 'limited' && [refused.bucket.remaining, refused.bucket.retryAfterS]).toEqual([3, 2]);
    expect(results[1]!.outcomes).toEqual([]);
    expect(await written(id)).toEqual(['a', 'c']);
    expect(await tokens(id)).toBe(3);
    // The nonces of refused requests are spent, as a refused request's always were.
    expect(await claimed(id)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(buckets.likelyShort(id, 4)).toBe(true);
    expect(buckets.likelyShort(id, 3)).toBe(false);
  });

  it('charges each tenant of a group its own bucket, with two queues sending groups of the same tenants', async () => {
    const one = await tenant();
    const two = await tenant();
    // Two queues (as two API processes), each sending groups that hold both tenants, in opposite
    // orders, waiting on each other's bucket rows.
    const other = new AcceptanceQueue(db.pool, two.buckets);
    const rounds = await Promise.all(
      Array.from({ length: 4 }, (_, round) =>
        Promise.all([
          one.queue.submit([event(one.id, `a${round}`)], admission(one.id, `a${round}`)),
          one.queue.submit([event(two.id, `b${round}`)], admission(two.id, `b${round}`)),
          other.submit([event(two.id, `c${round}`)], admission(two.id, `c${round}`)),
          other.submit([event(one.id, `d${round}`)], admission(one.id, `d${round}`)),
        ]),
      ),
    );
    expect(rounds.flat().map((r) => r.admission?.kind)).toEqual(Array(16).fill('admitted'));
    expect(await written(one.id)).toEqual(['a0', 'a1', 'a2', 'a3', 'd0', 'd1', 'd2', 'd3']);
    expect(await written(two.id)).toEqual(['b0', 'b1', 'b2', 'b3', 'c0', 'c1', 'c2', 'c3']);
    expect([await tokens(one.id), await tokens(two.id)]).toEqual([2, 2]);
  });

  it('makes a bucket row again when it is gone, and admits the request then', async () => {
    const { id, queue } = await tenant();
    await db.pool.query('DELETE FROM rate_limit_buckets WHERE tenant_id = $1', [id]);
    const result = await queue.submit([event(id, 'a')], admission(id, 'n1'));
    expect(result.admission?.kind).toBe('admitted');
    expect(await written(id)).toEqual(['a']);
    expect(await tokens(id)).toBe(9);
  });

  it('answers the requests of a committed group that repeat nothing when the lookup of a repeated event fails', async () => {
    const { id, buckets } = await tenant();
    const queue = new AcceptanceQueue(lookupFailing(db.pool), buckets);
    const a = event(id, 'a');
    const c = event(id, 'c');
    await queue.submit([a], admission(id, 'n1'));
    await queue.submit([c]);
    const admitting = await Promise.allSettled([queue.submit([{ ...a, eventId: randomUUID() }], admission(id, 'n2')), queue.submit([event(id, 'b')], admission(id, 'n3'))]);
    const plain = await Promise.allSettled([queue.submit([{ ...c, eventId: randomUUID() }]), queue.submit([event(id, 'd')])]);
    for (const [repeat, fresh] of [admitting, plain]) {
      expect(repeat).toEqual({ status: 'rejected', reason: LOOKUP_FAILURE });
      expect(fresh!.status === 'fulfilled' && fresh.value.outcomes.map((o) => o.kind)).toEqual(['accepted']);
    }
    expect(await written(id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('writes the events of a request admitted before, in a group with others', async () => {
    const { id, queue } = await tenant();
    const [admitted, plain] = await Promise.all([queue.submit([event(id, 'a')], admission(id, 'n1', 20)), queue.submit([event(id, 'b')])]);
    expect(admitted.admission?.kind).toBe('limited');
    expect(plain.outcomes.map((o) => o.kind)).toEqual(['accepted']);
    expect(await written(id)).toEqual(['b']);
  });
});

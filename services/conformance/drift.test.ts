import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { enqueueEvents } from '../webhooks/outgoing-events.ts';
import { sweepConformance } from './drift.ts';
import { addTallies, type TallyRow } from './store.ts';
import { BUCKET_MS, ConformanceTally } from './tally.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  await createTenant(db.pool, 'beta', 'USD');
});
afterAll(async () => db?.drop());

const T = Date.parse('2026-09-08T12:00:00Z');
const at = (minutes: number) => new Date(T + minutes * 60_000);
const bucketOf = (minutes: number) => new Date(Math.floor(at(minutes).getTime() / BUCKET_MS) * BUCKET_MS);
const row = (tenantId: string, minutes: number, items: number, code = '', path = ''): TallyRow => ({ tenantId, family: 'movement', bucket: bucketOf(minutes), code, path, items });
const refused = (tenantId: string, minutes: number, items: number, path = 'event.data.amount.value') => row(tenantId, minutes, items, 'svc:validation/schema', path);
// Sweeps and enqueues as the detect pipeline does, so each event is checked against its payload.
const sweep = (minutes: number) =>
  withTransaction(db.pool, async (tx) => {
    const events = await sweepConformance(tx, at(minutes));
    await enqueueEvents(tx, events, at(minutes));
    return events;
  });

describe('conformance drift', () => {
  it('announces a family refused far more than in the week before, once, until it conforms again', async () => {
    // The week before: 1 % refused, every day.
    await addTallies(db.pool, Array.from({ length: 7 }, (_, d) => [row('acme', -(d + 1) * 1440, 990), refused('acme', -(d + 1) * 1440, 10)]).flat());
    // The last hour: 40 of 400 refused (10 %), more than five times the week's share.
    await addTallies(db.pool, [row('acme', -30, 360), refused('acme', -30, 25), refused('acme', -10, 12, 'event.data.debit.account_id'), refused('acme', -10, 3, 'event.data.fees.*.amount')]);
    const events = await sweep(0);
    expect(events).toEqual([
      {
        tenantId: 'acme',
        type: 'conformance.drift_detected',
        data: {
          family: 'movement',
          detected_at: at(0).toISOString(),
          window: { from: at(-55).toISOString(), to: at(0).toISOString() },
          received: 400,
          refused: 40,
          refused_share: 0.1,
          baseline: { from: at(-55 - 7 * 1440).toISOString(), to: at(-55).toISOString(), received: 7000, refused: 70, refused_share: 0.01 },
          problems: [
            { code: 'svc:validation/schema', path: 'event.data.amount.value', items: 25 },
            { code: 'svc:validation/schema', path: 'event.data.debit.account_id', items: 12 },
            { code: 'svc:validation/schema', path: 'event.data.fees.*.amount', items: 3 },
          ],
        },
      },
    ]);
    expect(await sweep(1)).toEqual([]);

    // An hour of clean items: conforming again, silently; a new drift is announced anew.
    await addTallies(db.pool, [row('acme', 60, 1000)]);
    expect(await sweep(62)).toEqual([]);
    expect((await db.pool.query(`SELECT drifting FROM conformance_states WHERE tenant_id = 'acme'`)).rows).toEqual([{ drifting: false }]);
    await addTallies(db.pool, [row('acme', 120, 100), refused('acme', 120, 50)]);
    expect((await sweep(121)).map((e) => [e.tenantId, e.type])).toEqual([['acme', 'conformance.drift_detected']]);
  });

  it('keeps quiet about a few stray refusals, and about a feed always refused this much', async () => {
    // Ten of fifty refused (20 %) is a share, but too few items to be a drift.
    await addTallies(db.pool, [row('beta', 0, 40), refused('beta', 0, 10)]);
    expect(await sweep(1)).toEqual([]);
    // A feed refused at 30 % all week: 30 % now is no change.
    const day = 10 * 1440;
    await addTallies(db.pool, [...Array.from({ length: 6 }, (_, d) => [row('beta', day - (d + 1) * 1440, 700), refused('beta', day - (d + 1) * 1440, 300)]).flat(), row('beta', day, 70), refused('beta', day, 30)]);
    expect(await sweep(day + 1)).toEqual([]);
  });

  it('judges afresh a feed that resumes after an hour of silence, and announces it if it drifts', async () => {
    await createTenant(db.pool, 'gamma', 'USD');
    const gamma = (minutes: number, items: number, code = '') => ({ ...row('gamma', minutes, items, code, code === '' ? '' : 'event.data.type'), family: 'party' });
    await addTallies(db.pool, [gamma(0, 380), gamma(0, 20, 'svc:validation/schema')]);
    expect((await sweep(1)).map((e) => [e.tenantId, e.type])).toEqual([['gamma', 'conformance.drift_detected']]);
    // Nothing received since: no longer drifting, and nothing sent for it.
    expect((await sweep(70)).filter((e) => e.tenantId === 'gamma')).toEqual([]);
    expect((await db.pool.query(`SELECT drifting FROM conformance_states WHERE tenant_id = 'gamma'`)).rows).toEqual([{ drifting: false }]);
    // Resumed a day later, far more broken than that hour (now its week): announced anew.
    await addTallies(db.pool, [gamma(1440, 50), gamma(1440, 100, 'svc:validation/schema')]);
    expect((await sweep(1441)).filter((e) => e.tenantId === 'gamma').map((e) => e.type)).toEqual(['conformance.drift_detected']);
  });

  it("stores an item's count whatever its member names hold (a NUL would fail every flush)", async () => {
    const tally = new ConformanceTally();
    const errors = [{ path: 'event.data.a\u0000b', code: 'svc:validation/schema' as const, message: 'unknown member' }];
    tally.note('beta', at(0), [{ value: { object: 'party', event: {} }, prefix: [], errors }]);
    await addTallies(db.pool, tally.take());
    const { rows } = await db.pool.query(`SELECT path, items::int FROM conformance_tallies WHERE tenant_id = 'beta' AND family = 'party'`);
    expect(rows).toEqual([{ path: 'event.data.a\ufffdb', items: 1 }]);
  });

  it('forgets tallies older than the week any window still reads', async () => {
    await addTallies(db.pool, [row('beta', -30 * 1440, 5)]);
    await sweep(0);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM conformance_tallies WHERE bucket < $1`, [at(-8 * 1440)])).rows[0].n).toBe(0);
  });
});

// Expected declarations: a day whose declaration has not arrived when due is announced as
// coverage.degraded, and recovered when it arrives; a day declared in time says nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpectations } from './expectations.ts';
import { problemSchema } from '../../schemas/problem.ts';
import { expectationListSchema, expectationSchema } from '../../schemas/reconciliation-expectations.ts';
import { accountEvent, partyEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { startTestPipeline, type TestPipeline } from '../../test/support/test-pipeline.ts';
import { withTrigger } from '../../test/support/with-trigger.ts';
import { sweepOutbox } from '../../services/webhooks/declared-payloads.test-kit.ts';

let api: TestApi;
let pipeline: TestPipeline;
beforeAll(async () => {
  api = await startTestApi();
  pipeline = await startTestPipeline(api);
  expect((await api.client.post('/v1/parties', partyEvent('party-1'), api.keys.ingest)).statusCode).toBe(202);
  expect((await api.client.post('/v1/accounts', accountEvent('acct-1', 'party-1'), api.keys.ingest)).statusCode).toBe(202);
  await pipeline.drain();
});
afterAll(async () => {
  await pipeline.stop();
  await api.close();
});

const usd = (value: string) => ({ value, asset: 'USD', scale: 2 });
const events = async (type: string) =>
  (await api.db.pool.query(`SELECT data FROM outgoing_events WHERE type = $1 AND data->>'reason' = 'reconciliation_missing' ORDER BY created_at`, [type])).rows.map((r) => r.data);
const declareDay = (day: string) =>
  api.client.post(
    '/v1/reconciliations',
    { scope: { kind: 'account', external_id: 'acct-1' }, direction: 'both', asset: 'USD', period: { from: `${day}T00:00:00Z`, to: new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString() }, declared: { count: 0, sum: usd('0') } },
    api.keys.ingest,
  );

describe('expected declarations', () => {
  it('announces a day whose declaration is late, recovers it when it arrives, and is quiet for a day declared in time', async () => {
    const today = api.clock.now().toISOString().slice(0, 10);
    const created = await api.client.post('/v1/reconciliation-expectations', { scope: { kind: 'account', external_id: 'acct-1' }, asset: 'USD', due_after_minutes: 60 }, api.keys.ingest);
    expect(created.statusCode, created.body).toBe(201);
    const expectation = expectationSchema.parse(created.json());
    const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(expectation).toMatchObject({ cadence: 'daily', due_after_minutes: 60, next_due_at: `${dayAfter(today)}T01:00:00.000Z` });
    const duplicate = await api.client.post('/v1/reconciliation-expectations', { scope: { kind: 'account', external_id: 'acct-1' }, asset: 'USD', due_after_minutes: 5 }, api.keys.ingest);
    expect(problemSchema.parse(duplicate.json())).toMatchObject({ status: 409, code: 'svc:reconciliation/expectation_exists' });
    const unknownAsset = await api.client.post('/v1/reconciliation-expectations', { scope: { kind: 'tenant' }, asset: 'ZZZ', due_after_minutes: 5 }, api.keys.ingest);
    expect(problemSchema.parse(unknownAsset.json()).errors.map((e) => e.path)).toEqual(['asset']);

    // Not due yet: nothing checked.
    expect(await sweepExpectations(api.db.pool, api.clock.now(), 10)).toBe(0);
    // Due, and nothing declared for today: a miss.
    const due = Date.parse(`${dayAfter(today)}T01:00:00Z`) - api.clock.now().getTime();
    api.clock.advance(due / 1000);
    expect(await sweepExpectations(api.db.pool, api.clock.now(), 10)).toBe(1);
    expect(await sweepExpectations(api.db.pool, api.clock.now(), 10)).toBe(0);
    expect(await events('coverage.degraded')).toEqual([
      {
        reason: 'reconciliation_missing',
        expectation_id: expectation.expectation_id,
        scope: { kind: 'account', external_id: 'acct-1' },
        asset: 'USD',
        period: { from: `${today}T00:00:00.000Z`, to: `${dayAfter(today)}T00:00:00.000Z` },
        due_at: `${dayAfter(today)}T01:00:00.000Z`,
      },
    ]);
    // The late declaration recovers it.
    const late = await declareDay(today);
    expect(late.statusCode).toBe(201);
    expect(await events('coverage.recovered')).toEqual([expect.objectContaining({ expectation_id: expectation.expectation_id, reconciliation_id: late.json().reconciliation_id })]);

    // The next day declared in time: checked, nothing announced.
    expect((await declareDay(dayAfter(today))).statusCode).toBe(201);
    api.clock.advance(86_400);
    expect(await sweepExpectations(api.db.pool, api.clock.now(), 10)).toBe(1);
    expect(await events('coverage.degraded')).toHaveLength(1);

    const listed = expectationListSchema.parse((await api.client.get('/v1/reconciliation-expectations', api.keys.read)).json());
    expect(listed.data.map((e) => e.expectation_id)).toEqual([expectation.expectation_id]);
    expect((await api.client.send({ method: 'DELETE', url: `/v1/reconciliation-expectations/${expectation.expectation_id}`, key: api.keys.ingest })).statusCode).toBe(204);
    expect((await api.client.send({ method: 'DELETE', url: `/v1/reconciliation-expectations/${expectation.expectation_id}`, key: api.keys.ingest })).statusCode).toBe(404);
    // No longer expected: a day passing without a declaration says nothing.
    api.clock.advance(86_400);
    expect(await sweepExpectations(api.db.pool, api.clock.now(), 10)).toBe(0);
    expect(await events('coverage.degraded')).toHaveLength(1);
  });

  it('lists by opaque cursor, oldest first, bound to the list and the tenant', async () => {
    const ids: string[] = [];
    for (const party of ['paged-1', 'paged-2', 'paged-3']) {
      const created = await api.client.post('/v1/reconciliation-expectations', { scope: { kind: 'party', external_id: party }, asset: 'USD', due_after_minutes: 30 }, api.keys.ingest);
      expect(created.statusCode, created.body).toBe(201);
      ids.push(expectationSchema.parse(created.json()).expectation_id);
    }
    // Created in one instant of the test's clock: in id order.
    const ordered = [...ids].sort();
    try {
      const first = expectationListSchema.parse((await api.client.get('/v1/reconciliation-expectations?limit=2', api.keys.read)).json());
      expect(first.data.map((e) => e.expectation_id)).toEqual(ordered.slice(0, 2));
      expect(first.has_more).toBe(true);
      const cursor = encodeURIComponent(first.next_cursor!);
      const second = expectationListSchema.parse((await api.client.get(`/v1/reconciliation-expectations?limit=2&cursor=${cursor}`, api.keys.read)).json());
      expect(second).toEqual({ data: [expect.objectContaining({ expectation_id: ordered[2] })], has_more: false });
      // A cursor of another list is refused.
      const reconciliations = (await api.client.get('/v1/reconciliations?limit=1', api.keys.read)).json();
      expect(reconciliations.next_cursor).toBeDefined();
      const foreign = await api.client.get(`/v1/reconciliation-expectations?cursor=${encodeURIComponent(reconciliations.next_cursor)}`, api.keys.read);
      expect(problemSchema.parse(foreign.json())).toMatchObject({ status: 400, code: 'svc:request/invalid_parameter', errors: [{ path: 'cursor' }] });
    } finally {
      for (const id of ids) await api.client.send({ method: 'DELETE', url: `/v1/reconciliation-expectations/${id}`, key: api.keys.ingest });
    }
  });

  it('goes on checking the others when one expectation cannot be checked', async () => {
    const expect_ = async (scope: Record<string, string>) =>
      expectationSchema.parse((await api.client.post('/v1/reconciliation-expectations', { scope, asset: 'USD', due_after_minutes: 0 }, api.keys.ingest)).json()).expectation_id;
    const failing = await expect_({ kind: 'party', external_id: 'party-1' });
    const other = await expect_({ kind: 'tenant' });
    const bare = (id: string) => id.slice('rce_'.length);
    // The failing one is due first, and its check fails whenever it is tried.
    await api.db.pool.query(`UPDATE reconciliation_expectations SET next_due_at = next_due_at - interval '1 minute' WHERE expectation_id = $1`, [bare(failing)]);
    const refuse = `IF NEW.expectation_id = '${bare(failing)}' THEN RAISE EXCEPTION 'cannot record the miss'; END IF;`;
    await withTrigger(api.db.pool, { table: 'reconciliation_expectation_misses', before: 'INSERT' }, refuse, async () => {
      api.clock.advance(2 * 86_400);
      const errors: unknown[] = [];
      expect(await sweepExpectations(api.db.pool, api.clock.now(), 10, (error) => errors.push(error))).toBe(2);
      expect(errors.map((e) => (e as Error).message)).toEqual(['cannot record the miss']);
      const misses = async (id: string) => (await api.db.pool.query('SELECT day::text FROM reconciliation_expectation_misses WHERE expectation_id = $1 ORDER BY day', [bare(id)])).rows.length;
      // The other's two missed days are recorded; the failing one is still owed its first.
      expect(await misses(other)).toBe(2);
      expect(await misses(failing)).toBe(0);
    }).finally(async () => {
      for (const id of [failing, other]) await api.client.send({ method: 'DELETE', url: `/v1/reconciliation-expectations/${id}`, key: api.keys.ingest });
    });
  });

  describe('a scope and asset checked by the sweep and declared at once', () => {
    const declare = (day: string, extra: Record<string, unknown> = {}) =>
      api.client.post(
        '/v1/reconciliations',
        {
          scope: { kind: 'party', external_id: 'party-1' },
          direction: 'both',
          asset: 'USD',
          period: { from: `${day}T00:00:00Z`, to: new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString() },
          declared: { count: 0, sum: usd('0') },
          ...extra,
        },
        api.keys.ingest,
      );
    const expectParty = async () => {
      const created = await api.client.post('/v1/reconciliation-expectations', { scope: { kind: 'party', external_id: 'party-1' }, asset: 'USD', due_after_minutes: 0 }, api.keys.ingest);
      expect(created.statusCode, created.body).toBe(201);
      return expectationSchema.parse(created.json()).expectation_id;
    };
    const missesOf = async (id: string) =>
      (await api.db.pool.query('SELECT day::text AS day, recovered_by IS NOT NULL AS recovered FROM reconciliation_expectation_misses WHERE expectation_id = $1', [id.slice('rce_'.length)])).rows;

    it('never leaves a day missed when the declaration commits while the sweep records the miss', async () => {
      const today = api.clock.now().toISOString().slice(0, 10);
      const id = await expectParty();
      api.clock.advance(86_400 + 1);
      const gate = await api.db.pool.connect();
      const GATE = 0x7e57;
      try {
        await gate.query('SELECT pg_advisory_lock($1)', [GATE]);
        // The sweep has found no declaration and waits just before it records the miss.
        const hold = `PERFORM pg_advisory_lock(${GATE}); PERFORM pg_advisory_unlock(${GATE});`;
        await withTrigger(api.db.pool, { table: 'reconciliation_expectation_misses', before: 'INSERT' }, hold, async () => {
          const swept = sweepExpectations(api.db.pool, api.clock.now(), 1);
          for (let i = 0; i < 200; i++) {
            const { rows } = await api.db.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO reconciliation_expectation_misses%'`,
            );
            if (rows.length > 0) break;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
          // The declaration of that day arrives meanwhile: it waits for the sweep (or, without a
          // shared lock, commits first and looks for a miss not yet written).
          const declared = declare(today);
          await Promise.race([declared, new Promise((resolve) => setTimeout(resolve, 500))]);
          await gate.query('SELECT pg_advisory_unlock($1)', [GATE]);
          expect(await swept).toBe(1);
          expect((await declared).statusCode).toBe(201);
        });
        expect(await missesOf(id)).toEqual([{ day: today, recovered: true }]);
      } finally {
        gate.release();
        await api.client.send({ method: 'DELETE', url: `/v1/reconciliation-expectations/${id}`, key: api.keys.ingest });
      }
    });

    it('counts only a whole declaration as covering a day, and recovers no miss of a deleted expectation', async () => {
      const today = api.clock.now().toISOString().slice(0, 10);
      const id = await expectParty();
      try {
        // Declared in time, but only money in, or only wires: the day is still missed.
        expect((await declare(today, { direction: 'in' })).statusCode).toBe(201);
        expect((await declare(today, { filters: { types: ['wire'] } })).statusCode).toBe(201);
        api.clock.advance(86_400 + 1);
        expect(await sweepExpectations(api.db.pool, api.clock.now(), 1)).toBe(1);
        expect(await missesOf(id)).toEqual([{ day: today, recovered: false }]);
      } finally {
        await api.client.send({ method: 'DELETE', url: `/v1/reconciliation-expectations/${id}`, key: api.keys.ingest });
      }
      // The customer no longer expects it: a whole declaration now recovers nothing.
      expect((await declare(today)).statusCode).toBe(201);
      expect(await missesOf(id)).toEqual([{ day: today, recovered: false }]);
    });
  });
});

// Runs last: every event the expectations enqueued, swept from the outbox.
it('every event the expectations enqueued parses with its type\'s declared payload', async () => {
  const swept = await sweepOutbox(api.db.pool);
  expect(swept.refused).toEqual([]);
  expect(swept.types).toEqual(expect.arrayContaining(['coverage.degraded', 'coverage.recovered']));
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANONICAL, RECONCILE } from '../../../pipelines/groups.ts';
import { markStale, recheckStale, startReconcilePipeline } from '../../../pipelines/reconcile/pipeline.ts';
import { Reconciliations } from '../../reconciliations/reconciliations.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { problemSchema } from '../../../schemas/problem.ts';
import { reconciliationPageSchema, reconciliationSchema } from '../../../schemas/reconciliations.ts';
import type { MOVEMENT_STATUSES } from '../../../schemas/families/movement.ts';
import { accountEvent, movementEvent, partyEvent } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { drain, startTestPipeline, type TestPipeline } from '../../../test/support/test-pipeline.ts';

let api: TestApi;
let pipeline: TestPipeline;
beforeAll(async () => {
  api = await startTestApi();
  pipeline = await startTestPipeline(api);
  for (const [path, event] of [
    ['/v1/parties', partyEvent('party-1')],
    ['/v1/parties', partyEvent('party-2')],
    ['/v1/accounts', accountEvent('acct-1', 'party-1')],
    ['/v1/accounts', accountEvent('acct-2', 'party-2')],
  ] as const) {
    expect((await api.client.post(path, event, api.keys.ingest)).statusCode).toBe(202);
  }
  await send('mv-1', '2026-08-01T10:00:00Z', '10000');
  await send('mv-2', '2026-08-15T10:00:00Z', '2550', 'pending');
  await send('mv-3', '2026-09-01T00:00:00Z', '999');
  await pipeline.drain();
});
afterAll(async () => {
  await pipeline.stop();
  await api.close();
});

async function send(id: string, at: string, value: string, status: (typeof MOVEMENT_STATUSES)[number] = 'completed', debitAccount = 'acct-1') {
  const event = movementEvent(id);
  event.occurred_at = at;
  event.data.status = status;
  event.data.amount = { value, asset: 'USD', scale: 2 };
  event.data.debit = { account_id: debitAccount, party_id: 'party-1' };
  delete (event.data as Record<string, unknown>).fees;
  expect((await api.client.post('/v1/movements', event, api.keys.ingest)).statusCode).toBe(202);
}

const august = { from: '2026-08-01T00:00:00Z', to: '2026-09-01T00:00:00Z' };
const declare = (body: Record<string, unknown>, headers?: Record<string, string>) =>
  api.client.post('/v1/reconciliations', { scope: { kind: 'account', external_id: 'acct-1' }, direction: 'out', asset: 'USD', period: august, ...body }, api.keys.ingest, headers);
const usd = (value: string) => ({ value, asset: 'USD', scale: 2 });

describe('reconciliations', () => {
  it('matches a declaration that agrees with the movements held, bounds as stated', async () => {
    const res = await declare({ declared: { count: 2, sum: usd('12550'), statuses: { completed: 1, pending: 1 } } });
    expect(res.statusCode).toBe(201);
    const view = reconciliationSchema.parse(res.json());
    expect(view).toMatchObject({
      status: 'matched',
      scope: { kind: 'account', external_id: 'acct-1' },
      period: { from: '2026-08-01T00:00:00.000Z', to: '2026-09-01T00:00:00.000Z', from_inclusive: true, to_inclusive: false },
      result: { status: 'matched', observed: { count: 2, sum: usd('12550'), statuses: { completed: 1, pending: 1 } }, explanation: { count_difference: 0, sum_difference: usd('0'), unsettled: [] } },
      corrects: null,
    });
    expect(view.history).toHaveLength(1);
    // The upper bound made inclusive takes in the movement at 2026-09-01T00:00:00Z.
    const inclusive = reconciliationSchema.parse((await declare({ period: { ...august, to_inclusive: true }, declared: { count: 3, sum: usd('13549'), statuses: { completed: 2, pending: 1 } } })).json());
    expect(inclusive.status).toBe('matched');
    // Party scope, incoming side: party-2 received all three.
    const party = await api.client.post(
      '/v1/reconciliations',
      { scope: { kind: 'party', external_id: 'party-2' }, direction: 'in', asset: 'USD', period: august, declared: { count: 2, sum: usd('12550'), statuses: { completed: 1, pending: 1 } } },
      api.keys.ingest,
    );
    expect(reconciliationSchema.parse(party.json()).status).toBe('matched');
  });

  it('explains a mismatch by the held movements of the period, and flips when they land', async () => {
    // mv-4 names an account the service has not received: it is held.
    await send('mv-4', '2026-08-20T10:00:00Z', '500', 'completed', 'acct-9');
    await pipeline.drain();
    const res = await api.client.post(
      '/v1/reconciliations',
      { scope: { kind: 'tenant' }, direction: 'both', asset: 'USD', period: august, declared: { count: 3, sum: usd('13050'), statuses: { completed: 2, pending: 1 } } },
      api.keys.ingest,
    );
    const view = reconciliationSchema.parse(res.json());
    expect(view.result).toMatchObject({
      status: 'mismatched',
      observed: { count: 2, sum: usd('12550') },
      explanation: { count_difference: -1, sum_difference: usd('-500'), unsettled: [{ reason: 'held', count: 1, sample: [{ external_id: 'mv-4', occurred_at: '2026-08-20T10:00:00.000Z' }] }] },
    });

    // The account arrives, the held movement lands, and its change record makes the comparison run again.
    expect((await api.client.post('/v1/accounts', accountEvent('acct-9', 'party-1'), api.keys.ingest)).statusCode).toBe(202);
    await pipeline.drain();
    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-08-20T10:00:00Z' }]);
    api.clock.advance(60);
    expect(await recheckStale(new Reconciliations(api.db.pool), api.clock, 100)).toBeGreaterThanOrEqual(1);

    const after = reconciliationSchema.parse((await api.client.get(`/v1/reconciliations/${view.reconciliation_id}`, api.keys.read)).json());
    expect(after.status).toBe('matched');
    expect(after.history!.map((r) => r.status)).toEqual(['mismatched', 'matched']);
    const { rows } = await api.db.pool.query(`SELECT type, data FROM outgoing_events WHERE type = 'coverage.recovered'`);
    expect(rows.map((r) => r.data)).toContainEqual(expect.objectContaining({ reason: 'reconciliation', reconciliation_id: view.reconciliation_id, status: 'matched' }));
  });

  it('a late movement breaks a match, recorded as a new result, and a correction is a new declaration', async () => {
    const first = reconciliationSchema.parse((await declare({ period: { from: '2026-07-01T00:00:00Z', to: '2026-08-01T00:00:00Z' }, declared: { count: 0, sum: usd('0') } })).json());
    expect(first.status).toBe('matched');
    await send('mv-late', '2026-07-10T00:00:00Z', '700');
    await pipeline.drain();
    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-07-10T00:00:00Z' }]);
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 100);
    // Nothing changed for this one since: comparing again appends nothing.
    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-07-10T00:00:00Z' }]);
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 100);
    const broken = reconciliationSchema.parse((await api.client.get(`/v1/reconciliations/${first.reconciliation_id}`, api.keys.ingest)).json());
    expect(broken.history!.map((r) => [r.status, r.observed.count])).toEqual([['matched', 0], ['mismatched', 1]]);

    const corrected = await declare({ period: { from: '2026-07-01T00:00:00Z', to: '2026-08-01T00:00:00Z' }, declared: { count: 1, sum: usd('700') }, corrects: first.reconciliation_id });
    expect(reconciliationSchema.parse(corrected.json())).toMatchObject({ status: 'matched', corrects: first.reconciliation_id });
  });

  it('the reconcile pipeline compares again when a movement of the period is canonicalised', async () => {
    const declared = reconciliationSchema.parse((await declare({ period: { from: '2026-06-01T00:00:00Z', to: '2026-07-01T00:00:00Z' }, declared: { count: 1, sum: usd('42') } })).json());
    expect(declared.status).toBe('mismatched');
    const reconcile = await startReconcilePipeline({ bus: pipeline.bus, pool: api.db.pool, clock: api.clock });
    const history = async () =>
      reconciliationSchema.parse((await api.client.get(`/v1/reconciliations/${declared.reconciliation_id}`, api.keys.ingest)).json()).history!.map((r) => r.status);
    try {
      await send('mv-june', '2026-06-15T00:00:00Z', '42');
      await drain(pipeline.bus, [], [CANONICAL, RECONCILE]);
      // Marked by the consumer; compared again by the pipeline's timer.
      for (let i = 0; i < 100 && (await history()).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await reconcile.stop();
    }
    expect(await history()).toEqual(['mismatched', 'matched']);
  });

  it('refuses an asset the scope does not hold, unknown subjects, bad declarations and an Idempotency-Key', async () => {
    const eur = await declare({ asset: 'EUR', declared: { count: 0, sum: { value: '0', asset: 'EUR', scale: 2 } } });
    expect(eur.statusCode).toBe(400);
    expect(problemSchema.parse(eur.json())).toMatchObject({ code: 'svc:reconciliation/asset_not_held', errors: [{ path: 'asset' }] });
    expect(problemSchema.parse((await declare({ scope: { kind: 'account', external_id: 'nobody' }, declared: { count: 0, sum: usd('0') } })).json()).code).toBe('svc:resource/not_found');
    expect(problemSchema.parse((await declare({ declared: { count: 0, sum: { value: '0', asset: 'USD', scale: 3 } } })).json()).code).toBe('svc:validation/money_scale_mismatch');
    const mismatchedAsset = problemSchema.parse((await declare({ declared: { count: 0, sum: { value: '0', asset: 'EUR', scale: 2 } } })).json());
    expect(mismatchedAsset.errors.map((e) => e.path)).toEqual(['declared.sum.asset']);
    const tenantDirection = await api.client.post('/v1/reconciliations', { scope: { kind: 'tenant' }, direction: 'in', asset: 'USD', period: august, declared: { count: 0, sum: usd('0') } }, api.keys.ingest);
    expect(problemSchema.parse(tenantDirection.json()).errors.map((e) => e.path)).toEqual(['direction']);
    const unknownMember = problemSchema.parse((await declare({ declared: { count: 0, sum: usd('0') }, extra: true })).json());
    expect(unknownMember.errors.map((e) => e.path)).toEqual(['extra']);
    // A year, leap day included, at most: every change in the period compares the whole period again.
    const leapYear = await declare({ period: { from: '2028-01-01T00:00:00Z', to: '2029-01-01T00:00:00Z', to_inclusive: true }, declared: { count: 0, sum: usd('0') } });
    expect(leapYear.statusCode, leapYear.body).toBe(201);
    const decade = await declare({ period: { from: '2020-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' }, declared: { count: 0, sum: usd('0') } });
    expect(decade.statusCode).toBe(400);
    expect(problemSchema.parse(decade.json())).toMatchObject({ code: 'svc:validation/schema', errors: [{ path: 'period.to', code: 'svc:validation/schema', message: 'must be at most 366 days after period.from' }] });

    // A period holding no instant is refused; one instant with both bounds inclusive is a period.
    const empty = await declare({ period: { from: '2026-08-10T00:00:00Z', to: '2026-08-10T00:00:00.000+00:00' }, declared: { count: 0, sum: usd('0') } });
    expect(empty.statusCode).toBe(400);
    expect(problemSchema.parse(empty.json())).toMatchObject({ code: 'svc:validation/schema', errors: [{ path: 'period.to', code: 'svc:validation/schema' }] });
    const instant = await declare({ period: { from: '2026-08-10T00:00:00Z', to: '2026-08-10T00:00:00Z', to_inclusive: true }, declared: { count: 0, sum: usd('0') } });
    expect(instant.statusCode, instant.body).toBe(201);

    const { rows: before } = await api.db.pool.query(`SELECT count(*)::int AS n FROM reconciliations`);
    const keyed = await declare({ declared: { count: 0, sum: usd('0') } }, { 'idempotency-key': 'k-1' });
    expect(keyed.statusCode).toBe(400);
    expect(problemSchema.parse(keyed.json()).code).toBe('svc:request/bad_request');
    const { rows: after } = await api.db.pool.query(`SELECT count(*)::int AS n FROM reconciliations`);
    expect(after[0].n).toBe(before[0].n);
    expect((await api.client.get('/v1/reconciliations', api.keys.compliance)).statusCode).toBe(403);
  });

  it('lists with filters and a cursor, within the tenant only', async () => {
    const all = reconciliationPageSchema.parse((await api.client.get('/v1/reconciliations?limit=2', api.keys.read)).json());
    expect(all.data).toHaveLength(2);
    expect(all.has_more).toBe(true);
    const next = reconciliationPageSchema.parse((await api.client.get(`/v1/reconciliations?limit=2&cursor=${all.next_cursor}`, api.keys.read)).json());
    expect(next.data.map((r) => r.reconciliation_id)).not.toContain(all.data[0]!.reconciliation_id);
    const mismatched = reconciliationPageSchema.parse((await api.client.get('/v1/reconciliations?status=mismatched', api.keys.read)).json());
    expect(mismatched.data.every((r) => r.status === 'mismatched')).toBe(true);
    expect(mismatched.data.length).toBeGreaterThan(0);
    const parties = reconciliationPageSchema.parse((await api.client.get('/v1/reconciliations?subject=party-2&subject_kind=party', api.keys.read)).json());
    expect(parties.data.map((r) => r.scope)).toEqual([{ kind: 'party', external_id: 'party-2' }]);
    // June up to July (exclusive) and June up to July's first instant (inclusive).
    const juneThrough = reconciliationSchema.parse(
      (await declare({ period: { from: '2026-06-01T00:00:00Z', to: '2026-07-01T00:00:00Z', to_inclusive: true }, declared: { count: 1, sum: usd('42') } })).json(),
    );
    const julyOn = (from: string) =>
      api.client.get(`/v1/reconciliations?from=${from}&to=2026-07-15T00:00:00Z&limit=200`, api.keys.read).then((res) => reconciliationPageSchema.parse(res.json()));
    const july = await julyOn('2026-07-01T00:00:00Z');
    // Periods holding an instant of the window, by their own bounds.
    expect(july.data.length).toBeGreaterThan(0);
    const at = (r: { period: { from: string; to: string; from_inclusive: boolean; to_inclusive: boolean } }) =>
      (r.period.to > '2026-07-01T00:00:00.000Z' || (r.period.to === '2026-07-01T00:00:00.000Z' && r.period.to_inclusive)) && r.period.from <= '2026-07-15T00:00:00.000Z';
    expect(july.data.every(at)).toBe(true);
    const ids = july.data.map((r) => r.reconciliation_id);
    expect(ids).toContain(juneThrough.reconciliation_id);
    const exclusiveJune = (await julyOn('2026-06-30T00:00:00Z')).data.filter((r) => r.period.to === '2026-07-01T00:00:00.000Z' && !r.period.to_inclusive);
    expect(exclusiveJune.length).toBeGreaterThan(0);
    for (const r of exclusiveJune) expect(ids).not.toContain(r.reconciliation_id);
    expect(problemSchema.parse((await api.client.get('/v1/reconciliations?status=maybe', api.keys.read)).json()).code).toBe('svc:request/invalid_parameter');

    await createTenant(api.db.pool, 'hooli', 'USD');
    const stranger = await api.issue('hooli', 'read');
    expect((await api.client.get('/v1/reconciliations', stranger)).json()).toEqual({ data: [], has_more: false });
    expect(problemSchema.parse((await api.client.get(`/v1/reconciliations/${all.data[0]!.reconciliation_id}`, stranger)).json()).code).toBe('svc:resource/not_found');
  });
});

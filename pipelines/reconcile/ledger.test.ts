// Reconciliations as a bank's operations team uses them: ledger semantics of the totals,
// statuses counted and summed, tolerance, breaks worked to resolution, every difference item (and
// CSV), the first mismatch announced, safe retries by customer reference, basis and filters, and
// re-comparison marking only the declarations a movement can change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markStale, recheckStale, touchOf, withOriginals } from './pipeline.ts';
import { Reconciliations } from '../../services/reconciliations/reconciliations.ts';
import { problemSchema } from '../../schemas/problem.ts';
import { breakPageSchema, breakSchema, differenceItemPageSchema } from '../../schemas/reconciliation-breaks.ts';
import { reconciliationSchema } from '../../schemas/reconciliations.ts';
import { accountEvent, movementEvent, partyEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { startTestPipeline, type TestPipeline } from '../../test/support/test-pipeline.ts';
import { withTrigger } from '../../test/support/with-trigger.ts';
import { sweepOutbox } from '../../services/webhooks/declared-payloads.test-kit.ts';

let api: TestApi;
let pipeline: TestPipeline;

interface Sent {
  asset?: string;
  status?: string;
  type?: string;
  rail?: string;
  links?: Record<string, string>;
  debit?: string;
  credit?: string;
}

async function send(id: string, at: string, value: string, options: Sent = {}) {
  const event = movementEvent(id);
  event.occurred_at = at;
  const data = event.data as Record<string, unknown>;
  data.status = options.status ?? 'completed';
  data.type = options.type ?? 'p2p';
  data.amount = { value, asset: options.asset ?? 'USD', scale: 2 };
  data.debit = { account_id: options.debit ?? 'acct-1' };
  data.credit = { account_id: options.credit ?? 'acct-2', counterparty: { institution: 'Bank B' } };
  if (options.rail) data.rail = options.rail;
  if (options.links) data.links = options.links;
  delete data.fees;
  const res = await api.client.post('/v1/movements', event, api.keys.ingest);
  expect(res.statusCode, res.body).toBe(202);
}

beforeAll(async () => {
  api = await startTestApi();
  pipeline = await startTestPipeline(api);
  for (const [path, event] of [
    ['/v1/parties', partyEvent('party-1')],
    ['/v1/parties', partyEvent('party-2')],
    ['/v1/parties', partyEvent('party-3')],
    ['/v1/accounts', accountEvent('acct-1', 'party-1')],
    ['/v1/accounts', accountEvent('acct-2', 'party-2')],
    ['/v1/accounts', accountEvent('acct-3', 'party-3')],
  ] as const) {
    expect((await api.client.post(path, event, api.keys.ingest)).statusCode).toBe(202);
  }
  // The issue's day (1 May): a movement and its correction, a reversal pair, a failed movement.
  await send('may-1', '2026-05-01T09:00:00Z', '1000');
  await send('may-1-fix', '2026-05-01T10:00:00Z', '1100', { links: { correction_of: 'may-1' } });
  await send('may-2', '2026-05-01T11:00:00Z', '500');
  await send('may-2-rev', '2026-05-01T12:00:00Z', '500', { type: 'reversal', links: { reverses: 'may-2' }, debit: 'acct-2', credit: 'acct-1' });
  await send('may-3', '2026-05-01T13:00:00Z', '777', { status: 'failed' });
  await pipeline.drain();
});
afterAll(async () => {
  await pipeline.stop();
  await api.close();
});

const usd = (value: string) => ({ value, asset: 'USD', scale: 2 });
const may1 = { from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' };
const declare = (body: Record<string, unknown>) =>
  api.client.post('/v1/reconciliations', { scope: { kind: 'account', external_id: 'acct-1' }, direction: 'out', asset: 'USD', period: may1, ...body }, api.keys.ingest);
const view = async (body: Record<string, unknown>) => {
  const res = await declare(body);
  expect(res.statusCode, res.body).toBe(201);
  return reconciliationSchema.parse(res.json());
};
const outgoing = async (type: string, id: string) =>
  (await api.db.pool.query(`SELECT data FROM outgoing_events WHERE type = $1 AND data->>'reconciliation_id' = $2`, [type, id])).rows.map((r) => r.data);

describe('totals with ledger semantics', () => {
  it('a correction supersedes, a reversal pair nets to nothing, a failed movement is not counted: 1 movement, 11.00', async () => {
    const matched = await view({ declared: { count: 1, sum: usd('1100') } });
    expect(matched.status).toBe('matched');
    expect(matched.counted_statuses).toEqual(['completed']);
    expect(matched.result.observed).toMatchObject({ count: 1, sum: usd('1100'), statuses: { completed: 1, failed: 1 }, status_sums: { completed: usd('1100'), failed: usd('777') }, base_sum: usd('1100') });
    // The same day with failed movements counted, with a count and a sum for each status.
    const both = await view({ declared: { count: 2, sum: usd('1877'), statuses: { completed: { count: 1, sum: usd('1100') }, failed: { count: 1, sum: usd('777') } } } });
    expect(both).toMatchObject({ status: 'matched', counted_statuses: ['completed', 'failed'], declared: { statuses: { completed: 1, failed: 1 }, status_sums: { failed: usd('777') } } });
    // A per-status sum that disagrees is a mismatch even when the totals agree.
    const wrongStatusSum = await view({ declared: { count: 2, sum: usd('1877'), statuses: { completed: { count: 1, sum: usd('1000') }, failed: { count: 1, sum: usd('877') } } } });
    expect(wrongStatusSum.status).toBe('mismatched');
  });

  it('a reversal whose original lies in an earlier period nets against that period\'s total', async () => {
    await send('apr-30', '2026-04-30T10:00:00Z', '300');
    await send('apr-30-rev', '2026-05-02T10:00:00Z', '300', { type: 'reversal', links: { reverses: 'apr-30' }, debit: 'acct-2', credit: 'acct-1' });
    await pipeline.drain();
    const may2 = await view({ period: { from: '2026-05-02T00:00:00Z', to: '2026-05-03T00:00:00Z' }, declared: { count: 1, sum: usd('-300') } });
    expect(may2.status).toBe('matched');
    const september30 = await view({ period: { from: '2026-04-30T00:00:00Z', to: '2026-05-01T00:00:00Z' }, declared: { count: 1, sum: usd('300') } });
    expect(september30.status).toBe('matched');
    // A reversal leg may be sent negative (the spec's Money rule): it still takes the money back.
    await send('apr-29', '2026-04-29T10:00:00Z', '400');
    await send('apr-29-rev', '2026-05-03T10:00:00Z', '-400', { type: 'reversal', links: { reverses: 'apr-29' }, debit: 'acct-2', credit: 'acct-1' });
    await pipeline.drain();
    const may3 = await view({ period: { from: '2026-05-03T00:00:00Z', to: '2026-05-04T00:00:00Z' }, declared: { count: 1, sum: usd('-400') } });
    expect(may3.result.observed).toMatchObject({ count: 1, sum: usd('-400') });
    expect(may3.status).toBe('matched');
  });

  it('a partial reversal in the same period nets against its original instead of cancelling it', async () => {
    await send('jun-9', '2026-06-09T09:00:00Z', '500');
    await send('jun-9-rev', '2026-06-09T10:00:00Z', '200', { type: 'reversal', links: { reverses: 'jun-9' }, debit: 'acct-2', credit: 'acct-1' });
    await pipeline.drain();
    const jun9 = await view({ period: { from: '2026-06-09T00:00:00Z', to: '2026-06-10T00:00:00Z' }, declared: { count: 2, sum: usd('300') } });
    expect(jun9.result.observed).toMatchObject({ count: 2, sum: usd('300') });
    expect(jun9.status).toBe('matched');
  });

  it('refuses per-status figures that do not add up to the totals', async () => {
    const res = await declare({ declared: { count: 3, sum: usd('1877'), statuses: { completed: { count: 1, sum: usd('1100') }, failed: { count: 1, sum: usd('777') } } } });
    expect(res.statusCode).toBe(400);
    expect(problemSchema.parse(res.json()).errors.map((e) => e.path)).toEqual(['declared.count']);
    const sums = await declare({ declared: { count: 2, sum: usd('1'), statuses: { completed: { count: 1, sum: usd('1100') }, failed: { count: 1, sum: usd('777') } } } });
    expect(problemSchema.parse(sums.json()).errors.map((e) => e.path)).toEqual(['declared.sum.value']);
    const scale = await declare({ declared: { count: 1, sum: usd('1100'), statuses: { completed: { count: 1, sum: { value: '1100', asset: 'USD', scale: 3 } } } } });
    expect(problemSchema.parse(scale.json()).code).toBe('svc:validation/money_scale_mismatch');
  });
});

describe('tolerance', () => {
  it('matches within an absolute or a relative threshold, showing the difference, and not beyond', async () => {
    const absolute = await view({ declared: { count: 1, sum: usd('1105') }, tolerance: { sum_minor: '5' } });
    expect(absolute).toMatchObject({ status: 'matched', tolerance: { sum_minor: '5', count: 0 }, result: { explanation: { sum_difference: usd('-5'), within_tolerance: true } } });
    expect((await view({ declared: { count: 1, sum: usd('1106') }, tolerance: { sum_minor: '5' } })).status).toBe('mismatched');
    // 100 bps of 11.10 is 0.111: a 0.10 difference is within, 0.12 is not.
    expect((await view({ declared: { count: 1, sum: usd('1110') }, tolerance: { sum_bps: 100 } })).status).toBe('matched');
    expect((await view({ declared: { count: 1, sum: usd('1112') }, tolerance: { sum_bps: 100 } })).status).toBe('mismatched');
    expect((await view({ declared: { count: 2, sum: usd('1100') }, tolerance: { count: 1 } })).status).toBe('matched');
    const both = await declare({ declared: { count: 1, sum: usd('1100') }, tolerance: { sum_minor: '1', sum_bps: 1 } });
    expect(problemSchema.parse(both.json()).errors.map((e) => e.path)).toEqual(['tolerance']);
  });
});

describe('breaks and notice', () => {
  it('a declaration mismatched from the start is announced and opens a break, worked to resolution', async () => {
    const mismatched = await view({ declared: { count: 1, sum: usd('1000') } });
    expect(mismatched.status).toBe('mismatched');
    expect(await outgoing('coverage.degraded', mismatched.reconciliation_id)).toEqual([
      { reason: 'reconciliation', reconciliation_id: mismatched.reconciliation_id, status: 'mismatched', count_difference: 0, sum_difference: usd('100'), asset: 'USD' },
    ]);
    const open = breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${mismatched.reconciliation_id}`, api.keys.read)).json());
    expect(open.data).toHaveLength(1);
    const opened = open.data[0]!;
    expect(opened).toMatchObject({ state: 'open', opened_difference: { count: 0, sum: usd('100') }, acknowledged: null, resolved: null });

    const act = (action: string, body: unknown) => api.client.post(`/v1/reconciliation-breaks/${opened.break_id}/${action}`, body, api.keys.ingest);
    api.clock.advance(60);
    const acknowledged = breakSchema.parse((await act('acknowledge', { note: 'looking at the correction of may-1' })).json());
    expect(acknowledged).toMatchObject({ state: 'acknowledged', acknowledged: { by: expect.stringMatching(/^api_key:/), at: api.clock.now().toISOString() } });
    expect(acknowledged.comments.map((c) => c.body)).toEqual(['looking at the correction of may-1']);
    const again = await act('acknowledge', {});
    expect(again.statusCode).toBe(409);
    expect(problemSchema.parse(again.json()).code).toBe('svc:reconciliation/break_state');
    expect(breakSchema.parse((await act('comments', { body: 'our file missed the correction' })).json()).comments).toHaveLength(2);
    expect((await act('comments', {})).statusCode).toBe(400);
    expect((await api.client.post(`/v1/reconciliation-breaks/${opened.break_id}/resolve`, { resolution: 'x' }, api.keys.read)).statusCode).toBe(403);
    const resolved = breakSchema.parse((await act('resolve', { resolution: 'declared again with the correction' })).json());
    expect(resolved).toMatchObject({ state: 'resolved', resolved: { by: acknowledged.acknowledged!.by, resolution: 'declared again with the correction' } });
    expect((await act('resolve', { resolution: 'twice' })).statusCode).toBe(409);
    const resolvedList = breakPageSchema.parse((await api.client.get('/v1/reconciliation-breaks?state=resolved', api.keys.read)).json());
    expect(resolvedList.data.map((b) => b.break_id)).toContain(opened.break_id);
    expect((await api.client.get('/v1/reconciliation-breaks/rbk_00000000-0000-7000-8000-000000000000', api.keys.read)).statusCode).toBe(404);
  });

  it('an acknowledgement whose note cannot be written is not made, so its retry keeps the note', async () => {
    const mismatched = await view({ declared: { count: 1, sum: usd('999') } });
    const [opened] = breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${mismatched.reconciliation_id}`, api.keys.read)).json()).data;
    const acknowledge = () => api.client.post(`/v1/reconciliation-breaks/${opened!.break_id}/acknowledge`, { note: 'the bank confirmed a late file' }, api.keys.ingest);
    await withTrigger(api.db.pool, { table: 'reconciliation_break_comments', before: 'INSERT' }, `RAISE EXCEPTION 'comments away';`, async () => {
      expect((await acknowledge()).statusCode).toBeGreaterThanOrEqual(500);
    });
    const still = breakSchema.parse((await api.client.get(`/v1/reconciliation-breaks/${opened!.break_id}`, api.keys.read)).json());
    expect(still).toMatchObject({ state: 'open', acknowledged: null, comments: [] });
    const retried = breakSchema.parse((await acknowledge()).json());
    expect(retried).toMatchObject({ state: 'acknowledged' });
    expect(retried.comments.map((c) => c.body)).toEqual(['the bank confirmed a late file']);
  });

  it('a break closes itself when its reconciliation matches again, and one corrected is resolved as superseded', async () => {
    const mar = { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' };
    const early = await view({ period: mar, declared: { count: 1, sum: usd('4200') } });
    expect(early.status).toBe('mismatched');
    await send('mar-1', '2026-03-01T10:00:00Z', '4200');
    await pipeline.drain();
    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-03-01T10:00:00Z' }]);
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 100);
    const [closed] = breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${early.reconciliation_id}`, api.keys.read)).json()).data;
    expect(closed).toMatchObject({ state: 'resolved', resolved: { by: 'system', resolution: 'matched on re-comparison' } });
    expect(await outgoing('coverage.recovered', early.reconciliation_id)).toHaveLength(1);

    const wrong = await view({ period: mar, declared: { count: 1, sum: usd('1') } });
    const fixed = await view({ period: mar, declared: { count: 1, sum: usd('4200') }, corrects: wrong.reconciliation_id });
    expect(fixed.status).toBe('matched');
    const [superseded] = breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${wrong.reconciliation_id}`, api.keys.read)).json()).data;
    expect(superseded).toMatchObject({ state: 'resolved', resolved: { by: 'system', resolution: `superseded by correction ${fixed.reconciliation_id}` } });
  });

  it('takes a second correction of one declaration as replacing the first, also when both come at once', async () => {
    const apr = { from: '2026-04-01T00:00:00Z', to: '2026-04-02T00:00:00Z' };
    const wrong = await view({ period: apr, declared: { count: 1, sum: usd('1') } });
    const first = await view({ period: apr, declared: { count: 1, sum: usd('2') }, corrects: wrong.reconciliation_id });
    const second = await view({ period: apr, declared: { count: 0, sum: usd('0') }, corrects: wrong.reconciliation_id });
    expect(first.corrects).toBe(wrong.reconciliation_id);
    expect(second.corrects).toBe(first.reconciliation_id);
    const [replaced] = breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${first.reconciliation_id}`, api.keys.read)).json()).data;
    expect(replaced).toMatchObject({ state: 'resolved', resolved: { by: 'system', resolution: `superseded by correction ${second.reconciliation_id}` } });

    const again = await view({ period: apr, declared: { count: 1, sum: usd('3') } });
    const both = await Promise.all([1, 2].map((n) => view({ period: apr, declared: { count: n, sum: usd(String(n)) }, corrects: again.reconciliation_id })));
    const live = (await api.db.pool.query(
      `SELECT count(*)::int AS n FROM reconciliations r WHERE r.reconciliation_id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM reconciliations c WHERE c.corrects = r.reconciliation_id)`,
      [[again, ...both].map((v) => v.reconciliation_id.slice('rcn_'.length))],
    )).rows[0].n;
    expect(live).toBe(1);
  });

  it('lists every difference item, paged, and exports them as CSV', async () => {
    // Two movements held on an account the service has not received: unsettled.
    await send('may-held-1', '2026-05-01T15:00:00Z', '10', { debit: 'acct-1', credit: 'acct-404' });
    await send('may-held-3', '2026-05-01T16:00:00Z', '20', { debit: 'acct-1', credit: 'acct-404' });
    await pipeline.drain();
    const rcn = await view({ declared: { count: 3, sum: usd('1130') } });
    expect(rcn.result.explanation.unsettled).toEqual([expect.objectContaining({ reason: 'held', count: 2 })]);
    const items: Array<{ reason: string; external_id: string; related: string | null }> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=2${cursor ? `&cursor=${cursor}` : ''}`, api.keys.read);
      expect(res.statusCode, res.body).toBe(200);
      const page = differenceItemPageSchema.parse(res.json());
      items.push(...page.data);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(items.map((i) => [i.reason, i.external_id, i.related])).toEqual([
      ['superseded', 'may-1', 'may-1-fix'],
      ['reversal_pair', 'may-2', 'may-2-rev'],
      ['reversal_pair', 'may-2-rev', 'may-2'],
      ['status_not_counted', 'may-3', null],
      ['held', 'may-held-1', null],
      ['held', 'may-held-3', null],
    ]);
    expect(pages).toBe(3);

    const csv = await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?format=csv`, api.keys.read);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.split('\r\n');
    expect(lines[0]).toBe('source,reason,external_id,event_id,occurred_at,received_at,status,type,amount_value,asset,scale,related');
    expect(lines.slice(1, -1)).toHaveLength(6);
    expect(lines[2]).toMatch(/^movement,reversal_pair,may-2,evt_[0-9a-f-]+,2026-05-01T11:00:00.000Z,[^,]+,completed,p2p,500,USD,2,may-2-rev$/);
    expect(lines.at(-1)).toBe('');
    expect((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?cursor=forged`, api.keys.read)).statusCode).toBe(400);
    // The CSV is every item: a page parameter it would ignore is refused, naming it.
    for (const [query, paths] of [['&limit=2', ['limit']], ['&cursor=x&limit=2', ['cursor', 'limit']]] as const) {
      const refused = await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?format=csv${query}`, api.keys.read);
      expect(refused.statusCode).toBe(400);
      expect(problemSchema.parse(refused.json())).toMatchObject({ code: 'svc:request/invalid_parameter', errors: paths.map((path) => ({ path })) });
    }

    // Movement items that fill the page exactly, and nothing unsettled after them: no next page.
    const morning = await view({ period: { from: '2026-05-01T00:00:00Z', to: '2026-05-01T14:00:00Z' }, declared: { count: 3, sum: usd('1100') } });
    const exact = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${morning.reconciliation_id}/items?limit=4`, api.keys.read)).json());
    expect(exact.data).toHaveLength(4);
    expect(exact).toMatchObject({ has_more: false });
    // With the held movements in the period, a page filled by movements says there is more.
    const full = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=4`, api.keys.read)).json());
    expect(full.data.map((i) => i.external_id)).toEqual(['may-1', 'may-2', 'may-2-rev', 'may-3']);
    const rest = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=4&cursor=${full.next_cursor}`, api.keys.read)).json());
    expect(rest.data.map((i) => i.external_id)).toEqual(['may-held-1', 'may-held-3']);
    expect(rest.has_more).toBe(false);
  });
});

describe('difference items, page by page', () => {
  const june3 = { from: '2026-06-03T00:00:00Z', to: '2026-06-04T00:00:00Z' };
  // The queries a Reconciliations runs, its transactions' among them.
  const watched = () => {
    const queries: Array<{ text: string; values: unknown[] }> = [];
    const record = (text: unknown, values: unknown) => queries.push({ text: typeof text === 'string' ? text : (text as { text: string }).text, values: (values as unknown[]) ?? [] });
    const watch = <T extends object>(target: T, wrap: Record<string, (...args: never[]) => unknown>): T =>
      new Proxy(target, {
        get: (t, key) => {
          if (typeof key === 'string' && key in wrap) return wrap[key];
          const value = Reflect.get(t, key) as unknown;
          return typeof value === 'function' ? value.bind(t) : value;
        },
      });
    const pool = api.db.pool;
    const query = (text: string, values?: unknown[]) => (record(text, values), pool.query(text, values));
    const connect = async () => {
      const client = await pool.connect();
      return watch(client, { query: (text: string, values?: unknown[]) => (record(text, values), client.query(text, values)) });
    };
    return { reconciliations: new Reconciliations(watch(pool, { query, connect })), queries };
  };

  // A statement of a listing that changes a table: a listing is a read, whatever key makes it.
  const writes = (queries: Array<{ text: string }>) => queries.filter((q) => /\b(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/i.test(q.text));
  // The statements of a listing that judge movement rows: each from a position, a bounded number.
  const rowReads = (queries: Array<{ text: string; values: unknown[] }>) =>
    queries.filter((q) => q.text.includes('FROM canonical_movements')).map((q) => ({ at: q.values[10] as string | null, id: q.values[11] as string | null, rows: q.values[12] as number }));

  it('reads a listing page by page from its position, writing nothing, every item once', async () => {
    // Eight movements the totals leave out: five failed, a correction's original, a reversal pair.
    for (let i = 1; i <= 5; i++) await send(`jun-f-${i}`, `2026-06-03T0${i}:00:00Z`, '100', { status: 'failed' });
    await send('jun-c', '2026-06-03T06:00:00Z', '200');
    await send('jun-c-fix', '2026-06-03T06:30:00Z', '210', { links: { correction_of: 'jun-c' } });
    await send('jun-r', '2026-06-03T07:00:00Z', '300');
    await send('jun-r-rev', '2026-06-03T08:00:00Z', '300', { type: 'reversal', links: { reverses: 'jun-r' }, debit: 'acct-2', credit: 'acct-1' });
    await pipeline.drain();
    const rcn = await view({ period: june3, declared: { count: 1, sum: usd('210') } });
    const whole = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=200`, api.keys.read)).json());
    expect(whole.data.map((i) => i.external_id)).toEqual(['jun-f-1', 'jun-f-2', 'jun-f-3', 'jun-f-4', 'jun-f-5', 'jun-c', 'jun-r', 'jun-r-rev']);

    const { reconciliations, queries } = watched();
    const id = rcn.reconciliation_id.slice('rcn_'.length);
    const paged: string[] = [];
    let after: Parameters<Reconciliations['items']>[2] = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<Reconciliations['items']>> = await reconciliations.items(api.tenantId, id, after, 1);
      paged.push(...page!.items.map((i) => i.external_id));
      after = page!.next;
      pages += 1;
      // A movement the totals leave out lands mid-listing, before the pages still to come: this
      // listing goes on from its position, neither repeating nor skipping an item.
      if (pages === 3) {
        await send('jun-f-late', '2026-06-03T02:30:00Z', '100', { status: 'failed' });
        await pipeline.drain();
      }
    } while (after && pages < 20);
    expect(paged).toEqual(whole.data.map((i) => i.external_id));
    expect(writes(queries)).toEqual([]);
    // Every page after the first reads on from where the one before stopped, never from the start.
    const reads = rowReads(queries);
    expect(reads.length).toBeGreaterThanOrEqual(8);
    expect(reads[0]!.at).toBeNull();
    for (const read of reads.slice(1)) expect(read.at).not.toBeNull();
    // A new listing sees the late movement.
    const again = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=200`, api.keys.read)).json());
    expect(again.data.map((i) => i.external_id)).toEqual(['jun-f-1', 'jun-f-2', 'jun-f-late', 'jun-f-3', 'jun-f-4', 'jun-f-5', 'jun-c', 'jun-r', 'jun-r-rev']);
  });

  it('lists more than 5,000 items reading the period once, and pairs a reversal with an original thousands of rows away', async () => {
    // A day of 6,000 failed movements (seeded as the canonical pipeline writes them, to keep the
    // test quick), between an original and its reversal sent through the API.
    const june5 = { from: '2026-06-05T00:00:00Z', to: '2026-06-06T00:00:00Z' };
    await send('j5-r', '2026-06-05T00:00:00Z', '300');
    await send('j5-r-rev', '2026-06-05T23:00:00Z', '300', { type: 'reversal', links: { reverses: 'j5-r' }, debit: 'acct-2', credit: 'acct-1' });
    await pipeline.drain();
    const seeded = 6_000;
    await api.db.pool.query(
      `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status, amount_value, amount_asset, amount_scale, debit_account_id, debit_party_id, credit_account_id, credit_party_id, data)
       SELECT $1, 'j5-f-' || lpad(n::text, 5, '0'), gen_random_uuid(), timestamptz '2026-06-05T01:00:00Z' + n * interval '1 second', now(), 'p2p', 'failed', 100, 'USD', 2,
              'acct-1', 'party-1', 'acct-2', 'party-2', '{}'::jsonb
         FROM generate_series(1, $2::int) n`,
      [api.tenantId, seeded],
    );
    const rcn = await view({ period: june5, declared: { count: 0, sum: usd('0') } });
    const { reconciliations, queries } = watched();
    const id = rcn.reconciliation_id.slice('rcn_'.length);
    const listed: Array<{ reason: string; external_id: string }> = [];
    let after: Parameters<Reconciliations['items']>[2] = null;
    do {
      // The CSV's page size.
      const page: Awaited<ReturnType<Reconciliations['items']>> = await reconciliations.items(api.tenantId, id, after, 500);
      listed.push(...page!.items);
      after = page!.next;
    } while (after);
    expect(listed).toHaveLength(seeded + 2);
    expect(new Set(listed.map((i) => i.external_id)).size).toBe(seeded + 2);
    expect(listed[0]).toMatchObject({ reason: 'reversal_pair', external_id: 'j5-r' });
    expect(listed.at(-1)).toMatchObject({ reason: 'reversal_pair', external_id: 'j5-r-rev' });
    expect(writes(queries)).toEqual([]);
    // The period's rows were read once over the listing (each page from the last one's position,
    // a page more and one row), never the whole period per batch of items.
    const reads = rowReads(queries);
    for (const read of reads) expect(read.rows).toBeLessThanOrEqual(5_000);
    expect(reads.reduce((sum, read) => sum + read.rows, 0)).toBeLessThan((seeded + 2) * 1.1);
  });

  it('pages through the API with the same items, in the same order, as one page has them', async () => {
    const rcn = await view({ period: june3, declared: { count: 1, sum: usd('210') } });
    const whole = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=200`, api.keys.read)).json());
    for (const limit of [1, 2, 3]) {
      const seen: unknown[] = [];
      let cursor: string | undefined;
      do {
        const page = differenceItemPageSchema.parse((await api.client.get(`/v1/reconciliations/${rcn.reconciliation_id}/items?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, api.keys.read)).json());
        expect(page.data.length).toBeLessThanOrEqual(limit);
        seen.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen, `pages of ${limit}`).toEqual(whole.data);
    }
  });
});

describe('safe retries by customer reference', () => {
  it('answers the original for the same content and refuses other content', async () => {
    const body = { declared: { count: 1, sum: usd('1100') }, customer_reference: 'eod-2026-05-01-acct-1' };
    const first = await declare(body);
    expect(first.statusCode).toBe(201);
    // The same content, instants written differently.
    const repeat = await declare({ ...body, period: { from: '2026-05-01T00:00:00.000Z', to: '2026-05-02T00:00:00+00:00' } });
    expect(repeat.statusCode).toBe(200);
    expect(reconciliationSchema.parse(repeat.json()).reconciliation_id).toBe(first.json().reconciliation_id);
    const conflict = await declare({ ...body, declared: { count: 1, sum: usd('1101') } });
    expect(conflict.statusCode).toBe(409);
    expect(problemSchema.parse(conflict.json()).code).toBe('svc:reconciliation/reference_conflict');
    const { rows } = await api.db.pool.query(`SELECT count(*)::int AS n FROM reconciliations WHERE customer_reference = $1`, [body.customer_reference]);
    expect(rows[0].n).toBe(1);
    // Concurrent first attempts: one declaration, both answered with it.
    const racing = await Promise.all([declare({ ...body, customer_reference: 'race' }), declare({ ...body, customer_reference: 'race' })]);
    expect(racing.map((r) => r.statusCode).sort()).toEqual([200, 201]);
    expect(new Set(racing.map((r) => r.json().reconciliation_id)).size).toBe(1);
  });

  it('finds the original whatever the order of members and of the filters\' sets, and however an id is written', async () => {
    const statuses = { completed: { count: 1, sum: usd('1100') }, failed: 1 };
    // A day of its own, so that these declarations are no other test's.
    const march = { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' };
    const body = { period: march, declared: { count: 2, sum: usd('1877'), statuses }, filters: { types: ['p2p', 'wire'], rails: ['swift', 'ach'] }, customer_reference: 'eod-order' };
    const first = await declare(body);
    expect(first.statusCode, first.body).toBe(201);
    const reordered = await declare({
      customer_reference: 'eod-order',
      period: march,
      filters: { rails: ['ach', 'swift', 'ach'], types: ['wire', 'p2p'] },
      declared: { statuses: { failed: 1, completed: { sum: usd('1100'), count: 1 } }, sum: usd('1877'), count: 2 },
    });
    expect(reordered.statusCode, reordered.body).toBe(200);
    expect(reordered.json().reconciliation_id).toBe(first.json().reconciliation_id);
    // A correction, its target written with and without the prefix.
    const id = String(first.json().reconciliation_id);
    const fix = { ...body, customer_reference: 'eod-order-fix', corrects: id };
    expect((await declare(fix)).statusCode).toBe(201);
    const bare = await declare({ ...fix, corrects: id.slice('rcn_'.length) });
    expect(bare.statusCode, bare.body).toBe(200);
  });
});

describe('basis and scope filters', () => {
  it('counts by recorded time, and narrows by movement type, rail and counterparty', async () => {
    await send('feb-wire', '2026-02-01T10:00:00Z', '900', { type: 'wire', rail: 'swift', credit: 'acct-3' });
    await send('feb-ach', '2026-02-01T11:00:00Z', '100', { type: 'ach', rail: 'nacha' });
    await pipeline.drain();
    const february = { from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' };
    expect((await view({ period: february, declared: { count: 2, sum: usd('1000') } })).status).toBe('matched');
    expect((await view({ period: february, filters: { types: ['wire'] }, declared: { count: 1, sum: usd('900') } })).status).toBe('matched');
    expect((await view({ period: february, filters: { rails: ['nacha'] }, declared: { count: 1, sum: usd('100') } })).status).toBe('matched');
    expect((await view({ period: february, filters: { counterparty: 'party-3' }, declared: { count: 1, sum: usd('900') } })).status).toBe('matched');
    const byAccount = await view({ period: february, filters: { counterparty: 'acct-2' }, declared: { count: 1, sum: usd('100') } });
    expect(byAccount).toMatchObject({ status: 'matched', filters: { counterparty: 'acct-2' } });
    // Recorded time: everything sent in this test was recorded at the test clock's now, not in February.
    const now = api.clock.now();
    const recordedToday = { from: new Date(now.getTime() - 3600_000).toISOString(), to: new Date(now.getTime() + 3600_000).toISOString() };
    const recorded = await view({ period: recordedToday, basis: 'recorded', filters: { types: ['wire', 'ach'] }, declared: { count: 2, sum: usd('1000') } });
    expect(recorded).toMatchObject({ status: 'matched', basis: 'recorded' });
    expect((await view({ period: february, basis: 'recorded', declared: { count: 0, sum: usd('0') } })).status).toBe('matched');
    const unknownImport = await declare({ period: february, filters: { import_id: 'imp_00000000-0000-7000-8000-000000000000' }, declared: { count: 0, sum: usd('0') } });
    expect(unknownImport.statusCode).toBe(404);
    expect(problemSchema.parse((await declare({ period: february, filters: { import_id: 'nope' }, declared: { count: 0, sum: usd('0') } })).json()).errors.map((e) => e.path)).toEqual(['filters.import_id']);
  });
});

describe('re-comparison touches only the declarations a movement can change', () => {
  it('marks by subject, type and period, and a correction marks its original\'s declarations', async () => {
    const jan = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' };
    const acct1 = await view({ period: jan, declared: { count: 0, sum: usd('0') } });
    const acct3 = await view({ scope: { kind: 'account', external_id: 'acct-3' }, direction: 'both', period: jan, declared: { count: 0, sum: usd('0') } });
    const party3 = await view({ scope: { kind: 'party', external_id: 'party-3' }, direction: 'both', period: jan, declared: { count: 0, sum: usd('0') } });
    const wires = await view({ scope: { kind: 'tenant' }, direction: 'both', period: jan, filters: { types: ['wire'] }, declared: { count: 0, sum: usd('0') } });
    // Declarations are born stale; compare them once so nothing is marked.
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    const stale = async () =>
      (await api.db.pool.query(`SELECT reconciliation_id FROM reconciliations WHERE stale`)).rows.map((r) => `rcn_${r.reconciliation_id}`).sort();
    expect(await stale()).toEqual([]);

    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-01-01T10:00:00Z', receivedAt: '2026-01-01T10:00:00Z', accounts: ['acct-3', 'acct-2'], parties: ['party-3', 'party-2'], type: 'p2p', rail: null }]);
    expect(await stale()).toEqual([acct3.reconciliation_id, party3.reconciliation_id].sort());
    expect(await stale()).not.toContain(acct1.reconciliation_id);
    expect(await stale()).not.toContain(wires.reconciliation_id);
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);

    // A correction sent in January of an May movement marks May's declarations too.
    const mayAcct1 = (await api.db.pool.query(`SELECT reconciliation_id FROM reconciliations WHERE subject_id = 'acct-1' AND period_from = '2026-05-01T00:00:00Z' AND NOT EXISTS (SELECT 1 FROM reconciliations c WHERE c.corrects = reconciliations.reconciliation_id)`)).rows.length;
    const touches = await withOriginals(api.db.pool, [touchOf({
      object: 'movement', tenant_id: 'acme', event_id: '0', external_id: 'may-1-fix-2', occurred_at: '2026-01-01T12:00:00Z', received_at: '2026-01-01T12:00:00Z',
      type: 'p2p', status: 'completed', amount: usd('1200'), base_amount: null,
      debit: { account_id: 'acct-1', party_id: 'party-1', country: null }, credit: { account_id: 'acct-2', party_id: 'party-2', country: null },
      data: { links: { correction_of: 'may-1-fix' } },
    })]);
    expect(touches.map((t) => t.at)).toEqual(['2026-01-01T12:00:00Z', '2026-05-01T10:00:00.000Z', '2026-01-01T12:00:00Z']);
    await markStale(api.db.pool, touches);
    const marked = await stale();
    expect(marked).toContain(acct1.reconciliation_id);
    expect(marked.length).toBeGreaterThanOrEqual(mayAcct1 + 1);
    expect(marked).not.toContain(acct3.reconciliation_id);
  });
});

describe('re-comparison after a movement that changes an earlier one', () => {
  const statusOf = async (id: string) => {
    const res = await api.client.get(`/v1/reconciliations/${id}`, api.keys.read);
    expect(res.statusCode, res.body).toBe(200);
    return reconciliationSchema.parse(res.json());
  };
  // The reconcile pipeline's handling of these movements' change records (read from the log), then
  // the comparisons it would run.
  const settle = async (movements: string[]) => {
    await pipeline.drain();
    const { rows } = await api.db.pool.query<{ payload: string }>(
      `SELECT payload FROM outbox WHERE tenant_id = 'acme' AND topic = 'canonical.movement' AND payload::jsonb->>'external_id' = ANY ($1::text[])`,
      [movements],
    );
    expect(rows).toHaveLength(movements.length);
    await markStale(api.db.pool, await withOriginals(api.db.pool, rows.map((row) => touchOf(JSON.parse(row.payload)))));
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
  };

  it("compares the original's declarations again when a correction moves it to another asset", async () => {
    await send('jul-1', '2026-07-01T09:00:00Z', '1000');
    await pipeline.drain();
    const usdDay = await view({ period: { from: '2026-07-01T00:00:00Z', to: '2026-07-02T00:00:00Z' }, declared: { count: 1, sum: usd('1000') } });
    expect(usdDay.status).toBe('matched');
    // Declarations are born stale: compared once here, so that only the correction can mark it.
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    await send('jul-1-eur', '2026-07-01T09:00:00Z', '900', { asset: 'EUR', links: { correction_of: 'jul-1' } });
    await settle(['jul-1-eur']);
    expect(await statusOf(usdDay.reconciliation_id)).toMatchObject({ status: 'mismatched', result: { observed: { count: 0, sum: usd('0') } } });
  });

  it('compares the declarations of a reversal again when the movement it reverses arrives after it', async () => {
    await send('aug-1-rev', '2026-08-02T10:00:00Z', '300', { type: 'reversal', links: { reverses: 'aug-1' }, debit: 'acct-2', credit: 'acct-1' });
    await pipeline.drain();
    const reversalDay = await view({ period: { from: '2026-08-02T00:00:00Z', to: '2026-08-03T00:00:00Z' }, declared: { count: 1, sum: usd('-300') } });
    // Until its original is known, the reversal is a movement of its own legs (into acct-1).
    expect(reversalDay.status).toBe('mismatched');
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    await send('aug-1', '2026-08-01T10:00:00Z', '300');
    await settle(['aug-1']);
    expect(await statusOf(reversalDay.reconciliation_id)).toMatchObject({ status: 'matched', result: { observed: { count: 1, sum: usd('-300') } } });
  });
});

describe('a declaration a correction replaced', () => {
  it('is not compared again, even when it was marked for it before the correction came', async () => {
    const jan2 = { from: '2026-01-02T00:00:00Z', to: '2026-01-03T00:00:00Z' };
    const first = await view({ period: jan2, declared: { count: 0, sum: usd('0') } });
    expect(first.status).toBe('matched');
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    await send('jan-2', '2026-01-02T09:00:00Z', '100');
    await pipeline.drain();
    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-01-02T09:00:00Z' }]);
    const fixed = await view({ period: jan2, declared: { count: 1, sum: usd('100') }, corrects: first.reconciliation_id });
    expect(fixed.status).toBe('matched');
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    const res = await api.client.get(`/v1/reconciliations/${first.reconciliation_id}`, api.keys.read);
    expect(reconciliationSchema.parse(res.json()).status).toBe('matched');
    expect(breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${first.reconciliation_id}`, api.keys.read)).json()).data).toEqual([]);
    expect(await outgoing('coverage.degraded', first.reconciliation_id)).toEqual([]);
  });
});

describe('a movement landing while its declaration is compared', () => {
  it('marks it again when the comparison began before the movement committed', async () => {
    const jun = { from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' };
    const declared = await view({ period: jun, declared: { count: 2, sum: usd('200') } });
    const id = declared.reconciliation_id.slice('rcn_'.length);
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    await send('jun-1', '2026-06-01T09:00:00Z', '100');
    await pipeline.drain();
    await markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-06-01T09:00:00Z' }]);

    // The comparison stops before it commits (its new result waits for a lock the test holds).
    const holder = await api.db.pool.connect();
    await holder.query('SELECT pg_advisory_lock(4242)');
    const waiting = async (query: string) => {
      for (let i = 0; i < 200; i++) {
        const { rowCount } = await api.db.pool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [query]);
        if (rowCount) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    };
    const hold = `IF NEW.reconciliation_id = '${id}' THEN PERFORM pg_advisory_lock(4242); PERFORM pg_advisory_unlock(4242); END IF;`;
    await withTrigger(api.db.pool, { table: 'reconciliation_results', before: 'INSERT' }, hold, async () => {
      const recheck = new Reconciliations(api.db.pool).recheckNextStale(api.clock.now());
      expect(await waiting('INSERT INTO reconciliation_results%')).toBe(true);
      // A second movement commits after the comparison read the first, and its mark comes
      // meanwhile: a canonical batch already under way when the comparison began. (Written here
      // as that batch writes it: the embedded log hands the pipeline nothing newer than the open
      // comparison, so a batch begun after it cannot be made to commit now.)
      await api.db.pool.query(
        `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status, amount_value, amount_asset, amount_scale,
                                          debit_account_id, debit_party_id, credit_account_id, credit_party_id, normalized, data)
         SELECT tenant_id, 'jun-2', gen_random_uuid(), occurred_at + interval '1 hour', received_at, type, status, amount_value, amount_asset, amount_scale,
                debit_account_id, debit_party_id, credit_account_id, credit_party_id, normalized, data
           FROM canonical_movements WHERE tenant_id = 'acme' AND external_id = 'jun-1'`,
      );
      const marking = markStale(api.db.pool, [{ tenant: 'acme', asset: 'USD', at: '2026-06-01T10:00:00Z' }]);
      await Promise.race([marking, waiting('UPDATE reconciliations r SET stale%')]);
      await holder.query('SELECT pg_advisory_unlock(4242)');
      expect(await recheck).toBe(true);
      await marking;
    }).finally(() => holder.release());
    const { rows } = await api.db.pool.query('SELECT stale, checking_until FROM reconciliations WHERE reconciliation_id = $1', [id]);
    expect(rows[0]).toEqual({ stale: true, checking_until: null });
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    const compared = reconciliationSchema.parse((await api.client.get(`/v1/reconciliations/${declared.reconciliation_id}`, api.keys.read)).json());
    expect(compared).toMatchObject({ status: 'matched', result: { observed: { count: 2 } } });
  });
});

// Runs last: every event the reconciliations enqueued, swept from the outbox.
it('every event the reconciliations enqueued parses with its type\'s declared payload', async () => {
  const swept = await sweepOutbox(api.db.pool);
  expect(swept.refused).toEqual([]);
  expect(swept.types).toEqual(expect.arrayContaining(['coverage.degraded', 'coverage.recovered']));
});

describe('declarations at the edges of what the stores hold', () => {
  it('opens a break for a difference past 38 digits', async () => {
    // A declared sum of 38 digits, negative, against what acct-1 sent out that day.
    const declared = `-${'9'.repeat(38)}`;
    const result = await view({ declared: { count: 3, sum: usd(declared) } });
    expect(result.status).toBe('mismatched');
    const difference = result.result!.explanation!.sum_difference;
    expect(difference.value.replace('-', '')).toHaveLength(39);
    expect(difference).toMatchObject({ asset: 'USD', scale: 2 });
    const breaks = breakPageSchema.parse((await api.client.get(`/v1/reconciliation-breaks?reconciliation_id=${result.reconciliation_id}`, api.keys.ingest)).json());
    expect(breaks.data.map((b) => b.opened_difference.sum)).toEqual([difference]);
  });

  it('compares and lists items of a recorded-time period that starts before 1970', async () => {
    const result = await view({ basis: 'recorded', period: { from: '1969-12-31T00:00:00Z', to: '1970-06-01T00:00:00Z' }, declared: { count: 1, sum: usd('1') } });
    expect(result.status).toBe('mismatched');
    const items = await api.client.get(`/v1/reconciliations/${result.reconciliation_id}/items`, api.keys.ingest);
    expect(items.statusCode, items.body).toBe(200);
    differenceItemPageSchema.parse(items.json());
  });

  it('goes on comparing the others when one stale declaration cannot be compared', async () => {
    const feb = { from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' };
    const failing = (await view({ period: feb, declared: { count: 0, sum: usd('0') } })).reconciliation_id.slice('rcn_'.length);
    const other = (await view({ scope: { kind: 'account', external_id: 'acct-3' }, direction: 'both', period: feb, declared: { count: 0, sum: usd('0') } })).reconciliation_id.slice('rcn_'.length);
    await recheckStale(new Reconciliations(api.db.pool), api.clock, 1000);
    // The failing one is the oldest stale row, and its comparison fails whenever it is tried.
    await api.db.pool.query(`UPDATE reconciliations SET stale = true, checked_at = '2000-01-01' WHERE reconciliation_id = $1`, [failing]);
    await api.db.pool.query(`UPDATE reconciliations SET stale = true, checked_at = '2001-01-01' WHERE reconciliation_id = $1`, [other]);
    await withTrigger(api.db.pool, { table: 'reconciliations', before: 'UPDATE' }, `IF NEW.reconciliation_id = '${failing}' AND NOT NEW.stale THEN RAISE EXCEPTION 'cannot compare'; END IF;`, async () => {
      const errors: unknown[] = [];
      expect(await recheckStale(new Reconciliations(api.db.pool), api.clock, 3, (error) => errors.push(error))).toBe(1);
      expect(errors.map((e) => (e as Error).message)).toEqual(['cannot compare', 'cannot compare']);
      const { rows } = await api.db.pool.query(`SELECT reconciliation_id, stale, checked_at FROM reconciliations WHERE reconciliation_id = ANY ($1::uuid[])`, [[failing, other]]);
      const byId = new Map(rows.map((r) => [r.reconciliation_id, r]));
      expect(byId.get(other)!.stale).toBe(false);
      // Still owed a comparison, behind the others.
      expect(byId.get(failing)!.stale).toBe(true);
      expect(byId.get(failing)!.checked_at.toISOString()).toBe(api.clock.now().toISOString());
    });
  });
});

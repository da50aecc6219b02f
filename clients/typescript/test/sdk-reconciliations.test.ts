// The SDK's reconciliations against the real service over 127.0.0.1: movements ingested through
// the SDK and canonicalised by the pipeline, then control totals declared, listed and read back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiError, startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import { startTestPipeline, type TestPipeline } from '../../../test/support/test-pipeline.ts';
import { type BatchItem, type MovementEvent, type Reconciliation, type ReconciliationRequest, type SvcClient } from '../src/index.ts';

let svc: SdkService;
let run: TestPipeline;
let ingest: SvcClient;

const movement = (id: string, at: string, value: string, status: MovementEvent['data']['status'] = 'completed'): BatchItem => ({
  object: 'movement',
  event: {
    external_id: id,
    schema_version: '2026-09-01',
    occurred_at: at,
    data: { type: 'p2p', status, amount: { value, asset: 'USD', scale: 2 }, debit: { account_id: 'acct-1' }, credit: { account_id: 'acct-2' } },
  },
});

beforeAll(async () => {
  svc = await startSdkService();
  run = await startTestPipeline(svc.api);
  ingest = svc.client('ingest');
  const events: BatchItem[] = [
    ...['party-1', 'party-2'].map(
      (id): BatchItem => ({ object: 'party', event: { external_id: id, schema_version: '2026-09-01', occurred_at: '2026-07-01T00:00:00Z', sequence: 1, data: { type: 'person', status: 'active', created_at: '2025-01-01T00:00:00Z' } } }),
    ),
    ...[['acct-1', 'party-1'], ['acct-2', 'party-2']].map(
      ([id, holder]): BatchItem => ({
        object: 'account',
        event: { external_id: id!, schema_version: '2026-09-01', occurred_at: '2026-07-01T00:00:00Z', sequence: 1, data: { type: 'wallet', holder_party_id: holder!, asset: 'USD', status: 'active', opened_at: '2025-02-01T00:00:00Z' } },
      }),
    ),
    movement('mv-1', '2026-08-01T10:00:00Z', '10000'),
    movement('mv-2', '2026-08-15T10:00:00Z', '2550', 'pending'),
    movement('mv-3', '2026-09-01T00:00:00Z', '999'),
  ];
  expect((await ingest.batches.create({ events })).accepted).toBe(events.length);
  await run.drain();
});
afterAll(async () => {
  await run?.stop();
  await svc?.close();
});

const usd = (value: string) => ({ value, asset: 'USD', scale: 2 });
const august = { from: '2026-08-01T00:00:00Z', to: '2026-09-01T00:00:00Z' };
const declaration = (overrides: Partial<ReconciliationRequest> = {}): ReconciliationRequest => ({
  scope: { kind: 'account', external_id: 'acct-1' },
  direction: 'out',
  asset: 'USD',
  period: august,
  // Pending movements are counted only when declared (completed alone by default).
  declared: { count: 2, sum: usd('12550'), statuses: { completed: 1, pending: 1 } },
  ...overrides,
});

describe('reconciliations', () => {
  const declared: Reconciliation[] = [];

  it('create answers 201 with the first comparison: matched when the totals agree', async () => {
    const matched = await ingest.reconciliations.create(declaration({ declared: { count: 2, sum: usd('12550'), statuses: { completed: 1, pending: 1 } } }));
    expect(matched.lastResponse).toMatchObject({ status: 201, attempts: 1, idempotencyKey: undefined });
    expect(matched).toMatchObject({
      status: 'matched',
      scope: { kind: 'account', external_id: 'acct-1' },
      period: { from: '2026-08-01T00:00:00.000Z', to: '2026-09-01T00:00:00.000Z', from_inclusive: true, to_inclusive: false },
      result: { status: 'matched', observed: { count: 2, sum: usd('12550'), statuses: { completed: 1, pending: 1 } }, explanation: { count_difference: 0, sum_difference: usd('0'), unsettled: [] } },
      corrects: null,
    });
    declared.push(matched);
  });

  it('create answers mismatched with the differences, and a correction names what it corrects', async () => {
    // Later, so the list's newest-first order is the order declared here.
    svc.api.clock.advance(1);
    const mismatched = await ingest.reconciliations.create(declaration({ declared: { count: 3, sum: usd('13000'), statuses: { completed: 2, pending: 1 } } }));
    expect(mismatched).toMatchObject({ status: 'mismatched', result: { explanation: { count_difference: -1, sum_difference: usd('-450') } } });
    declared.push(mismatched);
    svc.api.clock.advance(1);
    const corrected = await ingest.reconciliations.create(declaration({ period: { ...august, to_inclusive: true }, declared: { count: 3, sum: usd('13549'), statuses: { completed: 2, pending: 1 } }, corrects: mismatched.reconciliation_id }));
    expect(corrected).toMatchObject({ status: 'matched', corrects: mismatched.reconciliation_id });
    declared.push(corrected);
  });

  it('retrieve answers one reconciliation with its history, with an ingest or a read key', async () => {
    const [first] = declared;
    const view = await svc.client('read').reconciliations.retrieve(first!.reconciliation_id);
    expect(view.lastResponse.status).toBe(200);
    expect(view).toMatchObject({ reconciliation_id: first!.reconciliation_id, status: 'matched', declared: { count: 2, sum: usd('12550') } });
    expect(view.history!.map((r) => r.status)).toEqual(['matched']);
    expect((await ingest.reconciliations.retrieve(first!.reconciliation_id)).reconciliation_id).toBe(first!.reconciliation_id);
  });

  it('list iterates every reconciliation newest first across pages, filters kept', async () => {
    const read = svc.client('read');
    const all: Reconciliation[] = [];
    for await (const r of read.reconciliations.list({ limit: 1 })) all.push(r);
    expect(all.map((r) => r.reconciliation_id)).toEqual(declared.map((r) => r.reconciliation_id).reverse());
    const pages = [];
    for await (const page of read.reconciliations.list({ limit: 2 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.data.length, p.has_more, p.lastResponse.status])).toEqual([
      [2, true, 200],
      [1, false, 200],
    ]);
    expect((await read.reconciliations.list({ status: 'mismatched', limit: 1 }).toArray()).map((r) => r.reconciliation_id)).toEqual([declared[1]!.reconciliation_id]);
    const first = await read.reconciliations.list({ subject: 'acct-1', subject_kind: 'account', limit: 1 }).firstPage();
    expect(first).toMatchObject({ has_more: true, data: [{ reconciliation_id: declared[2]!.reconciliation_id }] });
    expect(await read.reconciliations.list({ subject: 'party-2', subject_kind: 'party' }).toArray()).toEqual([]);
  });

  it('expectations are created, listed across pages and deleted', async () => {
    const scopes = [{ kind: 'tenant' as const }, { kind: 'account' as const, external_id: 'acct-1' }, { kind: 'account' as const, external_id: 'acct-2' }];
    const created = [];
    for (const scope of scopes) created.push(await ingest.reconciliations.expectations.create({ scope, asset: 'USD', due_after_minutes: 60 }));
    const read = svc.client('read');
    const pages = [];
    for await (const page of read.reconciliations.expectations.list({ limit: 2 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.data.length, p.has_more])).toEqual([
      [2, true],
      [1, false],
    ]);
    const listed = await read.reconciliations.expectations.list({ limit: 1 }).toArray();
    expect(listed.map((e) => e.expectation_id).sort()).toEqual(created.map((e) => e.expectation_id).sort());
    for (const expectation of created) await ingest.reconciliations.expectations.delete(expectation.expectation_id);
    expect(await read.reconciliations.expectations.list().toArray()).toEqual([]);
  });

  it('throws the governed problems of refused declarations, never retried', async () => {
    const eur = await apiError(ingest.reconciliations.create(declaration({ asset: 'EUR', declared: { count: 0, sum: { value: '0', asset: 'EUR', scale: 2 } } })));
    expect(eur).toMatchObject({ status: 400, code: 'svc:reconciliation/asset_not_held', attempts: 1 });
    expect(eur.errors.map((e) => e.path)).toEqual(['asset']);
    const scale = await apiError(ingest.reconciliations.create(declaration({ declared: { count: 0, sum: { value: '0', asset: 'USD', scale: 3 } } })));
    expect(scale).toMatchObject({ status: 400, code: 'svc:validation/money_scale_mismatch' });
    const nobody = await apiError(ingest.reconciliations.create(declaration({ scope: { kind: 'account', external_id: 'nobody' } })));
    expect(nobody).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(ingest.reconciliations.retrieve('rec_00000000-0000-7000-8000-000000000000'))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(svc.client('compliance').reconciliations.list().firstPage())).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
    expect(await apiError(svc.client('read').reconciliations.create(declaration()))).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
  });

  it('a declaration with a customer_reference is safe to send again; its break is worked through the SDK', async () => {
    const body = declaration({ period: { from: '2026-07-01T00:00:00Z', to: '2026-08-01T00:00:00Z' }, declared: { count: 1, sum: usd('5') }, customer_reference: 'sdk-july' });
    const first = await ingest.reconciliations.create(body);
    expect(first).toMatchObject({ status: 'mismatched', customer_reference: 'sdk-july' });
    const again = await ingest.reconciliations.create(body);
    expect(again.lastResponse.status).toBe(200);
    expect(again.reconciliation_id).toBe(first.reconciliation_id);
    expect(await apiError(ingest.reconciliations.create({ ...body, declared: { count: 0, sum: usd('0') } }))).toMatchObject({ status: 409, code: 'svc:reconciliation/reference_conflict', attempts: 1 });

    const [opened] = await ingest.reconciliations.breaks.list({ reconciliation_id: first.reconciliation_id }).toArray();
    expect(opened).toMatchObject({ state: 'open', opened_difference: { count: -1, sum: usd('-5') } });
    expect(await ingest.reconciliations.breaks.acknowledge(opened!.break_id, { note: 'checking the July file' })).toMatchObject({ state: 'acknowledged' });
    expect((await ingest.reconciliations.breaks.comment(opened!.break_id, { body: 'no July movements on our side either' })).comments).toHaveLength(2);
    expect(await apiError(ingest.reconciliations.breaks.acknowledge(opened!.break_id))).toMatchObject({ status: 409, code: 'svc:reconciliation/break_state' });
    const resolved = await ingest.reconciliations.breaks.resolve(opened!.break_id, { resolution: 'declared in error' });
    expect(resolved).toMatchObject({ state: 'resolved', resolved: { resolution: 'declared in error' } });
    expect((await svc.client('read').reconciliations.breaks.retrieve(opened!.break_id)).state).toBe('resolved');
  });

  it('lists every difference item and exports them as CSV', async () => {
    const rcn = await ingest.reconciliations.create(declaration({ declared: { count: 1, sum: usd('10000') } }));
    const items = await svc.client('read').reconciliations.items(rcn.reconciliation_id, { limit: 1 }).toArray();
    expect(items.map((i) => [i.reason, i.external_id])).toEqual([['status_not_counted', 'mv-2']]);
    const csv = await svc.client('read').reconciliations.itemsCsv(rcn.reconciliation_id);
    expect(csv.split('\r\n')).toHaveLength(3);
    expect(csv).toMatch(/^source,reason,external_id,/);
  });
});

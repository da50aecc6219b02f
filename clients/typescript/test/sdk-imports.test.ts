// The SDK's historical imports against the real service over 127.0.0.1: a sample dry-run, then an
// import created, staged chunk by chunk, dry-run whole, submitted, landed by the import worker
// and read back with its reject report (JSON pages and the streamed CSV); and a cancellation.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportWorker } from '../../../pipelines/imports/worker.ts';
import { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import { apiError, startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import { movementMapping } from '../../../test/fixtures/import-mappings.ts';
import { type ImportReject, type ImportRejectPage, type SvcClient, type WithResponse } from '../src/index.ts';

let svc: SdkService;
let ingest: SvcClient;
beforeAll(async () => {
  svc = await startSdkService();
  ingest = svc.client('ingest');
});
afterAll(async () => svc?.close());

// Lands every submitted import, as the import worker does.
async function landAll(): Promise<void> {
  const worker = new ImportWorker({ pool: svc.api.db.pool, clock: svc.api.clock, assets: new TenantAssetRegistry(svc.api.db.pool), futureSkewMs: 300_000 });
  while (await worker.step());
}

// Movements in CSV: id, at, amount (USD), from, to.
const mapping = movementMapping({ kind: 'csv' }, { 'data.debit.account_id': { from: 'from' }, 'data.credit.account_id': { from: 'to' } });
// i-2 has no amount, i-3 is after the go-live watermark, i-4 before the backfill window.
const chunk0 = ['id,at,amount,from,to', 'i-1,2026-06-01T10:00:00Z,10.00,a,b', 'i-2,2026-06-01T11:00:00Z,oops,a,b', 'i-3,2026-08-31T12:00:00Z,1.00,a,b'].join('\n') + '\n';
const chunk1 = ['i-4,2024-01-01T00:00:00Z,2.00,a,b', 'i-5,2026-06-02T10:00:00Z,3.50,a,b'].join('\n') + '\n';
const bytes = (text: string) => new TextEncoder().encode(text);
const window = { go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2025-01-01T00:00:00Z' };

describe('imports.dryRunSample', () => {
  it('runs a mapping over a sample and answers the reject report, creating nothing', async () => {
    const report = await ingest.imports.dryRunSample({ mapping, sample: chunk0 });
    expect(report.lastResponse).toMatchObject({ status: 200, idempotencyKey: undefined });
    expect(report).toMatchObject({ family: 'movement', rows_read: 3, valid: 2, rejected: 1, skipped: 0, rejects_truncated: false });
    expect(report.rejects).toEqual([expect.objectContaining({ row_no: 2, chunk_no: 0, code: 'svc:validation/schema', external_id: 'i-2' })]);
    expect(report.preview[0]).toMatchObject({ external_id: 'i-1', data: { amount: { value: '1000', asset: 'USD', scale: 2 } } });
    const { rows } = await svc.api.db.pool.query('SELECT count(*)::int AS n FROM imports');
    expect(rows[0].n).toBe(0);
  });

  it('throws 400 naming the nearest real field for a bad target path', async () => {
    const error = await apiError(ingest.imports.dryRunSample({ mapping: { ...mapping, fields: { ...mapping.fields, 'data.amout': { from: 'amount' } } }, sample: chunk0 }));
    expect(error).toMatchObject({ status: 400, code: 'svc:validation/schema' });
    expect(error.errors.find((e) => e.path === 'mapping.fields.data.amout')?.message).toContain('data.amount');
  });

  it('needs the ingest scope', async () => {
    expect(await apiError(svc.client('read').imports.dryRunSample({ mapping, sample: chunk0 }))).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
  });
});

describe('an import from creation to its reject report', () => {
  let importId: string;

  it('create answers 201 with the import in state created', async () => {
    const created = await ingest.imports.create({ mapping, ...window });
    expect(created.lastResponse.status).toBe(201);
    expect(created).toMatchObject({ state: 'created', family: 'movement', chunk_count: null, rows_read: 0, go_live_at: '2026-08-01T00:00:00.000Z' });
    expect(created.import_id).toMatch(/^imp_/);
    importId = created.import_id;
  });

  it('uploadChunk stages each chunk and answers its size and digest', async () => {
    const first = await ingest.imports.uploadChunk(importId, 0, bytes(chunk0), { contentType: 'text/csv' });
    expect(first.lastResponse.status).toBe(201);
    expect(first).toMatchObject({ chunk_no: 0, bytes: bytes(chunk0).byteLength });
    expect(first.sha256).toBe(createHash('sha256').update(chunk0).digest('hex'));
    // With the SDK's default content type, and repeatable (staging the same bytes again replaces them).
    const second = await ingest.imports.uploadChunk(importId, 1, bytes(chunk1), { safeToRepeat: true });
    expect(second).toMatchObject({ chunk_no: 1, bytes: bytes(chunk1).byteLength });
  });

  it('dryRun runs the whole staged file and answers the reject report', async () => {
    const report = await ingest.imports.dryRun(importId);
    expect(report.lastResponse.status).toBe(200);
    expect(report).toMatchObject({ rows_read: 5, valid: 2, rejected: 3 });
    expect(report.rejects.map((r) => [r.row_no, r.chunk_no])).toEqual([
      [2, 0],
      [3, 0],
      [4, 1],
    ]);
  });

  it('submit answers 202 and closes the upload', async () => {
    const submitted = await ingest.imports.submit(importId, { chunk_count: 2 });
    expect(submitted.lastResponse.status).toBe(202);
    expect(submitted).toMatchObject({ import_id: importId, state: 'submitted', chunk_count: 2 });
    const closed = await apiError(ingest.imports.uploadChunk(importId, 1, bytes(chunk1), { contentType: 'text/csv' }));
    expect(closed).toMatchObject({ status: 409, code: 'svc:import/not_open', attempts: 1 });
  });

  it('retrieve answers the state and counts once the worker landed it', async () => {
    await landAll();
    const done = await ingest.imports.retrieve(importId);
    expect(done.lastResponse.status).toBe(200);
    expect(done).toMatchObject({ import_id: importId, state: 'completed', chunk_count: 2, chunks_landed: 2, rows_read: 5, accepted: 2, duplicates: 0, rejected: 3, skipped: 0, failure: null });
  });

  it('rejects iterates the reject report in row order across pages', async () => {
    const all: ImportReject[] = [];
    for await (const reject of ingest.imports.rejects(importId, { limit: 2 })) all.push(reject);
    expect(all.map((r) => [r.row_no, r.chunk_no, r.code, r.external_id])).toEqual([
      [2, 0, 'svc:validation/schema', 'i-2'],
      [3, 0, 'svc:validation/timestamp_out_of_range', 'i-3'],
      [4, 1, 'svc:validation/timestamp_out_of_range', 'i-4'],
    ]);
    expect(all[2]!.raw).toBe('i-4,2024-01-01T00:00:00Z,2.00,a,b');
    const pages: Array<WithResponse<ImportRejectPage>> = [];
    for await (const page of ingest.imports.rejects(importId, { limit: 2 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.data.length, p.has_more])).toEqual([
      [2, true],
      [1, false],
    ]);
    const first = await ingest.imports.rejects(importId, { limit: 1 }).firstPage();
    expect(first).toMatchObject({ has_more: true, data: [{ row_no: 2 }] });
    expect(first.lastResponse.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('rejectsCsv streams the reject report as CSV', async () => {
    const stream = await ingest.imports.rejectsCsv(importId);
    const lines = (await new Response(stream).text()).trim().split('\n');
    expect(lines[0]).toBe('row_no,chunk_no,code,object_type,external_id,message,raw');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 5).join(','))).toEqual([
      '2,0,"svc:validation/schema","movement","i-2"',
      '3,0,"svc:validation/timestamp_out_of_range","movement","i-3"',
      '4,1,"svc:validation/timestamp_out_of_range","movement","i-4"',
    ]);
  });

  it('throws 404 for an unknown import and 403 for a read key', async () => {
    const unknown = 'imp_00000000-0000-7000-8000-000000000000';
    expect(await apiError(ingest.imports.retrieve(unknown))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(ingest.imports.rejectsCsv(unknown))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(await apiError(svc.client('read').imports.retrieve(importId))).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
  });
});

describe('imports.cancel', () => {
  it('cancels an import not yet landing; it can no longer be submitted', async () => {
    const created = await ingest.imports.create({ mapping, ...window });
    const cancelled = await ingest.imports.cancel(created.import_id);
    expect(cancelled.lastResponse.status).toBe(200);
    expect(cancelled).toMatchObject({ import_id: created.import_id, state: 'cancelled' });
    expect((await ingest.imports.retrieve(created.import_id)).state).toBe('cancelled');
    expect(await apiError(ingest.imports.submit(created.import_id, { chunk_count: 1 }))).toMatchObject({ status: 409, code: 'svc:import/not_open' });
  });

  it('create throws the field path of a bad request', async () => {
    const error = await apiError(ingest.imports.create({ mapping, go_live_at: '2026-01-01T00:00:00Z', backfill_from: '2026-02-01T00:00:00Z' }));
    expect(error).toMatchObject({ status: 400 });
    expect(error.errors.map((e) => e.path)).toEqual(['backfill_from']);
  });
});

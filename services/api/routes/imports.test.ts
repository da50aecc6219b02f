import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportWorker } from '../../../pipelines/imports/worker.ts';
import { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { importDryRunReportSchema, importRejectPageSchema, importViewSchema } from '../../../schemas/imports/reports.ts';
import { problemSchema } from '../../../schemas/problem.ts';
import { SCHEMA_VERSION } from '../../../schemas/envelope.ts';
import { movementMapping } from '../../../test/fixtures/import-mappings.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { withTrigger } from '../../../test/support/with-trigger.ts';
import { sweepOutbox } from '../../../services/webhooks/declared-payloads.test-kit.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});

const importWorker = (onError?: (error: unknown) => void) =>
  new ImportWorker({ pool: api.db.pool, clock: api.clock, assets: new TenantAssetRegistry(api.db.pool), futureSkewMs: 300_000, ...(onError ? { onError } : {}) });
// Lands every submitted import, as the worker would.
const landAll = async () => {
  const worker = importWorker();
  while (await worker.step());
};
afterAll(() => api.close());

const movements = {
  mapping_version: 1,
  family: 'movement',
  format: { kind: 'csv', delimiter: ';' },
  row_filter: { from: 'status', op: 'ne', values: ['draft'] },
  fields: {
    external_id: { from: 'id' },
    occurred_at: { from: 'when', type: 'datetime', format: 'pattern', pattern: 'DD.MM.YYYY HH:mm', tz: 'Europe/Prague' },
    'data.type': { const: 'wire' },
    'data.status': { from: 'status', map: { ok: 'completed', bounced: 'failed' } },
    'data.amount': { type: 'money', value: { from: 'amount' }, asset: { from: 'ccy', trim: true, case: 'upper' }, decimal_separator: ',', group_separator: '.' },
    'data.debit.account_id': { from: 'from' },
    'data.credit.account_id': { from: 'to' },
    'data.memo': { from: 'memo', optional: true },
  },
};
const sample = [
  'id;when;status;amount;ccy;from;to;memo',
  'm-1;01.07.2026 09:30;ok;1.234,50; eur ;a-1;a-2;rent',
  'm-2;01.07.2026 09:31;bounced;(12,00);usd;a-1;a-3;',
  'm-3;31.02.2026 10:00;ok;5,00;eur;a-1;a-2;',
  'm-4;01.07.2026 10:00;ok;5,001;eur;a-1;a-2;',
  'm-5;01.07.2026 10:00;lost;5,00;eur;a-1;a-2;',
  'm-6;01.07.2026 10:00;draft;5,00;eur;a-1;a-2;',
  'm-7;01.07.2026 10:00;ok;5,00;eur;a-1;a-2;card 4111 1111 1111 1111',
  'm-8;01.07.2026 10:00;ok;5,00;eur;a-1;a-2;x;extra',
  'm-9;01.07.2026 10:00;ok;5,00;XYZ;a-1;a-2;',
].join('\n');
const dryRun = (body: unknown, key = api.keys.ingest) => api.client.post('/v1/imports/dry-run', body, key);

describe('POST /v1/imports/dry-run', () => {
  it('runs every row through the mapping and the live validation, and stores nothing', async () => {
    const { rows: before } = await api.db.pool.query(`SELECT count(*)::int AS n FROM inbox_events`);
    const res = await dryRun({ mapping: movements, sample });
    expect(res.statusCode).toBe(200);
    const report = importDryRunReportSchema.parse(res.json());
    expect(report).toMatchObject({ family: 'movement', rows_read: 9, valid: 2, skipped: 1, rejected: 6, rejects_truncated: false });
    expect(report.preview[0]).toEqual({
      external_id: 'm-1',
      schema_version: '2026-09-01',
      occurred_at: '2026-07-01T07:30:00.000Z',
      data: { type: 'wire', status: 'completed', amount: { value: '123450', asset: 'EUR', scale: 2 }, debit: { account_id: 'a-1' }, credit: { account_id: 'a-2' }, memo: 'rent' },
    });
    expect(report.preview[1]).toMatchObject({ external_id: 'm-2', data: { status: 'failed', amount: { value: '-1200', asset: 'USD' } } });
    const byRow = Object.fromEntries(report.rejects.map((r) => [r.row_no, r]));
    expect(byRow[3]).toMatchObject({ code: 'svc:validation/timestamp_out_of_range', external_id: 'm-3', chunk_no: 0, object_type: 'movement', raw: 'm-3;31.02.2026 10:00;ok;5,00;eur;a-1;a-2;' });
    expect(byRow[4]).toMatchObject({ code: 'svc:validation/money_scale_mismatch', external_id: 'm-4' });
    expect(byRow[5]).toMatchObject({ code: 'svc:validation/schema', external_id: 'm-5' });
    expect(byRow[7]).toMatchObject({ code: 'svc:validation/pan_detected', raw: '(withheld: the row contains a full card number)' });
    // Its id column is read all the same: the reject names the row's external_id.
    expect(byRow[8]).toMatchObject({ code: 'svc:validation/schema', external_id: 'm-8', message: expect.stringContaining('more fields than the header') });
    expect(byRow[9]).toMatchObject({ code: 'svc:validation/money_scale_mismatch', message: expect.stringContaining('asset registry') });
    expect(res.body).not.toContain('4111');
    const { rows: after } = await api.db.pool.query(`SELECT count(*)::int AS n FROM inbox_events`);
    expect(after[0].n).toBe(before[0].n);
  });

  it('gives a movement an empty side when no part of it has a value, as a cash deposit has no payer', async () => {
    const mapping = movementMapping(
      { kind: 'csv' },
      {
        'data.type': { const: 'cash_in' },
        'data.debit.counterparty.institution': { from: 'bank', optional: true },
        'data.debit.counterparty.instrument_ref': { from: 'payer', optional: true },
        'data.credit.account_id': { from: 'to' },
      },
    );
    // The payer's account is not the bank's own: no account id on that side.
    delete mapping.fields['data.debit.account_id'];
    const res = await dryRun({ mapping, sample: ['id,at,amount,bank,payer,to', 'd-1,2026-07-01T10:00:00Z,50.00,,,a-2', 'd-2,2026-07-01T11:00:00Z,50.00,KB,19-2000145399,a-2'].join('\n') });
    expect(res.statusCode, res.body).toBe(200);
    const report = importDryRunReportSchema.parse(res.json());
    expect(report.rejects).toEqual([]);
    expect(report.preview.map((event) => (event as { data: { debit: unknown } }).data.debit)).toEqual([{}, { counterparty: { institution: 'KB', instrument_ref: '19-2000145399' } }]);
  });

  it('reports a chunk-level problem as a reject, keeping the rows before it', async () => {
    const res = await dryRun({ mapping: movements, sample: `${sample.split('\n').slice(0, 2).join('\n')}\nm-10;"01.07.2026 10:00;ok` });
    const report = importDryRunReportSchema.parse(res.json());
    expect(report).toMatchObject({ valid: 1, rejected: 1 });
    expect(report.rejects).toEqual([
      { row_no: 2, chunk_no: 0, code: 'svc:import/invalid_chunk', object_type: 'movement', external_id: null, message: expect.stringContaining('unterminated quote'), raw: null },
    ]);
  });

  it('refuses a chunk whose header lacks a column the mapping reads, before any of its rows', async () => {
    // An export that renamed two columns: the optional memo would vanish and the filter let drafts in.
    const renamed = sample.replace('id;when;status;amount;ccy;from;to;memo', 'id;when;Status;amount;ccy;from;to;Memo');
    const report = importDryRunReportSchema.parse((await dryRun({ mapping: movements, sample: renamed })).json());
    expect(report).toMatchObject({ valid: 0, rejected: 1 });
    expect(report.rejects).toEqual([
      { row_no: null, chunk_no: 0, code: 'svc:import/invalid_chunk', object_type: 'movement', external_id: null, message: 'mapping mismatch: the header has no column status, memo; nothing after it in chunk 0 was read', raw: null },
    ]);
  });

  it('refuses a mapping whose target is not a field of the family, naming the nearest ones', async () => {
    const res = await dryRun({ mapping: { ...movements, fields: { ...movements.fields, 'data.amout': { from: 'amount' } } }, sample });
    expect(res.statusCode).toBe(400);
    const problem = problemSchema.parse(res.json());
    expect(problem.code).toBe('svc:validation/schema');
    const finding = problem.errors.find((e) => e.path === 'mapping.fields.data.amout');
    expect(finding?.message).toContain('data.amount');
  });

  it('refuses a malformed request and needs an ingest key', async () => {
    expect(problemSchema.parse((await dryRun({ mapping: movements })).json()).errors.map((e) => e.path)).toContain('sample');
    expect(problemSchema.parse((await dryRun({ mapping: movements, sample, extra: 1 })).json()).errors.map((e) => e.path)).toContain('extra');
    expect((await dryRun({ mapping: movements, sample }, api.keys.read)).statusCode).toBe(403);
  });

  it('warns when an entity mapping has no sequence', async () => {
    const parties = {
      mapping_version: 1,
      family: 'party',
      format: { kind: 'jsonl' },
      fields: {
        external_id: { from: 'id' },
        occurred_at: { from: 'at', type: 'datetime', format: 'epoch_s' },
        'data.type': { from: 'kind' },
        'data.status': { const: 'active' },
        'data.created_at': { from: 'at', type: 'datetime', format: 'epoch_s' },
        'data.legal_names.0': { from: 'name' },
      },
    };
    const res = await dryRun({ mapping: parties, sample: '{"id":"p-1","at":1782900000,"kind":"person","name":"Ada"}\n[1]\n' });
    const report = importDryRunReportSchema.parse(res.json());
    expect(report.warnings).toEqual(['no sequence mapped: only the first version of each entity would land']);
    expect(report.rejects.map((r) => [r.row_no, r.code])).toEqual([[2, 'svc:validation/schema']]);
    expect(report.preview).toEqual([
      {
        external_id: 'p-1',
        schema_version: '2026-09-01',
        occurred_at: '2026-07-01T10:00:00.000Z',
        data: { type: 'person', status: 'active', created_at: '2026-07-01T10:00:00.000Z', legal_names: ['Ada'] },
      },
    ]);
  });

  it('takes a JSONL object whole into an object or money target with type json, and validates it as live ingest does', async () => {
    const mapping = {
      mapping_version: 1,
      family: 'movement',
      format: { kind: 'jsonl' },
      fields: {
        external_id: { from: 'id' },
        occurred_at: { from: 'at', type: 'datetime' },
        'data.type': { const: 'wire' },
        'data.status': { const: 'completed' },
        'data.amount': { from: 'amount', type: 'json' },
        'data.debit': { from: 'from', type: 'json' },
        'data.credit': { from: 'to', type: 'json' },
        'data.fees.0': { from: 'fee', type: 'json', optional: true },
      },
    };
    const amount = { value: '1500', asset: 'EUR', scale: 2 };
    const row = (id: string, extra: Record<string, unknown>) => JSON.stringify({ id, at: '2026-07-01T10:00:00Z', amount, from: { account_id: 'a-1' }, to: { account_id: 'a-2' }, ...extra });
    const sample = [row('j-1', { fee: { value: '25', asset: 'EUR', scale: 2 } }), row('j-2', { to: { account_id: 'a-2', colour: 'red' } }), row('j-3', { amount: { value: '1', asset: 'EUR', scale: 5 } })].join('\n');
    const res = await dryRun({ mapping, sample });
    expect(res.statusCode, res.body).toBe(200);
    const report = importDryRunReportSchema.parse(res.json());
    expect(report.preview).toEqual([
      { external_id: 'j-1', schema_version: '2026-09-01', occurred_at: '2026-07-01T10:00:00Z', data: { type: 'wire', status: 'completed', amount, debit: { account_id: 'a-1' }, credit: { account_id: 'a-2' }, fees: [{ value: '25', asset: 'EUR', scale: 2 }] } },
    ]);
    expect(report.rejects.map((r) => [r.row_no, r.code])).toEqual([
      [2, 'svc:validation/schema'],
      [3, 'svc:validation/money_scale_mismatch'],
    ]);
  });
});

describe('an import from creation to its reject report', () => {
  const csvMapping = movementMapping({ kind: 'csv' }, { 'data.debit.account_id': { from: 'from' }, 'data.credit.account_id': { from: 'to' } });
  const chunk0 = ['id,at,amount,from,to', 'i-1,2026-06-01T10:00:00Z,10.00,a,b', 'i-2,2026-06-01T11:00:00Z,oops,a,b', 'i-3,2026-08-31T12:00:00Z,1.00,a,b'].join('\n') + '\n';
  const chunk1 = ['i-4,2024-01-01T00:00:00Z,2.00,a,b', 'i-5,2026-06-02T10:00:00Z,3.50,a,b'].join('\n') + '\n';
  const put = (id: string, n: number, body: string) =>
    api.client.send({ method: 'PUT', url: `/v1/imports/${id}/chunks/${n}`, body: Buffer.from(body), key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await api.client.post('/v1/imports', { mapping: csvMapping, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2025-01-01T00:00:00Z', ...extra }, api.keys.ingest);
    expect(res.statusCode).toBe(201);
    return importViewSchema.parse(res.json());
  };

  it('lands staged chunks through the acceptance statement, with row numbers global to the file', async () => {
    const created = await create();
    expect(created).toMatchObject({ state: 'created', family: 'movement', chunk_count: null, rows_read: 0 });
    expect((await put(created.import_id, 0, chunk0)).statusCode).toBe(201);
    expect((await put(created.import_id, 1, chunk1)).statusCode).toBe(201);

    const dry = importDryRunReportSchema.parse((await api.client.post(`/v1/imports/${created.import_id}/dry-run`, undefined, api.keys.ingest)).json());
    expect(dry).toMatchObject({ rows_read: 5, valid: 2, rejected: 3 });

    const submitted = await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: 2 }, api.keys.ingest);
    expect(submitted.statusCode).toBe(202);
    expect(problemSchema.parse((await put(created.import_id, 1, chunk1)).json()).code).toBe('svc:import/not_open');
    await landAll();

    const done = importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json());
    expect(done).toMatchObject({ state: 'completed', chunk_count: 2, chunks_landed: 2, rows_read: 5, accepted: 2, duplicates: 0, rejected: 3, skipped: 0 });
    const { rows: landed } = await api.db.pool.query(`SELECT external_id, historical, import_id FROM inbox_events WHERE import_id IS NOT NULL ORDER BY external_id`);
    expect(landed.map((r) => [r.external_id, r.historical])).toEqual([['i-1', true], ['i-5', true]]);

    const csv = await api.client.get(`/v1/imports/${created.import_id}/rejects`, api.keys.ingest);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trim().split('\n');
    expect(lines[0]).toBe('row_no,chunk_no,code,object_type,external_id,message,raw');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 5).join(','))).toEqual([
      '2,0,"svc:validation/schema","movement","i-2"',
      '3,0,"svc:validation/timestamp_out_of_range","movement","i-3"',
      '4,1,"svc:validation/timestamp_out_of_range","movement","i-4"',
    ]);
    const page = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${created.import_id}/rejects?format=json&limit=2`, api.keys.ingest)).json());
    expect(page.data.map((r) => r.row_no)).toEqual([2, 3]);
    const rest = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${created.import_id}/rejects?format=json&limit=2&cursor=${page.next_cursor}`, api.keys.ingest)).json());
    expect(rest).toMatchObject({ data: [{ row_no: 4, chunk_no: 1, message: expect.stringContaining('backfill window'), raw: 'i-4,2024-01-01T00:00:00Z,2.00,a,b' }], has_more: false });

    const { rows: events } = await api.db.pool.query(`SELECT type, data FROM outgoing_events WHERE type LIKE 'import.%' ORDER BY type`);
    expect(events.map((e) => e.type)).toEqual(['import.completed', 'import.progress', 'import.progress']);
    expect(events[0].data).toMatchObject({ import_id: created.import_id, accepted: 2, rejected: 3, chunks_landed: 2 });
    expect(events.slice(1).map((e) => e.data.chunk_no).sort()).toEqual([0, 1]);
  });

  it('lands a re-import of the same file as duplicates only, and reports a chunk never uploaded', async () => {
    const again = await create();
    await put(again.import_id, 0, chunk0);
    await put(again.import_id, 1, chunk1);
    await api.client.post(`/v1/imports/${again.import_id}/submit`, { chunk_count: 3 }, api.keys.ingest);
    await landAll();
    const done = importViewSchema.parse((await api.client.get(`/v1/imports/${again.import_id}`, api.keys.ingest)).json());
    expect(done).toMatchObject({ state: 'completed', accepted: 0, duplicates: 2, rejected: 4 });
    const page = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${again.import_id}/rejects?format=json`, api.keys.ingest)).json());
    expect(page.data.at(-1)).toMatchObject({ row_no: null, chunk_no: 2, code: 'svc:import/invalid_chunk', message: expect.stringContaining('missing staged object') });
  });

  it('lands a row as a duplicate of the same fact sent live, and answers the live one of a landed row as a replay', async () => {
    const fact = (id: string, at: string) => ({
      external_id: id,
      schema_version: SCHEMA_VERSION,
      occurred_at: at,
      data: { type: 'p2p', status: 'completed', amount: { value: '1000', asset: 'USD', scale: 2 }, debit: { account_id: 'a' }, credit: { account_id: 'b' } },
    });
    const sentFirst = await api.client.post('/v1/movements', fact('lv-1', '2026-06-03T10:00:00Z'), api.keys.ingest);
    expect(sentFirst.statusCode, sentFirst.body).toBe(202);
    const created = await create();
    await put(created.import_id, 0, ['id,at,amount,from,to', 'lv-1,2026-06-03T10:00:00Z,10.00,a,b', 'lv-2,2026-06-03T11:00:00.5+02:00,10.00,a,b'].join('\n') + '\n');
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: 1 }, api.keys.ingest);
    await landAll();
    const done = importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json());
    expect(done).toMatchObject({ state: 'completed', accepted: 1, duplicates: 1, rejected: 0 });
    const sentAfter = await api.client.post('/v1/movements', fact('lv-2', '2026-06-03T11:00:00.5+02:00'), api.keys.ingest);
    expect([sentAfter.statusCode, sentAfter.json().idempotent_replay]).toEqual([202, true]);
  });

  it('refuses a chunk cut in the middle of a record, unless it is the last', async () => {
    const cut = await create();
    await put(cut.import_id, 0, chunk0);
    // A byte split of "3.50": "3." must not land as 3.00.
    await put(cut.import_id, 1, 'c-4,2026-06-02T10:00:00Z,2.00,a,b\nc-5,2026-06-02T10:00:00Z,3.');
    await put(cut.import_id, 2, '50,a,b\nc-6,2026-06-02T11:00:00Z,1.00,a,b');
    await api.client.post(`/v1/imports/${cut.import_id}/submit`, { chunk_count: 3 }, api.keys.ingest);
    await landAll();
    const page = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${cut.import_id}/rejects?format=json`, api.keys.ingest)).json());
    expect(page.data.filter((r) => r.chunk_no === 1)).toEqual([
      expect.objectContaining({ code: 'svc:import/invalid_chunk', message: expect.stringContaining('ends in the middle of a record') }),
    ]);
    const landed = await api.db.pool.query(`SELECT external_id FROM inbox_events WHERE external_id LIKE 'c-%' ORDER BY external_id`);
    // c-4 before the cut, and c-6 in the last chunk, whose final record needs no terminator.
    expect(landed.rows.map((r) => r.external_id)).toEqual(['c-4', 'c-6']);
  });

  it('stops an import whose ids take @row_no at a chunk-level problem, so a re-import of the fixed file lands each row once', async () => {
    const numbered = movementMapping({ kind: 'csv' }, { external_id: { from: ['id', '@row_no'] }, 'data.debit.account_id': { from: 'from' }, 'data.credit.account_id': { from: 'to' } });
    const row = (id: string) => `${id},2026-06-01T10:00:00Z,1.00,a,b\n`;
    const header = 'id,at,amount,from,to\n';
    const run = async (middle: Buffer) => {
      const res = await api.client.post('/v1/imports', { mapping: numbered, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2025-01-01T00:00:00Z' }, api.keys.ingest);
      const created = importViewSchema.parse(res.json());
      await put(created.import_id, 0, header + row('n-1'));
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/1`, body: middle, key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
      await put(created.import_id, 2, row('n-4'));
      await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: 3 }, api.keys.ingest);
      await landAll();
      return importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json());
    };
    // Chunk 1's second row opens a quote it never closes: nothing after it can be numbered.
    const broken = await run(Buffer.from(row('n-2') + 'n-3,2026-06-01T10:00:00Z,"1.00,a,b\n'));
    expect(broken).toMatchObject({ state: 'failed', failure: expect.stringContaining('@row_no'), accepted: 2 });
    const fixed = await run(Buffer.from(row('n-2') + row('n-3')));
    expect(fixed).toMatchObject({ state: 'completed', accepted: 2, duplicates: 2 });
    // A byte that is not UTF-8 still shows where records end: the later rows keep their numbers,
    // so the import goes on, n-4 keeps the id a clean import gave it (a duplicate, not a new fact).
    const unreadable = await run(Buffer.concat([Buffer.from(row('n-2')), Buffer.from('n-3,2026-06-01T10:00:00Z,1.00,a,'), Buffer.from([0xc3, 0x28]), Buffer.from('\n')]));
    expect(unreadable).toMatchObject({ state: 'completed', accepted: 0, duplicates: 3, rejected: 1 });
  });

  it('refuses a submission whose chunk count leaves a staged chunk out, which landing would drop unseen', async () => {
    const short = await create();
    await put(short.import_id, 0, chunk0);
    await put(short.import_id, 1, chunk1);
    const refused = await api.client.post(`/v1/imports/${short.import_id}/submit`, { chunk_count: 1 }, api.keys.ingest);
    expect(refused.statusCode).toBe(400);
    expect(problemSchema.parse(refused.json())).toMatchObject({ code: 'svc:validation/schema', errors: [{ path: 'chunk_count', message: expect.stringContaining('chunk 1 is staged') }] });
    expect(importViewSchema.parse((await api.client.get(`/v1/imports/${short.import_id}`, api.keys.ingest)).json()).state).toBe('created');
    const submitted = await api.client.post(`/v1/imports/${short.import_id}/submit`, { chunk_count: 2 }, api.keys.ingest);
    expect(importViewSchema.parse(submitted.json())).toMatchObject({ state: 'submitted', chunk_count: 2 });
    await api.client.post(`/v1/imports/${short.import_id}/cancel`, undefined, api.keys.ingest);
  });

  it('fails an import whose first chunk cannot be read, and cancels one not yet landing', async () => {
    const broken = await create();
    await put(broken.import_id, 0, 'id,at,"amount\n');
    await api.client.post(`/v1/imports/${broken.import_id}/submit`, { chunk_count: 1 }, api.keys.ingest);
    await landAll();
    const failed = importViewSchema.parse((await api.client.get(`/v1/imports/${broken.import_id}`, api.keys.ingest)).json());
    expect(failed).toMatchObject({ state: 'failed', failure: expect.stringContaining('chunk 0') });

    const dropped = await create();
    await put(dropped.import_id, 0, 'id,at,amount\n');
    const chunks = async () => (await api.db.pool.query('SELECT count(*)::int AS n FROM import_chunks WHERE import_id = $1', [dropped.import_id.slice('imp_'.length)])).rows[0].n;
    expect(await chunks()).toBe(1);
    // A cancel that cannot drop the staged file leaves the import as it was, to be cancelled again.
    await withTrigger(api.db.pool, { table: 'import_chunks', before: 'DELETE' }, `RAISE EXCEPTION 'chunks away';`, async () => {
      expect((await api.client.post(`/v1/imports/${dropped.import_id}/cancel`, undefined, api.keys.ingest)).statusCode).toBeGreaterThanOrEqual(500);
    });
    expect(importViewSchema.parse((await api.client.get(`/v1/imports/${dropped.import_id}`, api.keys.ingest)).json()).state).toBe('created');
    expect(importViewSchema.parse((await api.client.post(`/v1/imports/${dropped.import_id}/cancel`, undefined, api.keys.ingest)).json()).state).toBe('cancelled');
    expect(await chunks()).toBe(0);
    expect(problemSchema.parse((await api.client.post(`/v1/imports/${dropped.import_id}/submit`, { chunk_count: 1 }, api.keys.ingest)).json()).code).toBe('svc:import/not_open');
  });

  it('refuses bad creations, chunk numbers and other tenants', async () => {
    const bad = await api.client.post('/v1/imports', { mapping: csvMapping, go_live_at: 'soon' }, api.keys.ingest);
    expect(problemSchema.parse(bad.json()).errors.map((e) => e.path)).toEqual(['go_live_at']);
    const inverted = await api.client.post('/v1/imports', { mapping: csvMapping, go_live_at: '2026-01-01T00:00:00Z', backfill_from: '2026-02-01T00:00:00Z' }, api.keys.ingest);
    expect(problemSchema.parse(inverted.json()).errors.map((e) => e.path)).toEqual(['backfill_from']);
    const created = await create();
    expect(problemSchema.parse((await put(created.import_id, -1, 'x')).json()).code).toBe('svc:request/invalid_parameter');
    expect(problemSchema.parse((await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/01`, body: Buffer.from('x'), key: api.keys.ingest, headers: { 'content-type': 'text/csv' } })).json()).code).toBe('svc:request/invalid_parameter');
    await createTenant(api.db.pool, 'umbrella', 'USD');
    const stranger = await api.issue('umbrella', 'ingest');
    expect(problemSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, stranger)).json()).code).toBe('svc:resource/not_found');
    expect((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.read)).statusCode).toBe(403);
  });

  it('refuses an Idempotency-Key rather than ignore it, so a retried creation makes no second import', async () => {
    const keyed = (method: 'POST' | 'PUT', url: string, body?: unknown) =>
      api.client.send({ method, url, key: api.keys.ingest, headers: { 'Idempotency-Key': 'imp-k-1' }, ...(body === undefined ? {} : { body }) });
    const count = async () => (await api.db.pool.query(`SELECT count(*)::int AS n FROM imports WHERE tenant_id = $1`, [api.tenantId])).rows[0].n;
    const before = await count();
    const body = { mapping: csvMapping, go_live_at: '2026-08-01T00:00:00Z' };
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await keyed('POST', '/v1/imports', body);
      expect(res.statusCode).toBe(400);
      expect(problemSchema.parse(res.json()).code).toBe('svc:request/bad_request');
    }
    expect(await count()).toBe(before);
    // The transitions of an existing import are refused too, and leave it as it was.
    const created = await create();
    expect(problemSchema.parse((await keyed('POST', `/v1/imports/${created.import_id}/cancel`)).json()).code).toBe('svc:request/bad_request');
    expect(problemSchema.parse((await keyed('POST', `/v1/imports/${created.import_id}/submit`, { chunk_count: 1 })).json()).code).toBe('svc:request/bad_request');
    expect(importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json()).state).toBe('created');
  });

  it('refuses a body on cancel, which takes none (or {}), and leaves the import open', async () => {
    const created = await create();
    const url = `/v1/imports/${created.import_id}/cancel`;
    const send = (body: unknown, headers?: Record<string, string>) => api.client.send({ method: 'POST', url, body, key: api.keys.ingest, ...(headers ? { headers } : {}) });
    expect(problemSchema.parse((await send('{bad')).json()).code).toBe('svc:request/malformed_json');
    expect(problemSchema.parse((await send({ reason: 'duplicate file' })).json()).errors).toEqual([{ path: 'reason', code: 'svc:validation/schema', message: 'unknown member' }]);
    expect((await send('x', { 'content-type': 'text/plain' })).statusCode).toBe(415);
    expect(importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json()).state).toBe('created');
    expect(importViewSchema.parse((await api.client.post(url, {}, api.keys.ingest)).json()).state).toBe('cancelled');
  });
});

describe('row codes that need landing or a mapped schema_version', () => {
  const mapping = movementMapping(
    { kind: 'jsonl' },
    {
      schema_version: { from: 'v' },
      occurred_at: { from: 'at', type: 'datetime', format: 'epoch_ms' },
      'data.amount': { type: 'money', value: { from: 'minor' }, asset: { const: 'USD' }, units: 'minor' },
    },
  );
  const at = Date.parse('2026-06-01T00:00:00Z');
  const line = (id: string, minor: number, v = '2026-09-01') => JSON.stringify({ id, v, at, minor });
  const runImport = async (lines: string[]) => {
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/0`, body: Buffer.from(`${lines.join('\n')}\n`), key: api.keys.ingest, headers: { 'content-type': 'application/x-ndjson' } });
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: 1 }, api.keys.ingest);
    await landAll();
    return {
      done: importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json()),
      rejects: importRejectPageSchema.parse((await api.client.get(`/v1/imports/${created.import_id}/rejects?format=json`, api.keys.ingest)).json()).data,
    };
  };

  it('reports unsupported_schema_version per row, and sequence/conflict for a fact landed before with other content', async () => {
    const first = await runImport([line('c-1', 100), line('c-2', 200, '2025-01-01')]);
    expect(first.done).toMatchObject({ accepted: 1, rejected: 1 });
    expect(first.rejects).toMatchObject([{ row_no: 2, code: 'svc:validation/unsupported_schema_version', external_id: 'c-2' }]);
    const second = await runImport([line('c-1', 100), line('c-1', 999), line('c-3', 300)]);
    expect(second.done).toMatchObject({ accepted: 1, duplicates: 1, rejected: 1 });
    expect(second.rejects).toMatchObject([
      { row_no: 2, code: 'svc:sequence/conflict', external_id: 'c-1', message: expect.stringContaining('different content'), raw: line('c-1', 999) },
    ]);
  });

  it('lists a landing conflict in row order among a thousand rejects of later rows', async () => {
    await runImport([line('o-1', 100)]);
    const bad = Array.from({ length: 1000 }, () => '{"id": ');
    const { rejects } = await runImport([line('o-1', 999), ...bad, line('o-2', 100)]);
    expect(rejects[0]).toMatchObject({ row_no: 1, code: 'svc:sequence/conflict', external_id: 'o-1' });
    expect(rejects[1]).toMatchObject({ row_no: 2 });
  });
});

describe('chunk-level problems carry their chunk and row', () => {
  it('header mismatch, invalid UTF-8 and a record past the size cap, each stopping only its own chunk', async () => {
    const mapping = movementMapping({ kind: 'csv', header_per_chunk: true }, { 'data.memo': { from: 'memo', optional: true } });
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    const header = 'id,at,amount,memo\n';
    const row = (id: string, memo = '') => `${id},2026-06-01T10:00:00Z,1.00,${memo}\n`;
    const chunks = [
      Buffer.from(header + row('u-1') + row('u-2')),
      Buffer.from('id,at,amount,note\n' + row('u-3')),
      Buffer.concat([Buffer.from(header + row('u-4')), Buffer.from('u-5,2026-06-01T10:00:00Z,1.00,caf'), Buffer.from([0xc3, 0x28]), Buffer.from('\n' + row('u-6'))]),
      Buffer.from(header + row('u-7') + row('u-8', 'x'.repeat(1024 * 1024 + 10))),
    ];
    for (const [n, chunk] of chunks.entries()) {
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/${n}`, body: chunk, key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
    }
    const report = importDryRunReportSchema.parse((await api.client.post(`/v1/imports/${created.import_id}/dry-run`, undefined, api.keys.ingest)).json());
    expect(report.valid).toBe(4);
    expect(report.rejects.map((r) => [r.row_no, r.chunk_no, r.code, r.message])).toEqual([
      [null, 1, 'svc:import/invalid_chunk', expect.stringContaining('header')],
      // u-3, unread in the chunk whose header differs, still has its row (3); so has u-6 (6),
      // unread after the invalid UTF-8: u-8 is 8.
      [5, 2, 'svc:import/invalid_chunk', 'invalid UTF-8; nothing after it in chunk 2 was read'],
      [8, 3, 'svc:import/invalid_chunk', expect.stringContaining('size cap')],
    ]);
  });
});

describe('row numbers past a record too big, a header unlike the first, invalid UTF-8 in the leading lines', () => {
  it('are the file\'s own: the rows after each are counted, unread, and a later row\'s reject names its true row', async () => {
    const mapping = movementMapping({ kind: 'csv', header_per_chunk: true, skip_leading_rows: 1 }, { 'data.memo': { from: 'memo', optional: true } });
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    // Each chunk a whole export: a title line, the header, rows.
    const file = (title: string, ...rows: string[]) => Buffer.from(`${title}\nid,at,amount,memo\n${rows.join('')}`);
    const row = (id: string, memo = '') => `${id},2026-06-01T10:00:00Z,1.00,${memo}\n`;
    const chunks = [
      // Row 2 is past the size cap; row 3 is never read.
      file('export 1', row('v-1'), row('v-2', 'x'.repeat(1024 * 1024 + 10)), row('v-3')),
      file('export 2', row('v-4', 'x,extra')),
      // A header unlike the first's: rows 5 and 6 are never read.
      Buffer.from('export 3\nid,at,amount,note\n' + row('v-5') + row('v-6')),
      file('export 4', row('v-7', 'x,extra')),
      // A byte that is not UTF-8 in the title line: rows 8 and 9 are never read.
      Buffer.concat([Buffer.from('export '), Buffer.from([0xff]), file(' 5', row('v-8'), row('v-9'))]),
      file('export 6', row('v-10', 'x,extra')),
    ];
    for (const [n, chunk] of chunks.entries()) {
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/${n}`, body: chunk, key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
    }
    const expected = [
      [2, 0, 'svc:import/invalid_chunk', null],
      [4, 1, 'svc:validation/schema', 'v-4'],
      [null, 2, 'svc:import/invalid_chunk', null],
      [7, 3, 'svc:validation/schema', 'v-7'],
      [null, 4, 'svc:import/invalid_chunk', null],
      [10, 5, 'svc:validation/schema', 'v-10'],
    ];
    const dry = importDryRunReportSchema.parse((await api.client.post(`/v1/imports/${created.import_id}/dry-run`, undefined, api.keys.ingest)).json());
    expect(dry.rejects.map((r) => [r.row_no, r.chunk_no, r.code, r.external_id])).toEqual(expected);
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: chunks.length }, api.keys.ingest);
    await landAll();
    const rejects = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${created.import_id}/rejects?format=json`, api.keys.ingest)).json());
    expect(rejects.data.map((r) => [r.row_no, r.chunk_no, r.code, r.external_id])).toEqual(expected);
  });
});

describe('row numbers past a header without a mapped column', () => {
  it('are the file\'s own in the whole-file dry-run (landing fails the import at chunk 0)', async () => {
    const mapping = movementMapping({ kind: 'csv' }, { 'data.memo': { from: 'memo', optional: true } });
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    const row = (id: string) => `${id},2026-06-01T10:00:00Z,1.00,\n`;
    const chunks = [
      // No memo column: rows 1 and 2 are never mapped.
      Buffer.from('id,at,amount,note\n' + row('h-1') + row('h-2')),
      // Row 3 holds a byte that is not UTF-8.
      Buffer.concat([Buffer.from('h-3,2026-06-01T10:00:00Z,1.00,caf'), Buffer.from([0xc3, 0x28]), Buffer.from('\n' + row('h-4'))]),
      // Row 5 opens a quote it never closes: nothing after it can be numbered.
      Buffer.from('h-5,"2026-06-01T10:00:00Z,1.00,\n' + row('h-6')),
      Buffer.from(row('h-7')),
    ];
    for (const [n, chunk] of chunks.entries()) {
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/${n}`, body: chunk, key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
    }
    const mismatch = 'mapping mismatch: the header has no column memo';
    const dry = importDryRunReportSchema.parse((await api.client.post(`/v1/imports/${created.import_id}/dry-run`, undefined, api.keys.ingest)).json());
    expect(dry.rejects.map((r) => [r.row_no, r.chunk_no, r.message])).toEqual([
      [null, 0, `${mismatch}; nothing after it in chunk 0 was read`],
      [3, 1, 'invalid UTF-8; nothing after it in chunk 1 was read'],
      [5, 2, 'unterminated quote; nothing after it in chunk 2 was read or counted, so later row numbers may be off'],
      [null, 3, `${mismatch}; nothing after it in chunk 3 was read`],
    ]);
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: chunks.length }, api.keys.ingest);
    await landAll();
    const landed = importViewSchema.parse((await api.client.get(`/v1/imports/${created.import_id}`, api.keys.ingest)).json());
    expect(landed).toMatchObject({ state: 'failed', failure: expect.stringContaining(mismatch) });
  });
});

describe('row numbers past invalid UTF-8', () => {
  it('are the file\'s own: a later row\'s reject names its true row, and its external_id', async () => {
    const mapping = movementMapping({ kind: 'csv' }, { 'data.memo': { from: 'memo', optional: true } });
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    const row = (id: string, memo = '') => `${id},2026-06-01T10:00:00Z,1.00,${memo}\n`;
    const chunks = [
      // Row 2 holds a byte that is not UTF-8; rows 3 and 4 (one over two lines) are never read.
      Buffer.concat([Buffer.from('id,at,amount,memo\n' + row('w-1') + 'w-2,2026-06-01T10:00:00Z,1.00,caf'), Buffer.from([0xc3, 0x28]), Buffer.from('\n' + row('w-3') + row('w-4', '"two\nlines"'))]),
      // Row 5, then row 6 with one field too many.
      Buffer.from(row('w-5') + row('w-6', 'x,extra')),
    ];
    for (const [n, chunk] of chunks.entries()) {
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/${n}`, body: chunk, key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
    }
    const expected = [
      [2, 0, 'svc:import/invalid_chunk', null],
      [6, 1, 'svc:validation/schema', 'w-6'],
    ];
    const dry = importDryRunReportSchema.parse((await api.client.post(`/v1/imports/${created.import_id}/dry-run`, undefined, api.keys.ingest)).json());
    expect(dry.rejects.map((r) => [r.row_no, r.chunk_no, r.code, r.external_id])).toEqual(expected);
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: 2 }, api.keys.ingest);
    await landAll();
    const rejects = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${created.import_id}/rejects?format=json`, api.keys.ingest)).json());
    expect(rejects.data.map((r) => [r.row_no, r.chunk_no, r.code, r.external_id])).toEqual(expected);
    expect(rejects.data[1]).toMatchObject({ message: 'more fields than the header', raw: 'w-6,2026-06-01T10:00:00Z,1.00,x,extra' });
  });

  it('in JSONL too: the lines after the bad byte, or after a line past the size cap, are counted, unread', async () => {
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping: movementMapping({ kind: 'jsonl', comment_prefix: '#' }), go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    const line = (id: string) => `${JSON.stringify({ id, at: '2026-06-01T10:00:00Z', amount: '1.00' })}\n`;
    const chunks = [
      // Row 2 holds a byte that is not UTF-8; rows 3 and 4 (a comment and a blank line between them) are never read.
      Buffer.concat([Buffer.from(line('j-1') + '{"id": "j-2", "memo": "caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n' + line('j-3') + '# note\n\n' + line('j-4'))]),
      // Row 5, then row 6, which is no JSON object.
      Buffer.from(line('j-5') + '[6]\n'),
      // Row 7 is past the size cap; row 8 is never read.
      Buffer.from(`{"id": "j-7", "memo": "${'x'.repeat(1024 * 1024)}"}\n` + line('j-8')),
      Buffer.from('[9]\n'),
    ];
    for (const [n, chunk] of chunks.entries()) {
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/${n}`, body: chunk, key: api.keys.ingest, headers: { 'content-type': 'application/x-ndjson' } });
    }
    const expected = [
      [2, 0, 'svc:import/invalid_chunk'],
      [6, 1, 'svc:validation/schema'],
      [7, 2, 'svc:import/invalid_chunk'],
      [9, 3, 'svc:validation/schema'],
    ];
    const dry = importDryRunReportSchema.parse((await api.client.post(`/v1/imports/${created.import_id}/dry-run`, undefined, api.keys.ingest)).json());
    expect(dry.rejects.map((r) => [r.row_no, r.chunk_no, r.code])).toEqual(expected);
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: chunks.length }, api.keys.ingest);
    await landAll();
    const rejects = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${created.import_id}/rejects?format=json`, api.keys.ingest)).json());
    expect(rejects.data.map((r) => [r.row_no, r.chunk_no, r.code])).toEqual(expected);
  });
});

describe('imports that must not stop the queue or leak', () => {
  const jsonl = movementMapping({ kind: 'jsonl' });
  // One chunk per list of lines.
  const start = async (...chunks: string[][]) => {
    const created = importViewSchema.parse(
      (await api.client.post('/v1/imports', { mapping: jsonl, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2026-01-01T00:00:00Z' }, api.keys.ingest)).json(),
    );
    for (const [n, lines] of chunks.entries()) {
      await api.client.send({ method: 'PUT', url: `/v1/imports/${created.import_id}/chunks/${n}`, body: Buffer.from(`${lines.join('\n')}\n`), key: api.keys.ingest, headers: { 'content-type': 'application/x-ndjson' } });
    }
    await api.client.post(`/v1/imports/${created.import_id}/submit`, { chunk_count: chunks.length }, api.keys.ingest);
    return created.import_id;
  };
  const line = (id: string) => JSON.stringify({ id, at: '2026-06-01T00:00:00Z', amount: '1.00' });
  // The inbox refuses the first `times` inserts of each listed row, with the given SQLSTATE; a
  // sequence counts them, as a rolled-back savepoint does not undo it.
  async function withRefusedRows(ids: string[], times: number, sqlstate: string, work: () => Promise<void>): Promise<void> {
    for (const id of ids) await api.db.pool.query(`CREATE SEQUENCE "refuse_${id}"`);
    const refuse = `IF NEW.external_id = ANY (ARRAY[${ids.map((id) => `'${id}'`).join(',')}]) AND nextval(format('%I', 'refuse_' || NEW.external_id)) <= ${times} THEN
        RAISE EXCEPTION 'inbox refused %', NEW.external_id USING ERRCODE = '${sqlstate}';
      END IF;`;
    await withTrigger(api.db.pool, { table: 'inbox_events', before: 'INSERT' }, refuse, work).finally(async () => {
      for (const id of ids) await api.db.pool.query(`DROP SEQUENCE "refuse_${id}"`);
    });
  }
  const stepTimes = async (worker: ImportWorker, n: number) => {
    for (let i = 0; i < n; i++) await worker.step();
  };
  const view = async (id: string) => importViewSchema.parse((await api.client.get(`/v1/imports/${id}`, api.keys.ingest)).json());

  it('never echoes a card number given as an external_id, and refuses U+0000 in one as a row reject', async () => {
    const id = await start([
      JSON.stringify({ id: '4111 1111 1111 1111', at: '2026-06-01T00:00:00Z', amount: 'oops' }),
      JSON.stringify({ id: 'nul\u0000id', at: '2026-06-01T00:00:00Z', amount: '1.00' }),
      JSON.stringify({ id: 'fine-1', at: '2026-06-01T00:00:00Z', amount: '1.00' }),
    ]);
    await landAll();
    expect(await view(id)).toMatchObject({ state: 'completed', accepted: 1, rejected: 2 });
    const csv = (await api.client.get(`/v1/imports/${id}/rejects`, api.keys.ingest)).body;
    expect(csv).not.toContain('4111');
    expect(csv).toContain('U+0000');
  });

  it('fails an import whose landing keeps failing unexpectedly, and lands the one behind it', async () => {
    const stuck = await start([JSON.stringify({ id: 'stuck-1', at: '2026-06-01T00:00:00Z', amount: '1.00' })]);
    api.clock.advance(1);
    const behind = await start([JSON.stringify({ id: 'behind-1', at: '2026-06-01T00:00:00Z', amount: '1.00' })]);
    // The first import's stored mapping stops compiling: every attempt at its chunk throws.
    await api.db.pool.query(`UPDATE imports SET mapping = '{"mapping_version": 2}' WHERE import_id = $1`, [stuck.slice('imp_'.length)]);
    const errors: unknown[] = [];
    const worker = importWorker((e) => errors.push(e));
    await stepTimes(worker, 10);
    expect(errors).toHaveLength(3);
    expect(await view(stuck)).toMatchObject({ state: 'failed', failure: 'chunk 0 could not be landed' });
    expect(await view(behind)).toMatchObject({ state: 'completed', accepted: 1 });
  });

  it('only tries a chunk again after a failure that passes (a deadlock), however often', async () => {
    const id = await start([line('deadlocked-1')]);
    const errors: unknown[] = [];
    await withRefusedRows(['deadlocked-1'], 4, '40P01', () => stepTimes(importWorker((e) => errors.push(e)), 6));
    expect(errors).toHaveLength(4);
    expect(await view(id)).toMatchObject({ state: 'completed', accepted: 1 });
  });

  it('counts other failures against one chunk, not the import\'s whole life', async () => {
    const id = await start([line('flaky-a')], [line('flaky-b')], [line('flaky-c')]);
    const errors: unknown[] = [];
    await withRefusedRows(['flaky-a', 'flaky-b', 'flaky-c'], 1, 'P0001', () => stepTimes(importWorker((e) => errors.push(e)), 8));
    expect(errors).toHaveLength(3);
    expect(await view(id)).toMatchObject({ state: 'completed', accepted: 3 });
  });
});

// Runs last: every event the imports enqueued, swept from the outbox.
it('every event the imports enqueued parses with its type\'s declared payload', async () => {
  const swept = await sweepOutbox(api.db.pool);
  expect(swept.refused).toEqual([]);
  expect(swept.types).toEqual(expect.arrayContaining(['import.progress', 'import.completed']));
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDryRunReportSchema } from '../../../schemas/imports/reports.ts';
import { problemSchema } from '../../../schemas/problem.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
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
    expect(byRow[8]).toMatchObject({ code: 'svc:validation/schema', message: expect.stringContaining('more fields than the header') });
    expect(byRow[9]).toMatchObject({ code: 'svc:validation/money_scale_mismatch', message: expect.stringContaining('asset registry') });
    expect(res.body).not.toContain('4111');
    const { rows: after } = await api.db.pool.query(`SELECT count(*)::int AS n FROM inbox_events`);
    expect(after[0].n).toBe(before[0].n);
  });

  it('reports a chunk-level problem as a reject, keeping the rows before it', async () => {
    const res = await dryRun({ mapping: movements, sample: `${sample.split('\n').slice(0, 2).join('\n')}\nm-10;"01.07.2026 10:00;ok` });
    const report = importDryRunReportSchema.parse(res.json());
    expect(report).toMatchObject({ valid: 1, rejected: 1 });
    expect(report.rejects).toEqual([
      { row_no: 2, chunk_no: 0, code: 'svc:import/invalid_chunk', object_type: 'movement', external_id: null, message: expect.stringContaining('unterminated quote'), raw: null },
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
});

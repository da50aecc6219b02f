// The committed example mappings (examples/imports/) import the shared real datasets as they are,
// end to end: chunks uploaded through the API, landed by the import worker, counted.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportWorker } from '../pipelines/imports/worker.ts';
import { TenantAssetRegistry } from '../platform/assets/tenant-registry.ts';
import { importRejectPageSchema, importViewSchema } from '../schemas/imports/reports.ts';
import { datasetsDir } from './support/datasets.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

const DATASETS = datasetsDir();
const EXAMPLES = join(import.meta.dirname, '../examples/imports');
const CHUNK_BYTES = 1024 * 1024;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await api.db.pool.query(`INSERT INTO tenant_assets (tenant_id, asset, scale) VALUES ('acme', 'X-BTC', 8), ('acme', 'X-PAYSIM', 2)`);
});
afterAll(() => api.close());

// Whole lines per chunk (none of these files has a line break inside a quoted field).
function chunksOf(file: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  let start = 0;
  while (start < file.length) {
    let end = Math.min(start + CHUNK_BYTES, file.length);
    if (end < file.length) end = file.lastIndexOf(0x0a, end - 1) + 1;
    chunks.push(file.subarray(start, end));
    start = end;
  }
  return chunks;
}

async function importFile(mappingName: string, dataFile: string, window: { go_live_at: string; backfill_from: string }) {
  const mapping = JSON.parse(await readFile(join(EXAMPLES, mappingName), 'utf8'));
  const created = await api.client.post('/v1/imports', { mapping, ...window }, api.keys.ingest);
  expect(created.statusCode, created.body).toBe(201);
  const { import_id: id } = importViewSchema.parse(created.json());
  const chunks = chunksOf(await readFile(join(DATASETS, dataFile)));
  for (const [n, chunk] of chunks.entries()) {
    const put = await api.client.send({ method: 'PUT', url: `/v1/imports/${id}/chunks/${n}`, body: chunk, key: api.keys.ingest, headers: { 'content-type': 'text/csv' } });
    expect(put.statusCode, put.body).toBe(201);
  }
  expect((await api.client.post(`/v1/imports/${id}/submit`, { chunk_count: chunks.length }, api.keys.ingest)).statusCode).toBe(202);
  const worker = new ImportWorker({ pool: api.db.pool, clock: api.clock, assets: new TenantAssetRegistry(api.db.pool), futureSkewMs: 300_000 });
  while (await worker.step());
  const done = importViewSchema.parse((await api.client.get(`/v1/imports/${id}`, api.keys.ingest)).json());
  const rejects = importRejectPageSchema.parse((await api.client.get(`/v1/imports/${id}/rejects?format=json`, api.keys.ingest)).json());
  return { done, rejects: rejects.data, chunks: chunks.length };
}

const countLines = async (file: string, test: (fields: string[]) => boolean) =>
  (await readFile(join(DATASETS, file), 'utf8')).split('\r\n').slice(1).filter((line) => test(line.split(';'))).length;

describe('example mappings on the shared datasets', () => {
  it('Berka trans.asc: credits and debits by row filter; the cut-off last line is a chunk-level reject', async () => {
    const window = { go_live_at: '2000-01-01T00:00:00Z', backfill_from: '1990-01-01T00:00:00Z' };
    const credits = await importFile('berka-trans-credits.json', 'berka_pkdd99/trans.asc', window);
    const debits = await importFile('berka-trans-debits.json', 'berka_pkdd99/trans.asc', window);
    // Counted here from the file itself: type PRIJEM is a credit, VYDAJ and VYBER are debits.
    const prijem = await countLines('berka_pkdd99/trans.asc', (f) => f[3] === '"PRIJEM"');
    const vydaj = await countLines('berka_pkdd99/trans.asc', (f) => f[3] === '"VYDAJ"' || f[3] === '"VYBER"');
    expect(prijem).toBe(22_994);
    expect(credits.done).toMatchObject({ state: 'completed', rows_read: 49_103, accepted: prijem, skipped: vydaj, rejected: 1, duplicates: 0 });
    expect(debits.done).toMatchObject({ state: 'completed', rows_read: 49_103, accepted: vydaj, skipped: prijem, rejected: 1 });
    expect(credits.rejects).toEqual([
      { row_no: 49_103, chunk_no: credits.chunks - 1, code: 'svc:import/invalid_chunk', object_type: 'movement', external_id: null, message: `unterminated quote; nothing after it in chunk ${credits.chunks - 1} was read`, raw: null },
    ]);
    const { rows } = await api.db.pool.query(`SELECT raw_event FROM inbox_events WHERE tenant_id = 'acme' AND object = 'movement' AND external_id = '695247'`);
    expect(JSON.parse(rows[0].raw_event.toString())).toEqual({
      external_id: '695247',
      schema_version: '2026-09-01',
      occurred_at: '1992-12-31T23:00:00.000Z',
      data: {
        type: 'cash_in',
        status: 'completed',
        amount: { value: '70000', asset: 'CZK', scale: 2 },
        cash: true,
        credit: { account_id: '2378' },
        debit: { counterparty: { name_as_given: 'cash' } },
      },
    });
  }, 120_000);

  it('AMLworld HI-Small sample: naive timestamps, currency names, decimal amounts; a yen amount with cents is refused', async () => {
    const { done, rejects } = await importFile('amlworld-hi-small.json', 'ibm_aml_hi_small/HI-Small_Trans_sample.csv', {
      go_live_at: '2022-10-01T00:00:00Z',
      backfill_from: '2022-01-01T00:00:00Z',
    });
    expect(done).toMatchObject({ state: 'completed', rows_read: 28_374, accepted: 28_373, rejected: 1, skipped: 0, duplicates: 0 });
    expect(rejects).toMatchObject([{ row_no: 15_301, code: 'svc:validation/money_scale_mismatch', external_id: '2022/09/12 03:44|7548|8040AE4F0|15301' }]);
  }, 120_000);

  it('PaySim: both subsets, scientific-notation amounts read exactly; a second import of one is all duplicates', async () => {
    const window = { go_live_at: '1970-02-01T00:00:00Z', backfill_from: '1970-01-01T00:00:00Z' };
    const subset = await importFile('paysim.json', 'paysim/nguyentanthanh_subset/PS_20174392719_1491204439457_log.csv', window);
    expect(subset.done).toMatchObject({ state: 'completed', rows_read: 12_651, accepted: 12_651, rejected: 0 });
    const head = await importFile('paysim.json', 'paysim/kumudunee_head/PS_20174392719_1491204439457_log.csv', window);
    expect(head.done).toMatchObject({ state: 'completed', rows_read: 2_688, rejected: 0 });
    const again = await importFile('paysim.json', 'paysim/kumudunee_head/PS_20174392719_1491204439457_log.csv', window);
    expect(again.done).toMatchObject({ state: 'completed', rows_read: 2_688, accepted: 0, duplicates: 2_688, rejected: 0 });
  }, 120_000);
});

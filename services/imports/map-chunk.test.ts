// A chunk whose header lacks a column the mapping reads: no row of it is mapped, but its records are
// still counted, so the next chunk starts at its true row number.
import { describe, expect, it } from 'vitest';
import { movementMapping } from '../../test/fixtures/import-mappings.ts';
import { mapChunk, type MappedRow } from './map-chunk.ts';
import { compileMapping } from './mapping/compile.ts';
import { source } from './dialects/test-kit.ts';

const compiled = compileMapping(movementMapping({ kind: 'csv' }, { 'data.memo': { from: 'memo', optional: true } }));
if (!compiled.ok) throw new Error('the test mapping does not compile');
const mapping = compiled.mapping;
const validation = { registry: { scaleOf: () => 2 }, nowMs: Date.parse('2026-07-01T00:00:00Z'), futureSkewMs: 0 };
const row = (id: string) => `${id},2026-06-01T10:00:00Z,1.00\n`;

async function map(body: string | Buffer, more = true) {
  const reading = mapChunk(mapping, source(body), { chunkNo: 0, firstRowNo: 1, more }, { validation });
  const rows: MappedRow[] = [];
  for await (const mapped of reading.rows) rows.push(mapped);
  return { rows, nextRowNo: reading.nextRowNo() };
}

describe('a header without a mapped column', () => {
  it('rejects the chunk before its first row, and counts its rows by reading them', async () => {
    // Rows 1 to 3 (one over two lines), an empty line between.
    const { rows, nextRowNo } = await map('id,at,amount\n' + row('r-1') + 'r-2,"2026-06-01\nT10:00:00Z",1.00\n\n' + row('r-3'));
    expect(rows).toEqual([{ kind: 'rejected', reject: expect.objectContaining({ row_no: null, message: 'mapping mismatch: the header has no column memo; nothing after it in chunk 0 was read' }) }]);
    expect(nextRowNo).toBe(4);
  });

  it('takes the count of a later problem past which the records are still counted', async () => {
    const body = Buffer.concat([Buffer.from('id,at,amount\n' + row('r-1') + 'r-2,caf'), Buffer.from([0xff]), Buffer.from('\n' + row('r-3') + row('r-4'))]);
    expect((await map(body)).nextRowNo).toBe(5);
  });

  it('says so when a later problem leaves the rows after it uncounted and more chunks follow', async () => {
    const body = 'id,at,amount\n' + row('r-1') + 'r-2,"open\n' + row('r-3');
    const { rows, nextRowNo } = await map(body);
    expect(nextRowNo).toBeUndefined();
    expect(rows).toMatchObject([{ reject: { message: 'mapping mismatch: the header has no column memo; nothing after it in chunk 0 was read or counted, so later row numbers may be off' } }]);
    expect((await map(body, false)).rows).toMatchObject([{ reject: { message: 'mapping mismatch: the header has no column memo; nothing after it in chunk 0 was read' } }]);
  });
});

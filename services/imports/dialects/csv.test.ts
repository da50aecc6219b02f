import { createReadStream } from 'node:fs';
import { dataset } from '../../../test/support/datasets.ts';
import { CHUNK0, collect, source } from './test-kit.ts';
import { describe, expect, it } from 'vitest';
import { readCsvChunk } from './csv.ts';
import { ChunkError, type ChunkPosition, type CsvDialect, type SourceRecord } from './types.ts';

const BERKA_TRANS = dataset('berka_pkdd99', 'trans.asc');

function dialect(over: Partial<CsvDialect> = {}): CsvDialect {
  return { delimiter: ',', quote: '"', hasHeader: true, headerPerChunk: false, skipLeadingRows: 0, nullValues: [], ...over };
}

async function read(input: string | Buffer | Buffer[], d: Partial<CsvDialect> = {}, at = CHUNK0, size?: number, maxRecordBytes?: number) {
  const reader = readCsvChunk(source(input, size), dialect(d), at, maxRecordBytes === undefined ? {} : { maxRecordBytes });
  return { reader, ...(await collect(reader)) };
}

/** Each record as [rowNo, the given columns' values] (bad rows as [rowNo, 'bad', message]). */
function values(records: SourceRecord[], columns: string[]): unknown[] {
  return records.map((r) => {
    if (r.kind === 'bad_row') return [r.rowNo, 'bad', r.message];
    if (r.row.kind !== 'csv') throw new Error('not a CSV row');
    const row = r.row;
    return [r.rowNo, ...columns.map((c) => row.get(c))];
  });
}

describe('CSV dialect reader', () => {
  it('reads a header and rows; get() gives the text, undefined for unknown columns, short records and null values', async () => {
    const { reader, records, error } = await read('id,name,note\n1,Ann,x\n2,NULL,\n3,Bob\n', { nullValues: ['NULL', ''] });
    expect(error).toBeUndefined();
    expect(values(records, ['id', 'name', 'note', 'nope'])).toEqual([
      [1, '1', 'Ann', 'x', undefined],
      [2, '2', undefined, undefined, undefined],
      [3, '3', 'Bob', undefined, undefined],
    ]);
    expect(records.map((r) => [r.chunkNo, r.raw])).toEqual([[0, '1,Ann,x'], [0, '2,NULL,'], [0, '3,Bob']]);
    expect(reader.header()).toEqual(['id', 'name', 'note']);
    expect(reader.fileHeader()).toEqual(['id', 'name', 'note']);
    expect(reader.rowsRead()).toBe(3);
  });

  it('reads CRLF, a last line without a terminator, and keeps a lone CR as data', async () => {
    const { records, error } = await read('a,b\r\n1,2\r\n3,x\ry\r\n4,5');
    expect(error).toBeUndefined();
    expect(values(records, ['a', 'b'])).toEqual([[1, '1', '2'], [2, '3', 'x\ry'], [3, '4', '5']]);
    expect(records.map((r) => r.raw)).toEqual(['1,2', '3,x\ry', '4,5']);
  });

  it('reads quoted delimiters, line breaks inside quotes and doubled quotes; raw is the source text', async () => {
    const input = 'a,b,c\r\n"x,y","line1\r\nline2\nline3","say ""hi"""\r\n"",plain,""""\r\n';
    const { records, error } = await read(input);
    expect(error).toBeUndefined();
    expect(values(records, ['a', 'b', 'c'])).toEqual([
      [1, 'x,y', 'line1\r\nline2\nline3', 'say "hi"'],
      [2, '', 'plain', '"'],
    ]);
    expect(records[0]!.raw).toBe('"x,y","line1\r\nline2\nline3","say ""hi"""');
    expect(records[1]!.raw).toBe('"",plain,""""');
  });

  it('uses the dialect delimiter and quote (tab and single quote, doubled to escape)', async () => {
    const { records, error } = await read("a\tb\n'x\ty'\t'it''s'\n", { delimiter: '\t', quote: "'" });
    expect(error).toBeUndefined();
    expect(values(records, ['a', 'b'])).toEqual([[1, 'x\ty', "it's"]]);
  });

  it('keeps a quote inside an unquoted field as literal text', async () => {
    const { records, error } = await read('a,b\n5" screen,2\n');
    expect(error).toBeUndefined();
    expect(values(records, ['a', 'b'])).toEqual([[1, '5" screen', '2']]);
  });

  it('reads the Berka style: semicolons, every field quoted, empty quoted fields', async () => {
    const berka = ['trans_id', 'account_id', 'date', 'type', 'operation', 'amount', 'balance', 'k_symbol', 'bank', 'account'];
    const header = berka.map((c) => `"${c}"`).join(';') + '\r\n';
    const line = '"695247";"2378";"930101";"PRIJEM";"VKLAD";"700";"700";"";"";""';
    // The same with one more empty field than the ten columns of trans.asc.
    const longer = '"695247";"2378";"930101";"PRIJEM";"VKLAD";"700";"700";"";"";"";""';
    const { records, error } = await read(header + line + '\r\n' + longer + '\r\n', { delimiter: ';', nullValues: [''] });
    expect(error).toBeUndefined();
    expect(values(records, berka)).toEqual([
      [1, '695247', '2378', '930101', 'PRIJEM', 'VKLAD', '700', '700', undefined, undefined, undefined],
      [2, 'bad', 'more fields than the header'],
    ]);
    expect(records.map((r) => r.raw)).toEqual([line, longer]);
    // Read without a header, eleven named columns take all of it.
    const named = await read(longer + '\n', { delimiter: ';', hasHeader: false, columns: [...berka, 'extra'] });
    expect(values(named.records, ['trans_id', 'type', 'extra'])).toEqual([[1, '695247', 'PRIJEM', '']]);
  });

  it('reads the first 200 lines of the real Berka trans.asc', async () => {
    async function* firstLines(n: number): AsyncGenerator<Buffer> {
      let lines = 0;
      for await (const chunk of createReadStream(BERKA_TRANS, { highWaterMark: 4096 }) as AsyncIterable<Buffer>) {
        let cut = -1;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) {
          if (++lines === n) {
            cut = i + 1;
            break;
          }
        }
        if (cut >= 0) {
          yield chunk.subarray(0, cut);
          return;
        }
        yield chunk;
      }
    }
    const reader = readCsvChunk(firstLines(200), dialect({ delimiter: ';', nullValues: [''] }), CHUNK0);
    const { records, error } = await collect(reader);
    expect(error).toBeUndefined();
    expect(reader.header()).toEqual(['trans_id', 'account_id', 'date', 'type', 'operation', 'amount', 'balance', 'k_symbol', 'bank', 'account']);
    expect(records).toHaveLength(199);
    expect(records.every((r) => r.kind === 'row')).toBe(true);
    expect(records.map((r) => r.rowNo)).toEqual(Array.from({ length: 199 }, (_, i) => i + 1));
    expect(values(records.slice(0, 1), ['trans_id', 'account_id', 'date', 'type', 'operation', 'amount', 'balance', 'k_symbol', 'bank', 'account'])).toEqual([
      [1, '695247', '2378', '930101', 'PRIJEM', 'VKLAD', '700.00', '700.00', undefined, undefined, undefined],
    ]);
    expect(records[0]!.raw).toBe('695247;2378;930101;"PRIJEM";"VKLAD";700.00;700.00;"";;');
  });

  it('reads the whole (truncated) Berka trans.asc: 49,102 rows, then the cut-off last line is an unterminated quote', async () => {
    const reader = readCsvChunk(createReadStream(BERKA_TRANS) as AsyncIterable<Buffer>, dialect({ delimiter: ';' }), CHUNK0);
    let rows = 0;
    let lastRowNo = 0;
    let error: unknown;
    try {
      for await (const r of reader.records) {
        if (r.kind === 'row') rows++;
        lastRowNo = r.rowNo;
      }
    } catch (e) {
      error = e;
    }
    expect(rows).toBe(49_102);
    expect(lastRowNo).toBe(49_102);
    expect(error).toBeInstanceOf(ChunkError);
    expect(error).toMatchObject({ message: 'unterminated quote', rowNo: 49_103, chunkNo: 0, code: 'svc:import/invalid_chunk' });
    expect((error as Error).message).not.toContain('PRIJE');
  });

  it('drops a UTF-8 BOM at the start of chunk 0, even split over Buffers, but nowhere else', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const input = Buffer.concat([bom, Buffer.from('a,b\n1,2\n')]);
    for (const size of [1, 2, Infinity]) {
      const { reader, records } = await read(input, {}, CHUNK0, size);
      expect(reader.header()).toEqual(['a', 'b']);
      expect(values(records, ['a'])).toEqual([[1, '1']]);
    }
    const later = await read(Buffer.concat([bom, Buffer.from('1,2\n')]), {}, { chunkNo: 1, firstRowNo: 5, header: ['a', 'b'] });
    expect(values(later.records, ['a'])).toEqual([[5, '\ufeff1']]);
  });

  it('skips skip_leading_rows physical lines of chunk 0 before the header, whatever they hold', async () => {
    const input = 'Report "Q1, 2024\nexported by x;y\r\na,b\n1,2\n';
    const { reader, records, error } = await read(input, { skipLeadingRows: 2 });
    expect(error).toBeUndefined();
    expect(reader.header()).toEqual(['a', 'b']);
    expect(values(records, ['a', 'b'])).toEqual([[1, '1', '2']]);
    // Later chunks (no header_per_chunk) start mid-file: nothing is skipped there.
    const later = await read('3,4\n5,6\n', { skipLeadingRows: 2 }, { chunkNo: 1, firstRowNo: 2, header: ['a', 'b'] });
    expect(values(later.records, ['a', 'b'])).toEqual([[2, '3', '4'], [3, '5', '6']]);
  });

  it('skips comment lines and empty lines without counting them; raw leaves them out', async () => {
    const input = '# exported "today"\r\na,b\r\n\r\n1,2\r\n# a, "comment\r\n\n\n2,#3\r\n"#4",5\n// not a comment here\n';
    const { records, error } = await read(input, { commentPrefix: '#' });
    expect(error).toBeUndefined();
    expect(values(records, ['a', 'b'])).toEqual([[1, '1', '2'], [2, '2', '#3'], [3, '#4', '5'], [4, '// not a comment here', undefined]]);
    expect(records.map((r) => r.raw)).toEqual(['1,2', '2,#3', '"#4",5', '// not a comment here']);
    const multi = await read('a,b\n// note\n1,2\n', { commentPrefix: '//' });
    expect(values(multi.records, ['a', 'b'])).toEqual([[1, '1', '2']]);
  });

  it('without a header, columns name the fields from the first record', async () => {
    const { reader, records, error } = await read('1,2\n3,4,5\n', { hasHeader: false, columns: ['x', 'y'] });
    expect(error).toBeUndefined();
    expect(values(records, ['x', 'y'])).toEqual([[1, '1', '2'], [2, 'bad', 'more fields than the header']]);
    expect(reader.header()).toEqual(['x', 'y']);
    expect(reader.fileHeader()).toBeUndefined();
  });

  it('columns override a present header, which is still consumed', async () => {
    const { reader, records, error } = await read('A,B\n1,2\n', { columns: ['x', 'y'] });
    expect(error).toBeUndefined();
    expect(values(records, ['x', 'y', 'A'])).toEqual([[1, '1', '2', undefined]]);
    expect(reader.header()).toEqual(['x', 'y']);
    expect(reader.fileHeader()).toEqual(['A', 'B']);
    const wrong = await read('A,B,C\n1,2,3\n', { columns: ['x', 'y'] });
    expect(wrong.error).toMatchObject({ message: 'the columns given and the header differ in length', rowNo: undefined });
  });

  it('a record with more fields than the header is a bad row; numbering goes on', async () => {
    const { reader, records, error } = await read('a,b\n1,2\n1,2,3\n"x,y",z,\n4\n');
    expect(error).toBeUndefined();
    expect(records.map((r) => [r.rowNo, r.kind, r.raw, r.kind === 'bad_row' ? r.message : ''])).toEqual([
      [1, 'row', '1,2', ''],
      [2, 'bad_row', '1,2,3', 'more fields than the header'],
      [3, 'bad_row', '"x,y",z,', 'more fields than the header'],
      [4, 'row', '4', ''],
    ]);
    expect(reader.rowsRead()).toBe(4);
  });

  it('a header that repeats a column name is a chunk error', async () => {
    const { records, error } = await read('a,b,a\n1,2,3\n');
    expect(records).toEqual([]);
    expect(error).toMatchObject({ message: 'header repeats a column name', rowNo: undefined, chunkNo: 0 });
    expect((await read('1,2\n', { hasHeader: false, columns: ['x', 'x'] })).error?.message).toBe('header repeats a column name');
  });

  it('numbers rows globally across chunks; a later chunk uses the header given back', async () => {
    const first = await read('a,b\n1,2\n3,4\n');
    const at: ChunkPosition = { chunkNo: 1, firstRowNo: first.reader.rowsRead() + 1, header: first.reader.fileHeader() };
    const second = await read('5,6\n\n7,8\n', {}, at);
    expect([...values(first.records, ['a', 'b']), ...values(second.records, ['a', 'b'])]).toEqual([
      [1, '1', '2'],
      [2, '3', '4'],
      [3, '5', '6'],
      [4, '7', '8'],
    ]);
    expect(second.records.map((r) => r.chunkNo)).toEqual([1, 1]);
    const missing = await read('5,6\n', {}, { chunkNo: 1, firstRowNo: 3 });
    expect(missing.error?.message).toBe("the first chunk's header was not given");
  });

  it('counts the records after a header that cannot be used, unread, so the next chunk starts at its true row number', async () => {
    const at = { chunkNo: 1, firstRowNo: 7, header: ['a', 'b'] };
    const perChunk = { hasHeader: true, headerPerChunk: true };
    const differs = await read('a,c\n1,2\n"3\n",4\n', perChunk, at);
    expect(differs.error).toMatchObject({ message: "header differs from the first chunk's", rowNo: undefined, nextRowNo: 9 });
    const repeats = await read('a,a\r\n1,2\r\n', { hasHeader: true }, CHUNK0);
    expect(repeats.error).toMatchObject({ message: 'header repeats a column name', nextRowNo: 2 });
  });

  it('with header_per_chunk every chunk is a whole file: leading rows and the header again, which must match', async () => {
    const d = { headerPerChunk: true, skipLeadingRows: 1 };
    const first = await read('export 1\na,b\n1,2\n', d);
    expect(values(first.records, ['a', 'b'])).toEqual([[1, '1', '2']]);
    const header = first.reader.fileHeader();
    const second = await read('\ufeffexport 2\r\na,b\r\n3,4\r\n', d, { chunkNo: 1, firstRowNo: 2, header });
    expect(second.error).toBeUndefined();
    expect(values(second.records, ['a', 'b'])).toEqual([[2, '3', '4']]);
    const third = await read('export 3\na,c\n5,6\n', d, { chunkNo: 2, firstRowNo: 3, header });
    expect(third.records).toEqual([]);
    expect(third.error).toBeInstanceOf(ChunkError);
    expect(third.error).toMatchObject({ message: "header differs from the first chunk's", rowNo: undefined, chunkNo: 2 });
  });

  it('a chunk 0 without its header record is a chunk error', async () => {
    expect((await read('')).error?.message).toBe('the chunk has no header record');
    expect((await read('only\nleading\n', { skipLeadingRows: 5 })).error?.message).toBe('the chunk has no header record');
  });

  it('refuses an unreadable dialect as a chunk error', async () => {
    expect((await read('a\n', { delimiter: '"' })).error?.message).toBe('mapping: the delimiter must differ from the quote');
    expect((await read('a\n', { hasHeader: false })).error?.message).toBe('mapping: columns are required without a header');
    expect((await read('a\n', { quote: '' })).error?.message).toMatch(/^mapping: the quote/);
  });

  it('an unterminated quote is a chunk error on the row it opens in', async () => {
    const { records, error } = await read('a,b\n1,2\n3,"open\n4,5\n');
    expect(values(records, ['a'])).toEqual([[1, '1']]);
    expect(error).toMatchObject({ message: 'unterminated quote', rowNo: 2, chunkNo: 0 });
    expect(error!.message).not.toContain('open');
  });

  it('refuses a chunk other than the last that ends in the middle of a record; the last, or a whole file per chunk, may', async () => {
    // A byte split of "100.00": its head must not land as 10.
    const cut = 'id,amt\n1,100.00\n2,10';
    const more = await read(cut, {}, { ...CHUNK0, more: true });
    expect(values(more.records, ['amt'])).toEqual([[1, '100.00']]);
    expect(more.error).toMatchObject({ message: expect.stringContaining('ends in the middle of a record'), rowNo: 2, chunkNo: 0, code: 'svc:import/invalid_chunk' });
    expect(values((await read(cut)).records, ['amt'])).toEqual([[1, '100.00'], [2, '10']]);
    expect((await read(cut, { headerPerChunk: true }, { ...CHUNK0, more: true })).error).toBeUndefined();
    expect((await read(`${cut}\r\n`, {}, { ...CHUNK0, more: true })).error).toBeUndefined();
  });

  describe('UTF-8', () => {
    const euro = Buffer.from('€'); // e2 82 ac

    it('accepts multi-byte characters split across Buffers', async () => {
      const pieces = [Buffer.from('a,b\n1,'), euro.subarray(0, 1), euro.subarray(1, 2), Buffer.concat([euro.subarray(2), Buffer.from('x\n2,ü\n')])];
      const { records, error } = await read(pieces);
      expect(error).toBeUndefined();
      expect(values(records, ['a', 'b'])).toEqual([[1, '1', '€x'], [2, '2', 'ü']]);
      const oneByOne = await read('a,b\n€,日本語\n', {}, CHUNK0, 1);
      expect(values(oneByOne.records, ['a', 'b'])).toEqual([[1, '€', '日本語']]);
    });

    it('refuses invalid bytes split across two Buffers, naming the row they sit in', async () => {
      // e2 82 then "(": the sequence is cut short in the second Buffer.
      const pieces = [Buffer.from('a,b\n1,x\n2,'), euro.subarray(0, 2), Buffer.from('(\n3,y\n')];
      const { records, error } = await read(pieces);
      expect(values(records, ['a'])).toEqual([[1, '1']]);
      expect(error).toBeInstanceOf(ChunkError);
      expect(error).toMatchObject({ message: 'invalid UTF-8', rowNo: 2, chunkNo: 0 });
    });

    it('names the row right after a record end, inside a quoted field, and in the header', async () => {
      const afterEnd = await read([Buffer.from('a,b\n1,x\r\n'), Buffer.from([0xff]), Buffer.from('2,y\n')]);
      expect(values(afterEnd.records, ['a'])).toEqual([[1, '1']]);
      expect(afterEnd.error).toMatchObject({ message: 'invalid UTF-8', rowNo: 2 });
      const quoted = await read([Buffer.from('a,b\n1,x\n2,"multi\nline '), Buffer.from([0xc0, 0x80]), Buffer.from('"\n')]);
      expect(quoted.error).toMatchObject({ message: 'invalid UTF-8', rowNo: 2 });
      const header = await read([Buffer.from('a,'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\n1,2\n')]);
      expect(header.error).toMatchObject({ message: 'invalid UTF-8', rowNo: undefined });
      const leading = await read([Buffer.from('title '), Buffer.from([0xfe]), Buffer.from('\na,b\n1,2\n')], { skipLeadingRows: 1 });
      expect(leading.error).toMatchObject({ message: 'invalid UTF-8', rowNo: undefined });
    });

    it('refuses a chunk that ends inside a multi-byte character', async () => {
      const { error } = await read([Buffer.from('a,b\n1,2\n3,'), euro.subarray(0, 2)]);
      expect(error).toMatchObject({ message: 'invalid UTF-8', rowNo: 2, nextRowNo: 3 });
    });

    it('counts the records after invalid UTF-8, unread, so the next chunk starts at its true row number', async () => {
      // Row 2 holds the bad byte; rows 3 to 6 follow: one quoted over two lines (a line feed and
      // a doubled quote in it), a comment line and empty lines between them (no rows), a lone CR
      // as data, CRLF ends.
      const rest = '2,b\r\n"3\n,""x",y\n# note\n\n\r\n4,\r,z\n5,"q"\n"6",e';
      for (const size of [1, 2, 5, Infinity]) {
        const file = Buffer.concat([Buffer.from('a,b\n1,x\n2,'), Buffer.from([0xff]), Buffer.from(rest)]);
        const { records, error } = await read(file, { commentPrefix: '#' }, CHUNK0, size);
        expect(values(records, ['a']), `pieces of ${size}`).toEqual([[1, '1']]);
        expect(error, `pieces of ${size}`).toMatchObject({ message: 'invalid UTF-8', rowNo: 2, nextRowNo: 7 });
      }
      // As many as the same text without the bad byte holds.
      expect((await read(`a,b\n1,x\n2,Z${rest}`, { commentPrefix: '#' })).reader.rowsRead()).toBe(6);
      // The row in progress keeps its open quote past the bad byte; the next record starts after it closes.
      const quoted = await read([Buffer.from('a,b\n1,"multi\nline '), Buffer.from([0xc0, 0x80]), Buffer.from(' still\n",x\n2,y\n')]);
      expect(quoted.error).toMatchObject({ message: 'invalid UTF-8', rowNo: 1, nextRowNo: 3 });
      // Right after a record end, with later chunks numbered from the first row given.
      const later = await read([Buffer.from('1,x\r\n'), Buffer.from([0xff]), Buffer.from('2,y\n3,z\n')], {}, { chunkNo: 4, firstRowNo: 40, header: ['a', 'b'] });
      expect(later.error).toMatchObject({ rowNo: 41, nextRowNo: 43 });
      // In the header: the records after it are the chunk's rows.
      const header = await read([Buffer.from('a,'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\n1,2\n3,4\n')]);
      expect(header.error).toMatchObject({ rowNo: undefined, nextRowNo: 3 });
      // In the skipped leading lines: they still end at their line feeds, so the header and the
      // records after it are where they were.
      const leading = await read([Buffer.from('title '), Buffer.from([0xfe]), Buffer.from(' "x\nmore\na,"b\nc"\n1,2\n\n3,4\n')], { skipLeadingRows: 2 });
      expect(leading.error).toMatchObject({ rowNo: undefined, nextRowNo: 3 });
      // Past a quote that never closes nothing says where records end: the count is unknown.
      const open = await read([Buffer.from('a,b\n1,'), Buffer.from([0xff]), Buffer.from('\n2,"x\n3,y\n')]);
      expect(open.error).toMatchObject({ rowNo: 1, nextRowNo: undefined });
    });
  });

  describe('record size cap', () => {
    it('refuses a record longer than the cap; one exactly at the cap passes, terminator aside', async () => {
      const ok = await read('a,b\r\n12345,789\r\n', {}, CHUNK0, undefined, 9);
      expect(ok.error).toBeUndefined();
      expect(values(ok.records, ['a', 'b'])).toEqual([[1, '12345', '789']]);
      const { records, error } = await read('a,b\n1,2\n12345,7890\n3,4\n', {}, CHUNK0, undefined, 9);
      expect(values(records, ['a'])).toEqual([[1, '1']]);
      expect(error).toMatchObject({ message: 'record past the size cap', rowNo: 2, chunkNo: 0 });
      const header = await read('abcdef,ghijk\n1,2\n', {}, CHUNK0, undefined, 9);
      expect(header.error).toMatchObject({ message: 'record past the size cap', rowNo: undefined, nextRowNo: 2 });
    });

    it('counts the records after one past the cap, unread, so the next chunk starts at its true row number', async () => {
      // Row 12 is too big; rows 13 to 15 follow (one quoted over two lines, a comment line between).
      const input = '1,2\n12345,7890\n3,"x\ny"\n# note\n4,z\n\n5,w';
      for (const size of [1, 3, Infinity]) {
        const { records, error } = await read(input, { commentPrefix: '#' }, { chunkNo: 2, firstRowNo: 11, header: ['a', 'b'] }, size, 9);
        expect(values(records, ['a']), `pieces of ${size}`).toEqual([[11, '1']]);
        expect(error, `pieces of ${size}`).toMatchObject({ message: 'record past the size cap', rowNo: 12, nextRowNo: 16 });
      }
    });

    it('stops a record that keeps growing as it passes the cap, then only counts the rest of the chunk', async () => {
      let closed = false;
      async function* growing(start: string, line: string, end: string, blocks = 64): AsyncGenerator<Buffer> {
        try {
          yield Buffer.from('a,b\n1,2\n' + start);
          const block = Buffer.from(line.repeat(Math.ceil(65536 / line.length)));
          for (let n = 0; n < blocks; n++) yield block;
          yield Buffer.from(end);
        } finally {
          closed = true;
        }
      }
      // One long line; long empty fields; an open quote followed by long lines, closed at last; one
      // never closed (nothing then says where records end).
      for (const [start, line, end, nextRowNo] of [
        ['', 'x', '\n3,4\n5,6\n', 5],
        ['', ',', '\n3,4\n5,6\n', 5],
        ['"', 'x\n', '",y\n3,4\n5,6\n', 5],
        ['"', 'x\n', '\n3,4\n5,6\n', undefined],
      ] as const) {
        closed = false;
        const reader = readCsvChunk(growing(start, line, end), dialect(), CHUNK0, { maxRecordBytes: 1 << 20 });
        const { records, error } = await collect(reader);
        expect(records).toHaveLength(1);
        expect(closed).toBe(true);
        expect(error).toBeInstanceOf(ChunkError);
        expect(error!.message).toMatch(/^record past the size cap/);
        expect(error).toMatchObject({ rowNo: 2, nextRowNo });
      }
      // A stream of small records never trips the cap (stopped by hand).
      closed = false;
      const reader = readCsvChunk(growing('', 'x\n', '', Infinity), dialect(), CHUNK0, { maxRecordBytes: 1 << 20 });
      for await (const r of reader.records) if (r.rowNo >= 300_000) break;
      expect(reader.rowsRead()).toBe(300_000);
      expect(closed).toBe(true);
    });

    it('hints at an unterminated quote when the oversized record spans many lines', async () => {
      const input = 'a,b\n1,"' + 'text\n'.repeat(100) + '"\n';
      const { error } = await read(input, {}, CHUNK0, 64, 100);
      expect(error?.message).toBe('record past the size cap (it runs over several lines: an unterminated quote?)');
    });
  });

  it('gives the same records whatever the Buffer boundaries', async () => {
    // Pseudo-random records with quotes, doubled quotes, delimiters and line breaks inside quotes,
    // CRLF and LF, empty and comment lines; each record's expected fields and raw text are known.
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const atoms = ['a', 'é', '€', ';', '"', '\n', '\r\n', ' ', '#', 'z9'];
    const field = () => Array.from({ length: rand(5) }, () => atoms[rand(atoms.length)]!).join('');
    const encode = (f: string) => (/[;"\r\n]/.test(f) || f.startsWith('#') || f === '' ? `"${f.replace(/"/g, '""')}"` : f);
    let input = 'h1;h2;h3\n';
    const expected: Array<{ fields: string[]; raw: string }> = [];
    for (let i = 0; i < 300; i++) {
      if (rand(10) === 0) input += rand(2) ? '\r\n' : '# note "x;y\n';
      const fields = [field(), field(), field()];
      const raw = fields.map(encode).join(';');
      input += raw + (rand(2) ? '\r\n' : '\n');
      expected.push({ fields, raw });
    }
    for (const size of [1, 2, 3, 5, 64, Infinity]) {
      const { records, error } = await read(input, { delimiter: ';', commentPrefix: '#' }, CHUNK0, size);
      expect(error).toBeUndefined();
      const got = records.map((r) => (r.kind === 'row' && r.row.kind === 'csv' ? { fields: ['h1', 'h2', 'h3'].map((c) => (r.row as { get(c: string): string | undefined }).get(c)), raw: r.raw } : r));
      expect(got).toEqual(expected);
    }
  });

  it('stops reading the source when the consumer stops early', async () => {
    let closed = false;
    async function* src(): AsyncGenerator<Buffer> {
      try {
        yield Buffer.from('a,b\n1,2\n');
        yield Buffer.from('3,4\n');
      } finally {
        closed = true;
      }
    }
    const reader = readCsvChunk(src(), dialect(), CHUNK0);
    for await (const r of reader.records) {
      expect(r.rowNo).toBe(1);
      break;
    }
    expect(closed).toBe(true);
  });

  it('streams 200,000 generated rows keeping only counters', async () => {
    const total = 200_000;
    async function* generated(): AsyncGenerator<Buffer> {
      let batch: string[] = ['id;account;amount;memo\r\n'];
      for (let i = 1; i <= total; i++) {
        batch.push(`${i};ACC-${i % 977};${(i % 10_000) / 100};"memo; ""${i}"" with\nbreak"\r\n`);
        if (batch.length === 1000) {
          yield Buffer.from(batch.join(''));
          batch = [];
        }
      }
      if (batch.length > 0) yield Buffer.from(batch.join(''));
    }
    const reader = readCsvChunk(generated(), dialect({ delimiter: ';' }), CHUNK0);
    let rows = 0;
    let bad = 0;
    let idSum = 0;
    let lastRowNo = 0;
    for await (const r of reader.records) {
      if (r.kind !== 'row' || r.row.kind !== 'csv') {
        bad++;
        continue;
      }
      rows++;
      idSum += Number(r.row.get('id'));
      lastRowNo = r.rowNo;
    }
    expect(bad).toBe(0);
    expect(rows).toBe(total);
    expect(lastRowNo).toBe(total);
    expect(idSum).toBe((total * (total + 1)) / 2);
    expect(reader.rowsRead()).toBe(total);
  });
});

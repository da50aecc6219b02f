import { CHUNK0, collect, source } from './test-kit.ts';
import { describe, expect, it } from 'vitest';
import { readJsonlChunk } from './jsonl.ts';
import { ChunkError, type JsonlDialect, type SourceRecord } from './types.ts';

function dialect(over: Partial<JsonlDialect> = {}): JsonlDialect {
  return { skipLeadingRows: 0, nullValues: [], ...over };
}

async function read(input: string | Buffer | Buffer[], d: Partial<JsonlDialect> = {}, at = CHUNK0, size?: number, maxRecordBytes?: number) {
  const reader = readJsonlChunk(source(input, size), dialect(d), at, maxRecordBytes === undefined ? {} : { maxRecordBytes });
  return { reader, ...(await collect(reader)) };
}

/** Each record as [rowNo, value] or [rowNo, 'bad', message]. */
function values(records: SourceRecord[]): unknown[] {
  return records.map((r) => {
    if (r.kind === 'bad_row') return [r.rowNo, 'bad', r.message];
    if (r.row.kind !== 'jsonl') throw new Error('not a JSONL row');
    return [r.rowNo, r.row.value];
  });
}

describe('JSONL dialect reader', () => {
  it('reads one object per line, LF or CRLF, the last line without a terminator; raw is the line', async () => {
    const { reader, records, error } = await read('{"a":1}\r\n{"b":"x\\ny"}\n{"c":[1,{"d":null}]}');
    expect(error).toBeUndefined();
    expect(values(records)).toEqual([[1, { a: 1 }], [2, { b: 'x\ny' }], [3, { c: [1, { d: null }] }]]);
    expect(records.map((r) => [r.chunkNo, r.raw])).toEqual([[0, '{"a":1}'], [0, '{"b":"x\\ny"}'], [0, '{"c":[1,{"d":null}]}']]);
    expect(reader.rowsRead()).toBe(3);
  });

  it('skips blank and comment lines without counting them', async () => {
    const input = '\n# header comment\n{"a":1}\r\n   \r\n\t\n  # indented comment\n{"a":2}\n';
    const { records, error } = await read(input, { commentPrefix: '#' });
    expect(error).toBeUndefined();
    expect(values(records)).toEqual([[1, { a: 1 }], [2, { a: 2 }]]);
    // Without a comment prefix the same line is a bad row.
    expect(values((await read('# x\n')).records)).toEqual([[1, 'bad', 'line is not valid JSON']]);
  });

  it('skips skip_leading_rows physical lines of chunk 0 only', async () => {
    const { records } = await read('not json\n{"also": "skipped"\n{"a":1}\n', { skipLeadingRows: 2 });
    expect(values(records)).toEqual([[1, { a: 1 }]]);
    const later = await read('{"a":2}\n{"a":3}\n', { skipLeadingRows: 2 }, { chunkNo: 1, firstRowNo: 2 });
    expect(values(later.records)).toEqual([[2, { a: 2 }], [3, { a: 3 }]]);
  });

  it('a line that is not JSON or not an object is a bad row; numbering goes on', async () => {
    const input = ['{"a":1}', '{"a":', '[1,2]', '42', '"text"', 'null', '{"a":2} trailing', '{"a":3}'].join('\n');
    const { reader, records, error } = await read(input);
    expect(error).toBeUndefined();
    expect(values(records)).toEqual([
      [1, { a: 1 }],
      [2, 'bad', 'line is not valid JSON'],
      [3, 'bad', 'line is not a JSON object'],
      [4, 'bad', 'line is not a JSON object'],
      [5, 'bad', 'line is not a JSON object'],
      [6, 'bad', 'line is not a JSON object'],
      [7, 'bad', 'line is not valid JSON'],
      [8, { a: 3 }],
    ]);
    expect(records[1]!.raw).toBe('{"a":');
    expect(reader.rowsRead()).toBe(8);
  });

  it('removes null-value strings, keeping array indexes; explicit null is passed through', async () => {
    const { records } = await read('{"a":"N/A","b":"x","c":null,"d":["N/A","y"],"e":{"f":"N/A"},"g":"n/a"}\n', { nullValues: ['N/A'] });
    const value = (records[0] as { row: { value: Record<string, unknown> } }).row.value;
    expect(value).toEqual({ b: 'x', c: null, d: [undefined, 'y'], e: {}, g: 'n/a' });
    expect('a' in value).toBe(false);
    expect((value.d as unknown[]).length).toBe(2);
    expect(1 in (value.d as unknown[])).toBe(true);
    expect(0 in (value.d as unknown[])).toBe(false);
  });

  it('numbers rows globally across chunks', async () => {
    const first = await read('{"n":1}\n{"n":2}\n');
    const second = await read('{"n":3}\n\n{"n":4}\n', {}, { chunkNo: 1, firstRowNo: first.reader.rowsRead() + 1 });
    expect([...values(first.records), ...values(second.records)]).toEqual([[1, { n: 1 }], [2, { n: 2 }], [3, { n: 3 }], [4, { n: 4 }]]);
    expect(second.records.map((r) => r.chunkNo)).toEqual([1, 1]);
  });

  it('drops a BOM at the start of chunk 0 (even split over Buffers), not of later chunks', async () => {
    const input = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n')]);
    for (const size of [1, 2, Infinity]) expect(values((await read(input, {}, CHUNK0, size)).records)).toEqual([[1, { a: 1 }]]);
    expect(values((await read(input, {}, { chunkNo: 1, firstRowNo: 9 })).records)).toEqual([[9, 'bad', 'line is not valid JSON']]);
  });

  describe('UTF-8', () => {
    const euro = Buffer.from('€');

    it('accepts multi-byte characters split across Buffers', async () => {
      const { records, error } = await read([Buffer.from('{"a":"'), euro.subarray(0, 1), euro.subarray(1), Buffer.from('"}\n')]);
      expect(error).toBeUndefined();
      expect(values(records)).toEqual([[1, { a: '€' }]]);
      expect(values((await read('{"日本":"ü€"}\n', {}, CHUNK0, 1)).records)).toEqual([[1, { 日本: 'ü€' }]]);
    });

    it('refuses invalid bytes split across Buffers, naming the line they sit in', async () => {
      const { records, error } = await read([Buffer.from('{"a":1}\n{"a":"'), euro.subarray(0, 2), Buffer.from('x"}\n')]);
      expect(values(records)).toEqual([[1, { a: 1 }]]);
      expect(error).toBeInstanceOf(ChunkError);
      expect(error).toMatchObject({ message: 'invalid UTF-8', rowNo: 2, chunkNo: 0, code: 'svc:import/invalid_chunk' });
      const atEnd = await read([Buffer.from('{"a":1}\n{"a":"'), euro.subarray(0, 2)]);
      expect(atEnd.error).toMatchObject({ message: 'invalid UTF-8', rowNo: 2 });
      const leading = await read([Buffer.from('title '), Buffer.from([0xff]), Buffer.from('\n{"a":1}\n')], { skipLeadingRows: 1 });
      expect(leading.error).toMatchObject({ message: 'invalid UTF-8', rowNo: undefined });
    });

    it('counts the lines after invalid UTF-8, unread, so the next chunk starts at its true row number', async () => {
      // Row 2 holds the bad byte; rows 3 to 5 follow, with blank and comment lines (no rows) between
      // them, a line with another bad byte (a row) and a last line without its terminator.
      const rest = Buffer.concat([Buffer.from('x"}\r\n\n  # note\n{"a":3}\n \u00a0\t\r\n{"a":'), Buffer.from([0xfe]), Buffer.from('}\n{"a":5}')]);
      for (const size of [1, 2, 5, Infinity]) {
        const file = Buffer.concat([Buffer.from('{"a":1}\n{"a":"'), Buffer.from([0xff]), rest]);
        const { records, error } = await read(file, { commentPrefix: '#' }, CHUNK0, size);
        expect(values(records), `pieces of ${size}`).toEqual([[1, { a: 1 }]]);
        expect(error, `pieces of ${size}`).toMatchObject({ message: 'invalid UTF-8', rowNo: 2, nextRowNo: 6 });
      }
      // As many as the same text without the bad bytes holds.
      const clean = '{"a":1}\n{"a":"éx"}\r\n\n  # note\n{"a":3}\n \u00a0\t\r\n{"a":4}\n{"a":5}';
      expect((await read(clean, { commentPrefix: '#' })).reader.rowsRead()).toBe(5);
      // At the end of the chunk, in a later chunk numbered from the first row given.
      const later = await read([Buffer.from('{"a":40}\n{"a":"'), Buffer.from('€').subarray(0, 2)], {}, { chunkNo: 3, firstRowNo: 40 });
      expect(later.error).toMatchObject({ rowNo: 41, nextRowNo: 42 });
      // In the skipped leading lines: they still end at their line feeds, the records after them count.
      const leading = await read([Buffer.from('title '), Buffer.from([0xff]), Buffer.from(' more\nskipped\n{"a":1}\n\n{"a":2}\n')], { skipLeadingRows: 2 });
      expect(leading.error).toMatchObject({ rowNo: undefined, nextRowNo: 3 });
    });
  });

  describe('record size cap', () => {
    it('refuses a line longer than the cap; one at the cap passes, terminator aside', async () => {
      const ok = await read('{"a":"12"}\r\n', {}, CHUNK0, undefined, 10);
      expect(values(ok.records)).toEqual([[1, { a: '12' }]]);
      const { records, error } = await read('{"a":1}\n{"a":"123"}\n{"a":2}\n', {}, CHUNK0, 3, 10);
      expect(values(records)).toEqual([[1, { a: 1 }]]);
      expect(error).toMatchObject({ message: 'record past the size cap', rowNo: 2 });
    });

    it('stops a line that keeps growing as it passes the cap, then only counts the rest of the chunk', async () => {
      let closed = false;
      async function* growing(end: string): AsyncGenerator<Buffer> {
        try {
          yield Buffer.from('{"a":1}\n{"a":"');
          const block = Buffer.alloc(65536, 'x');
          for (let n = 0; n < 64; n++) yield block;
          yield Buffer.from(end);
        } finally {
          closed = true;
        }
      }
      for (const [end, nextRowNo] of [['"}\n{"a":3}\n\n{"a":4}', 5], ['', 3]] as const) {
        closed = false;
        const { records, error } = await collect(readJsonlChunk(growing(end), dialect(), CHUNK0));
        expect(values(records)).toEqual([[1, { a: 1 }]]);
        expect(error).toMatchObject({ message: 'record past the size cap', rowNo: 2, nextRowNo });
        expect(closed).toBe(true);
      }
    });

    it('counts the lines after one past the cap, unread, so the next chunk starts at its true row number', async () => {
      // Row 41 is too long; rows 42 and 43 follow, a comment and a blank line between.
      const input = '{"a":40}\r\n{"a":"123"}\r\n{"a":42}\n# note\n \n{"a":43}';
      for (const size of [1, 3, Infinity]) {
        const { records, error } = await read(input, { commentPrefix: '#' }, { chunkNo: 2, firstRowNo: 40 }, size, 10);
        expect(values(records), `pieces of ${size}`).toEqual([[40, { a: 40 }]]);
        expect(error, `pieces of ${size}`).toMatchObject({ message: 'record past the size cap', rowNo: 41, nextRowNo: 44 });
      }
    });
  });

  it('streams many lines in small pieces with the same result', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => (i % 97 === 0 ? '' : i % 101 === 0 ? '[]' : JSON.stringify({ i, s: 'é€'.repeat(i % 5) })));
    const input = lines.map((l, i) => l + (i % 2 ? '\r\n' : '\n')).join('');
    const whole = await read(input);
    const pieces = await read(input, {}, CHUNK0, 7);
    expect(pieces.records).toEqual(whole.records);
    expect(whole.records.filter((r) => r.kind === 'bad_row')).toHaveLength(lines.filter((l) => l === '[]').length);
    expect(whole.reader.rowsRead()).toBe(lines.filter((l) => l !== '').length);
    expect(whole.records.at(-1)).toMatchObject({ rowNo: whole.reader.rowsRead(), raw: lines.at(-1) });
  });
});

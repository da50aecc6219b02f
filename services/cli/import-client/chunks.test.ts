import { describe, expect, it } from 'vitest';
import { readCsvChunk } from '../../imports/dialects/csv.ts';
import type { CsvDialect, SourceRecord } from '../../imports/dialects/types.ts';
import { chunkFormatOf, chunkStream, RecordChunker, RecordTooLargeError, type Chunk, type ChunkFormat } from './chunks.ts';

const CSV: ChunkFormat = { kind: 'csv', delimiter: ',', quote: '"', hasHeader: true, headerPerChunk: false, skipLeadingRows: 0 };
const JSONL: ChunkFormat = { kind: 'jsonl', skipLeadingRows: 0 };

/** Chunks of `input` fed in pieces of `piece` bytes (1 finds every boundary bug). */
function chunk(input: string | Buffer, format: ChunkFormat, maxBytes: number, piece = Infinity): Chunk[] {
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const chunker = new RecordChunker(format, maxBytes);
  const out: Chunk[] = [];
  for (let i = 0; i < bytes.length; i += piece) out.push(...chunker.push(bytes.subarray(i, Math.min(bytes.length, i + piece))));
  out.push(...chunker.end());
  return out;
}

const texts = (chunks: Chunk[]) => chunks.map((c) => c.body.toString('utf8'));
/** The file back: every chunk without its repeated preamble. */
const rejoin = (chunks: Chunk[]) => Buffer.concat(chunks.map((c) => c.body.subarray(c.repeatedBytes)));

/** Chunks agree for every piece size, and give the file back byte for byte. */
function check(input: string | Buffer, format: ChunkFormat, maxBytes: number): Chunk[] {
  const whole = chunk(input, format, maxBytes);
  for (const piece of [1, 2, 3, 7, 64]) expect(texts(chunk(input, format, maxBytes, piece))).toEqual(texts(whole));
  expect(rejoin(whole).equals(typeof input === 'string' ? Buffer.from(input) : input)).toBe(true);
  expect(whole.map((c) => c.no)).toEqual(whole.map((_, i) => i));
  for (const c of whole) expect(c.body.length).toBeLessThanOrEqual(maxBytes);
  return whole;
}

describe('CSV chunking', () => {
  it('cuts at record ends and respects the size', () => {
    const file = 'id,v\n1,a\n2,b\n3,c\n4,d\n';
    expect(texts(check(file, CSV, 10))).toEqual(['id,v\n1,a\n', '2,b\n3,c\n', '4,d\n']);
    expect(texts(check(file, CSV, 1000))).toEqual([file]);
  });

  it('never splits a quoted field holding line breaks, delimiters and doubled quotes', () => {
    const rows = ['id,memo', '1,"line one\nline two, ""quoted""\n"', '2,"a""\n""b"', '3,"""\n"""', '4,plain'];
    const file = rows.join('\n') + '\n';
    for (let size = 36; size <= file.length; size++) {
      const chunks = check(file, CSV, size);
      // Every chunk is whole records: no quote is left open at a chunk end.
      for (const c of chunks) expect(c.body.toString().split('"').length % 2).toBe(1);
    }
    expect(texts(check(file, CSV, 43))).toEqual(['id,memo\n1,"line one\nline two, ""quoted""\n"\n', '2,"a""\n""b"\n3,"""\n"""\n4,plain\n']);
  });

  it('reads CRLF, keeps a lone CR as data, and a last record without a terminator', () => {
    const file = 'a,b\r\n1,"x\r\ny"\r\n2,p\rq\r\n3,z';
    expect(texts(check(file, CSV, 15))).toEqual(['a,b\r\n1,"x\r\ny"\r\n', '2,p\rq\r\n3,z']);
    expect(texts(check(file, CSV, 10))).toEqual(['a,b\r\n', '1,"x\r\ny"\r\n', '2,p\rq\r\n3,z']);
    expect(() => chunk(file, CSV, 9)).toThrow(RecordTooLargeError);
  });

  it('keeps a quote inside an unquoted field, or after a closing quote, as literal text', () => {
    // Were the quote in `5" screen` taken as opening a field, the next line would seem quoted.
    const file = 'a,b\n5" screen,2\n"x"y,3\n4,5\n';
    expect(texts(check(file, CSV, 16))).toEqual(['a,b\n5" screen,2\n', '"x"y,3\n4,5\n']);
    expect(texts(check(file, CSV, 12))).toEqual(['a,b\n', '5" screen,2\n', '"x"y,3\n4,5\n']);
  });

  it('uses the mapping dialect: delimiter, quote, comment lines with stray quotes', () => {
    const format: ChunkFormat = { ...CSV, delimiter: ';', quote: "'", commentPrefix: '##' };
    const file = "id;memo\n## it's a comment\n1;'a\n;b'\n#2;'x'\n";
    expect(texts(check(file, format, 26))).toEqual(["id;memo\n## it's a comment\n", "1;'a\n;b'\n#2;'x'\n"]);
    expect(texts(check(file, format, 18))).toEqual(['id;memo\n', "## it's a comment\n", "1;'a\n;b'\n#2;'x'\n"]);
    // A multi-byte quote character.
    const guillemet: ChunkFormat = { ...CSV, quote: '«' };
    expect(texts(check('a,b\n1,«x\ny«\n2,z\n', guillemet, 12))).toEqual(['a,b\n', '1,«x\ny«\n', '2,z\n']);
  });

  it('repeats the header at the start of every later chunk with header_per_chunk', () => {
    const format: ChunkFormat = { ...CSV, headerPerChunk: true };
    const file = '\uFEFFid,v\r\n1,"a\nb"\r\n2,c\r\n3,d\r\n';
    const chunks = check(file, format, 18);
    expect(texts(chunks)).toEqual(['\uFEFFid,v\r\n1,"a\nb"\r\n', 'id,v\r\n2,c\r\n3,d\r\n']);
    expect(chunks.map((c) => c.repeatedBytes)).toEqual([0, 6]);
    // The skipped leading rows go with the header, as the server skips them in every chunk then.
    const skipping: ChunkFormat = { ...format, skipLeadingRows: 1 };
    expect(texts(check('export "v2\nid,v\n1,a\n2,b\n', skipping, 22))).toEqual(['export "v2\nid,v\n1,a\n', 'export "v2\nid,v\n2,b\n']);
  });

  it('keeps the preamble whole in chunk 0 without header_per_chunk', () => {
    const format: ChunkFormat = { ...CSV, skipLeadingRows: 2, commentPrefix: '#' };
    const file = 'title "x\n\n# note\n\nid,v\n1,a\n';
    expect(texts(check(file, format, 26))).toEqual(['title "x\n\n# note\n\nid,v\n', '1,a\n']);
  });

  it('fails on a record larger than the chunk size, naming where it starts', () => {
    const file = 'id,memo\n1,short\n2,"this one is long\nand goes on"\n3,x\n';
    expect(() => chunk(file, CSV, 20)).toThrow(RecordTooLargeError);
    try {
      chunk(file, CSV, 20, 1);
    } catch (e) {
      expect(e).toMatchObject({ line: 3, offset: 16, limit: 20 });
      expect((e as Error).message).toContain('line 3 (byte offset 16) is larger than the chunk size (20 bytes)');
    }
    // The repeated header counts: a 10-byte record after the 5-byte header cannot fit in 14.
    expect(() => chunk('id,v\n1,aaaaaaa\n2,aaaaaaa\n', { ...CSV, headerPerChunk: true }, 14)).toThrow(/record \(with the repeated header\) at line 2/);
    expect(() => chunk('a_long_header_name,b\n1,2\n', CSV, 10)).toThrow(/the header at line 1/);
    expect(() => chunk('id\n"open\n\n\n\n\n', CSV, 8)).toThrow(/unterminated quote\?/);
  });

  // Cross-check against the server's own CSV reader: read chunk by chunk, the records are those of
  // the whole file, and no chunk fails (an open quote at a chunk end would).
  const variants: Array<{ name: string; format: Extract<ChunkFormat, { kind: 'csv' }>; sizes: number[] }> = [
    { name: 'default dialect', format: CSV, sizes: [40, 64, 100, 333] },
    { name: 'header_per_chunk, skipped rows', format: { ...CSV, headerPerChunk: true, skipLeadingRows: 1 }, sizes: [64, 100, 333] },
    { name: "semicolons, single quotes, comments", format: { ...CSV, delimiter: ';', quote: "'", commentPrefix: '#' }, sizes: [40, 100] },
  ];
  for (const { name, format, sizes } of variants) {
    it(`gives chunks the server reader takes as whole records, the same as the whole file (${name})`, async () => {
      const random = seeded(7);
      const q = format.quote;
      const d = format.delimiter;
      const field = () => {
        switch (Math.floor(random() * 7)) {
          case 0: return `${q}a${d}b${q}`;
          case 1: return random() < 0.5 ? `${q}x\ny\r\nz${q}` : `${q}\n${q}`;
          case 2: return `${q}say ${q}${q}hi${q}${q}${q}`;
          case 3: return `5${q} tall`;
          case 4: return '';
          case 5: return `${q}${q}`;
          default: return `v${Math.floor(random() * 1000)}`;
        }
      };
      const lines = format.skipLeadingRows > 0 ? [`exported ${q}today`] : [];
      lines.push(['c1', 'c2', 'c3'].join(d));
      for (let i = 0; i < 60; i++) {
        if (format.commentPrefix && random() < 0.1) lines.push(`${format.commentPrefix} it${q}s a note`);
        lines.push([field(), field(), field()].join(d));
      }
      const file = lines.map((l) => `${l}${random() < 0.3 ? '\r\n' : '\n'}`).join('');
      const dialect: CsvDialect = { ...format, nullValues: [] };
      const readAll = async (bytes: Buffer, chunkNo: number, firstRowNo: number, header?: string[]) => {
        const reader = readCsvChunk((async function* () { yield bytes; })(), dialect, { chunkNo, firstRowNo, ...(header ? { header } : {}) });
        const records: SourceRecord[] = [];
        for await (const r of reader.records) records.push(r);
        return { records, header: reader.fileHeader() };
      };
      const whole = await readAll(Buffer.from(file), 0, 1);
      expect(whole.records).toHaveLength(60);
      for (const size of sizes) {
        const chunks = check(file, format, size);
        expect(chunks.length).toBeGreaterThan(1);
        const raws: string[] = [];
        let header: string[] | undefined;
        for (const c of chunks) {
          const read = await readAll(c.body, c.no, raws.length + 1, header);
          header ??= read.header;
          raws.push(...read.records.map((r) => r.raw));
        }
        expect(raws).toEqual(whole.records.map((r) => r.raw));
      }
    });
  }
});

describe('JSONL chunking', () => {
  it('cuts at line feeds, with CRLF, a BOM and skipped leading lines kept in chunk 0', () => {
    const file = '\uFEFF{"id":1}\r\n{"id":2,"memo":"a\\nb"}\n{"id":3}';
    expect(texts(check(file, JSONL, 30))).toEqual(['\uFEFF{"id":1}\r\n', '{"id":2,"memo":"a\\nb"}\n', '{"id":3}']);
    const skipping: ChunkFormat = { kind: 'jsonl', skipLeadingRows: 2 };
    expect(texts(check('# export\n# v1\n{"a":1}\n{"a":2}\n', skipping, 24))).toEqual(['# export\n# v1\n{"a":1}\n', '{"a":2}\n']);
  });

  it('fails on a line longer than the chunk size', () => {
    expect(() => chunk('{"a":1}\n{"a":"0123456789"}\n', JSONL, 12)).toThrow(/a record at line 2 \(byte offset 8\)/);
  });

  it('packs many lines per chunk up to the size, streaming', async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `{"id":${i},"v":"${'x'.repeat(i % 37)}"}\n`);
    const file = Buffer.from(lines.join(''));
    async function* pieces() {
      for (let i = 0; i < file.length; i += 977) yield file.subarray(i, i + 977);
    }
    const chunks: Chunk[] = [];
    for await (const c of chunkStream(pieces(), JSONL, 1024)) chunks.push(c);
    expect(rejoin(chunks).equals(file)).toBe(true);
    for (const c of chunks) {
      expect(c.body.length).toBeLessThanOrEqual(1024);
      expect(c.body.at(-1)).toBe(0x0a);
    }
    // Full enough: each chunk could not also have taken the next line.
    for (let i = 0; i + 1 < chunks.length; i++) {
      const nextLine = chunks[i + 1]!.body.indexOf(0x0a) + 1;
      expect(chunks[i]!.body.length + nextLine).toBeGreaterThan(1024);
    }
  });
});

describe('chunkFormatOf', () => {
  it('reads the format with the server defaults', () => {
    expect(chunkFormatOf({ format: { kind: 'csv' } })).toEqual(CSV);
    expect(chunkFormatOf({ format: { kind: 'csv', delimiter: ';', quote: "'", header_per_chunk: true, skip_leading_rows: 2, comment_prefix: '#' } })).toEqual({
      kind: 'csv', delimiter: ';', quote: "'", hasHeader: true, headerPerChunk: true, skipLeadingRows: 2, commentPrefix: '#',
    });
    expect(chunkFormatOf({ format: { kind: 'jsonl', skip_leading_rows: 1 } })).toEqual({ kind: 'jsonl', skipLeadingRows: 1 });
  });
});

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

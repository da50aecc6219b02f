// The record counter against the reader it stands in for: on every text the reader takes, both
// count the same records, whatever the pieces the bytes come in.
import { describe, expect, it } from 'vitest';
import { CsvRecordCounter } from './csv-count.ts';
import { readCsvChunk } from './csv.ts';
import { collect, source } from './test-kit.ts';
import type { CsvDialect } from './types.ts';

// The texts are made of what decides where records end: quotes (doubled too), delimiters of one
// and two characters, comment prefixes, line feeds, CRs.
const PARTS = ['a', ',', '"', '\n', '\r', '#', ';', ':', '""', '\r\n', '//'];
const CASES = 3_000;

describe('CSV record counter', () => {
  it('counts the records the reader reads, in pieces of any size', async () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let compared = 0;
    for (let n = 0; n < CASES; n++) {
      const body = Array.from({ length: random(30) }, () => PARTS[random(PARTS.length)]).join('');
      const dialect: CsvDialect = {
        delimiter: [',', ';', '::'][n % 3]!,
        quote: '"',
        hasHeader: false,
        columns: ['x'],
        headerPerChunk: false,
        skipLeadingRows: 0,
        nullValues: [],
        ...(n % 2 ? { commentPrefix: n % 4 === 1 ? '//' : '#' } : {}),
      };
      const reader = readCsvChunk(source(body), dialect, { chunkNo: 0, firstRowNo: 1 });
      if ((await collect(reader)).error) continue;
      compared++;
      const counter = new CsvRecordCounter(dialect);
      const bytes = Buffer.from(body);
      const step = 1 + (n % 4);
      for (let i = 0; i < bytes.length; i += step) counter.push(bytes.subarray(i, i + step));
      expect(counter.end(), JSON.stringify({ body, dialect })).toBe(reader.rowsRead());
    }
    expect(compared).toBeGreaterThan(CASES / 2);
  });
});

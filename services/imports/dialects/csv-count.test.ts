// The record counter against the reader it stands in for: on every text the reader takes, both
// count the same records, whatever the pieces the bytes come in.
import { describe, expect, it } from 'vitest';
import { CsvRecordCounter } from './csv-count.ts';
import { readCsvChunk } from './csv.ts';
import { collect, pushInPieces, randomTexts, source } from './test-kit.ts';
import type { CsvDialect } from './types.ts';

// The texts are made of what decides where records end: quotes (doubled too), delimiters of one
// and two characters, comment prefixes, line feeds, CRs.
const PARTS = ['a', ',', '"', '\n', '\r', '#', ';', ':', '""', '\r\n', '//'];
const CASES = 3_000;

describe('CSV record counter', () => {
  it('counts the records the reader reads, in pieces of any size', async () => {
    let compared = 0;
    for (const [n, body] of [...randomTexts(PARTS, CASES, 42)].entries()) {
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
      pushInPieces(counter, body, 1 + (n % 4));
      expect(counter.end(), JSON.stringify({ body, dialect })).toBe(reader.rowsRead());
    }
    expect(compared).toBeGreaterThan(CASES / 2);
  });
});

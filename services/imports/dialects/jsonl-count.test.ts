// The JSONL record counter against the reader it stands in for: on every text, both count the same
// records, whatever the pieces the bytes come in.
import { describe, expect, it } from 'vitest';
import { JsonlRecordCounter } from './jsonl-count.ts';
import { readJsonlChunk } from './jsonl.ts';
import { collect, pushInPieces, randomTexts, source } from './test-kit.ts';

// The texts are made of what decides whether a line is a record: line feeds, CRs, blanks (a
// no-break space among them), comment prefixes and other text.
const PARTS = ['{}', 'x', ' ', '\t', '\u00a0', '\n', '\r', '\r\n', '#', '//', '/'];
const CASES = 2_000;

describe('JSONL record counter', () => {
  it('counts the records the reader reads, in pieces of any size', async () => {
    for (const [n, body] of [...randomTexts(PARTS, CASES, 7)].entries()) {
      const commentPrefix = [undefined, '#', '//'][n % 3];
      const dialect = { skipLeadingRows: 0, nullValues: [], ...(commentPrefix ? { commentPrefix } : {}) };
      const reader = readJsonlChunk(source(body), dialect, { chunkNo: 1, firstRowNo: 1 });
      expect((await collect(reader)).error).toBeUndefined();
      const counter = new JsonlRecordCounter(commentPrefix);
      pushInPieces(counter, body, 1 + (n % 4));
      expect(counter.end(), JSON.stringify({ body, commentPrefix })).toBe(reader.rowsRead());
    }
  });
});

// The JSONL record counter against the reader it stands in for: on every text, both count the same
// records, whatever the pieces the bytes come in.
import { describe, expect, it } from 'vitest';
import { JsonlRecordCounter } from './jsonl-count.ts';
import { readJsonlChunk } from './jsonl.ts';
import { collect, pushInPieces, randomTexts, source } from './test-kit.ts';

// The texts are made of what decides whether a line is a record: line feeds, CRs, blanks (a
// no-break space among them), comment prefixes and other text.
const PARTS = ['{}', 'x', ' ', '\t', '\u00a0', '\n', '\r', '\r\n', '#', '//', '/'];
// And long runs of them, so that lines are classed by their start before their end.
const LONG = [...PARTS, ' '.repeat(700), '\u3000'.repeat(300), 'x'.repeat(900), '#'.repeat(600)];

async function compare(parts: readonly string[], cases: number, seed: number, sizes: readonly number[]): Promise<void> {
  for (const [n, body] of [...randomTexts(parts, cases, seed)].entries()) {
    const commentPrefix = [undefined, '#', '//'][n % 3];
    const dialect = { skipLeadingRows: 0, nullValues: [], ...(commentPrefix ? { commentPrefix } : {}) };
    const reader = readJsonlChunk(source(body), dialect, { chunkNo: 1, firstRowNo: 1 }, { maxRecordBytes: 1 << 20 });
    expect((await collect(reader)).error).toBeUndefined();
    const counter = new JsonlRecordCounter(commentPrefix);
    pushInPieces(counter, body, sizes[n % sizes.length]!);
    expect(counter.end(), JSON.stringify({ body, commentPrefix })).toBe(reader.rowsRead());
  }
}

describe('JSONL record counter', () => {
  it('counts the records the reader reads, in pieces of any size', async () => {
    await compare(PARTS, 2_000, 7, [1, 2, 3, 4]);
  });

  it('counts long lines as the reader does, classed by their start', async () => {
    await compare(LONG, 400, 11, [1, 7, 500, 1500]);
  });
});

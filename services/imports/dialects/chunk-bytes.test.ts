import { describe, expect, it } from 'vitest';
import { readChunkBytes, type ChunkSteps, type RecordCounter, type Stopped } from './chunk-bytes.ts';
import { source } from './test-kit.ts';
import { ChunkError, ChunkHead, type SourceRecord } from './types.ts';

/** Bytes written one character a byte, so that a test can spell out bytes that are not UTF-8. */
const bytes = (latin1: string): Buffer => Buffer.from(latin1, 'latin1');

/** Keeps what it is fed, as the real counters would count it. */
class Fed implements RecordCounter {
  readonly pieces: string[] = [];

  push(piece: Buffer): void {
    this.pieces.push(piece.toString('latin1'));
  }
}

/**
 * Runs the pieces through the loop with steps that yield one record per call, naming the step and
 * the bytes it was given; `stopAtRead` makes that read (from 1) end with a problem of its own.
 */
async function run(pieces: string[], opts: { dropBom?: boolean; skipLines?: number; stopAtRead?: number } = {}) {
  const counter = new Fed();
  const stop = (message: string): Stopped<Fed> => ({ error: new ChunkError(message, undefined, 0), counter });
  const call = (step: string, buf: Buffer): SourceRecord => ({ kind: 'bad_row', rowNo: 0, chunkNo: 0, raw: buf.toString('latin1'), message: step });
  let reads = 0;
  const steps: ChunkSteps<Stopped<Fed>> = {
    *read(buf, last) {
      yield call(last ? 'read last' : 'read', buf);
      return ++reads === opts.stopAtRead ? stop('record past the size cap') : undefined;
    },
    *readToInvalid(buf) {
      yield call('read to invalid', buf);
      return stop('invalid UTF-8');
    },
  };
  const head = new ChunkHead({ dropBom: opts.dropBom ?? false, skipLines: opts.skipLines ?? 0 });
  const loop = readChunkBytes(source(pieces.map(bytes)), head, steps);
  const calls: string[][] = [];
  for (;;) {
    const next = await loop.next();
    if (next.done) return { calls, stopped: next.value?.error.message, counted: counter.pieces };
    calls.push([next.value.kind === 'bad_row' ? next.value.message : '', next.value.raw]);
  }
}

describe('readChunkBytes', () => {
  it('reads characters cut across pieces as they come, then ends with a last read', async () => {
    // é (C3 A9) cut in two; 😀 (F0 9F 98 80) cut in three.
    expect(await run(['a\xc3', '\xa9b\xf0\x9f', '\x98', '\x80\n'])).toEqual({
      calls: [['read', 'a\xc3'], ['read', '\xa9b\xf0\x9f'], ['read', '\x98'], ['read', '\x80\n'], ['read last', '']],
      stopped: undefined,
      counted: [],
    });
  });

  it('stops at invalid UTF-8 mid-chunk: the bytes before it are read, all from it on only counted', async () => {
    expect(await run(['ab\n', 'c\xffd\n', 'e\n'])).toEqual({
      calls: [['read', 'ab\n'], ['read to invalid', 'c']],
      stopped: 'invalid UTF-8',
      counted: ['\xffd\n', 'e\n', ''],
    });
    // A character begun in one piece and broken in the next: the bad byte starts the next piece.
    expect(await run(['x\xc3', '(y\n'])).toEqual({
      calls: [['read', 'x\xc3'], ['read to invalid', '']],
      stopped: 'invalid UTF-8',
      counted: ['(y\n', ''],
    });
  });

  it('stops when the chunk ends inside a character: no last read', async () => {
    expect(await run(['ab\n', 'c\xe2\x82'])).toEqual({
      calls: [['read', 'ab\n'], ['read', 'c\xe2\x82'], ['read to invalid', '']],
      stopped: 'invalid UTF-8',
      counted: [],
    });
    // A start that only looked like a BOM is held by the head until the end, then read to the problem.
    expect(await run(['\xef\xbb'], { dropBom: true })).toEqual({
      calls: [['read', ''], ['read to invalid', '\xef\xbb']],
      stopped: 'invalid UTF-8',
      counted: [],
    });
  });

  it('after a problem of the reader, only counts the rest, without looking at its UTF-8', async () => {
    expect(await run(['r1\n', 'r2\xff\n', 'r3'], { stopAtRead: 1 })).toEqual({
      calls: [['read', 'r1\n']],
      stopped: 'record past the size cap',
      counted: ['r2\xff\n', 'r3', ''],
    });
  });

  it('counts through the head: invalid UTF-8 in the skipped leading lines', async () => {
    expect(await run(['\xef\xbb\xbfh1\nh\xff2\n', 'h3\nrow\n'], { dropBom: true, skipLines: 3 })).toEqual({
      calls: [['read to invalid', '']],
      stopped: 'invalid UTF-8',
      // The rest of line 2 and line 3 are still skipped: the counter starts at the row.
      counted: ['', 'row\n', ''],
    });
  });

  it('passes the bytes after the BOM and the skipped lines to the reads', async () => {
    expect(await run(['\xef\xbb', '\xbfskip\nrow 1\n', 'row 2'], { dropBom: true, skipLines: 1 })).toEqual({
      calls: [['read', ''], ['read', 'row 1\n'], ['read', 'row 2'], ['read last', '']],
      stopped: undefined,
      counted: [],
    });
  });
});

// The byte loop both dialect readers (csv.ts, jsonl.ts) run a chunk through: past the chunk's head
// (types.ts ChunkHead), checked as UTF-8, into the reader's own steps; past a chunk-level problem
// the rest is only counted, so the next chunk's rows keep their numbers in the file.
import { asBuffer, type ChunkError, type ChunkHead, type SourceRecord, Utf8Validator } from './types.ts';

/** Counts a chunk's records from some byte on (csv-count.ts, jsonl-count.ts). */
export interface RecordCounter {
  push(piece: Buffer): void;
}

/** A chunk-level problem past which the chunk's records are counted, and their counter. */
export interface Stopped<C extends RecordCounter = RecordCounter> {
  error: ChunkError;
  counter: C;
}

/** A reader's records; what it returns when done. */
type Records<R> = Generator<SourceRecord, R> | AsyncGenerator<SourceRecord, R>;

export interface ChunkSteps<S extends Stopped> {
  /**
   * Yields the records of bytes that are UTF-8 so far (a character may be cut at their end); a
   * problem past which the rest of the chunk is only counted ends it. `last`: they end a chunk that
   * is whole UTF-8, so its last record may lack a terminator.
   */
  read(bytes: Buffer, last: boolean): Records<S | undefined>;
  /**
   * Yields the records of the bytes before one that is not UTF-8 (or before the chunk's end inside a
   * character), then gives the problem: that one if reading them met one, else the invalid UTF-8.
   */
  readToInvalid(bytes: Buffer): Records<S>;
}

/**
 * Runs a chunk's bytes through `head` and a UTF-8 check into `steps`, yielding their records; the
 * problem that stopped reading comes back, its counter fed the rest of the chunk (still through the
 * head: invalid UTF-8 may stop reading in the skipped leading lines).
 */
export async function* readChunkBytes<S extends Stopped>(
  bytes: AsyncIterable<Uint8Array>,
  head: ChunkHead,
  steps: ChunkSteps<S>,
): AsyncGenerator<SourceRecord, S | undefined> {
  const utf8 = new Utf8Validator();
  let stopped: S | undefined;
  for await (const chunk of bytes) {
    const buf = asBuffer(chunk);
    if (stopped !== undefined) {
      stopped.counter.push(head.push(buf));
      continue;
    }
    const bad = utf8.push(buf);
    if (bad < 0) {
      stopped = yield* steps.read(head.push(buf), false);
      continue;
    }
    stopped = yield* steps.readToInvalid(head.push(buf.subarray(0, bad)));
    stopped.counter.push(head.push(buf.subarray(bad)));
  }
  if (stopped !== undefined) {
    stopped.counter.push(head.end());
    return stopped;
  }
  return utf8.end() ? yield* steps.read(head.end(), true) : yield* steps.readToInvalid(head.end());
}

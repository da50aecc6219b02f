// What the dialect readers' tests share: a chunk's bytes as a stream cut into pieces, and reading
// every record with the chunk-level error (if any) kept beside them; the generated texts the record
// counters are checked against the readers on.
import { ChunkError, type ChunkPosition, type SourceRecord } from './types.ts';

export const CHUNK0: ChunkPosition = { chunkNo: 0, firstRowNo: 1 };

/** The input as a stream of Buffers of `size` bytes (or exactly the pieces given). */
export async function* source(input: string | Buffer | Buffer[], size = Infinity): AsyncGenerator<Buffer> {
  if (Array.isArray(input)) {
    yield* input;
    return;
  }
  const all = typeof input === 'string' ? Buffer.from(input) : input;
  for (let i = 0; i < all.length; i += size) yield all.subarray(i, i + size);
}

export async function collect(reader: { records: AsyncIterable<SourceRecord> }): Promise<{ records: SourceRecord[]; error?: ChunkError }> {
  const records: SourceRecord[] = [];
  try {
    for await (const r of reader.records) records.push(r);
  } catch (e) {
    if (!(e instanceof ChunkError)) throw e;
    return { records, error: e };
  }
  return { records };
}

/** `count` texts of up to 30 parts drawn from `parts`, the same in every run. */
export function* randomTexts(parts: readonly string[], count: number, seed: number): Generator<string> {
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let n = 0; n < count; n++) yield Array.from({ length: random(30) }, () => parts[random(parts.length)]).join('');
}

/** Hands `text`'s bytes to a counter in pieces of `size` bytes. */
export function pushInPieces(counter: { push(piece: Buffer): void }, text: string, size: number): void {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) counter.push(bytes.subarray(i, i + size));
}

// What the dialect readers' tests share: a chunk's bytes as a stream cut into pieces, and reading
// every record with the chunk-level error (if any) kept beside them.
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

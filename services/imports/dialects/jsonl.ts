// The JSONL dialect reader: one JSON value per line, streamed line by line.
//
// - Bytes are checked as UTF-8 as they pass; a BOM at the start of chunk 0 is dropped, and the first
//   skipLeadingRows physical lines of chunk 0 are skipped (later chunks start mid-file). Past invalid
//   UTF-8 nothing more is read, but the chunk's records are still counted (jsonl-count.ts) from the
//   line it sits in, so the next chunk's rows keep their numbers in the file.
// - Lines end with LF or CRLF; the last line of a chunk may lack its terminator.
// - Blank lines (only whitespace) and comment lines (commentPrefix after any leading blanks) are
//   skipped and not counted as rows.
// - A line that is not JSON, or is JSON but not an object, is a `bad_row` (row-level
//   svc:validation/schema); reading goes on.
// - String values equal to one of nullValues are removed (object members deleted, array slots left
//   empty so indexes keep their meaning); explicit JSON null is passed through for the consumer.
// - `raw` is the line without its terminator.
// - Memory: only the line in progress is held; a line longer than maxRecordBytes (even one that
//   never ends) is a ChunkError as soon as it passes the cap; the rest of the chunk is then only
//   counted, from that line's start (jsonl-count.ts), so the next chunk's rows keep their numbers.
import { checkJsonBounds } from '../../../schemas/primitives/json-bounds.ts';
import { readChunkBytes, type Stopped } from './chunk-bytes.ts';
import { jsonlRecordText, JsonlRecordCounter, withoutCr } from './jsonl-count.ts';
import {
  ChunkError,
  ChunkHead,
  DEFAULT_MAX_RECORD_BYTES,
  type ChunkPosition,
  type JsonlDialect,
  type ReadLimits,
  type SourceRecord,
} from './types.ts';

export interface JsonlChunkReader {
  /** The chunk's data records, in order; single use. Chunk-level problems are thrown as ChunkError. */
  records: AsyncIterable<SourceRecord>;
  /** Data lines read so far, bad rows included. */
  rowsRead(): number;
}

const LF = 10;

export function readJsonlChunk(
  bytes: AsyncIterable<Uint8Array>,
  dialect: JsonlDialect,
  at: ChunkPosition,
  limits: ReadLimits = {},
): JsonlChunkReader {
  const cap = limits.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const chunkNo = at.chunkNo;
  let rows = 0;

  async function* read(): AsyncGenerator<SourceRecord> {
    if (!Number.isInteger(dialect.skipLeadingRows) || dialect.skipLeadingRows < 0) {
      throw new ChunkError('mapping: skip_leading_rows must be a whole number', undefined, chunkNo);
    }
    const prefix = dialect.commentPrefix || undefined;
    const nulls = new Set(dialect.nullValues);
    const reviver = nulls.size === 0 ? undefined : (_key: string, value: unknown) => (typeof value === 'string' && nulls.has(value) ? undefined : value);
    const nextRowNo = () => at.firstRowNo + rows;

    const toRecord = (line: Buffer): SourceRecord | undefined => {
      const text = jsonlRecordText(line, prefix);
      if (text === undefined) return undefined;
      const rowNo = nextRowNo();
      rows++;
      let value: unknown;
      try {
        value = JSON.parse(text, reviver);
      } catch {
        return { kind: 'bad_row', rowNo, chunkNo, raw: text, message: 'line is not valid JSON' };
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return { kind: 'bad_row', rowNo, chunkNo, raw: text, message: 'line is not a JSON object' };
      }
      const past = checkJsonBounds(value);
      if (past) return { kind: 'bad_row', rowNo, chunkNo, raw: text, message: `${past.path || 'line'}: ${past.message}` };
      return { kind: 'row', rowNo, chunkNo, raw: text, row: { kind: 'jsonl', value: value as Record<string, unknown> } };
    };

    const head = new ChunkHead({ dropBom: chunkNo === 0, skipLines: chunkNo === 0 ? dialect.skipLeadingRows : 0 });
    const lines = new LineSplitter(cap);
    const countFrom = (pieces: Buffer[]): JsonlRecordCounter => {
      const counter = new JsonlRecordCounter(prefix);
      for (const piece of pieces) counter.push(piece);
      return counter;
    };

    // The records of some bytes (and of the last line, without its terminator, if `last`), up to a
    // line past the cap: then the problem, with a counter of the records from that line's start on.
    function* recordsOf(buf: Buffer, last = false): Generator<SourceRecord, Stopped<JsonlRecordCounter> | undefined> {
      try {
        for (const line of lines.push(buf)) {
          const record = toRecord(line);
          if (record !== undefined) yield record;
        }
        const line = last ? lines.end() : undefined;
        const record = line === undefined ? undefined : toRecord(line);
        if (record !== undefined) yield record;
      } catch (error) {
        if (!(error instanceof LineTooLong)) throw error;
        return { error: new ChunkError('record past the size cap', nextRowNo(), chunkNo), counter: countFrom(error.line) };
      }
      return undefined;
    }

    // Invalid UTF-8: the problem, with a counter of the records from the start of the line the bad
    // byte sits in on (the skipped leading lines still end at their line feeds).
    const invalidUtf8 = (): Stopped<JsonlRecordCounter> => ({ error: new ChunkError('invalid UTF-8', head.inPreamble ? undefined : nextRowNo(), chunkNo), counter: countFrom([lines.inProgress()]) });
    // The problem, with the file's next row number past this chunk.
    const counted = ({ error, counter }: Stopped<JsonlRecordCounter>) => new ChunkError(error.message, error.rowNo, chunkNo, nextRowNo() + counter.end());

    const stopped = yield* readChunkBytes(bytes, head, {
      read: recordsOf,
      *readToInvalid(buf) {
        return (yield* recordsOf(buf)) ?? invalidUtf8();
      },
    });
    if (stopped !== undefined) throw counted(stopped);
  }

  return { records: read(), rowsRead: () => rows };
}

/** A line past the cap: its bytes so far and all after them the splitter was given. */
class LineTooLong extends Error {
  constructor(readonly line: Buffer[]) {
    super('line past the size cap');
  }
}

/**
 * Cuts a byte stream into lines (without LF or CRLF), holding only the line in progress; a line
 * longer than the cap is a LineTooLong as soon as it passes it.
 */
class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;

  constructor(private readonly cap: number) {}

  *push(buf: Buffer): Generator<Buffer> {
    let from = 0;
    for (let lf = buf.indexOf(LF); lf >= 0; lf = buf.indexOf(LF, from)) {
      const piece = buf.subarray(from, lf);
      if (this.held + piece.length > this.cap + 1) throw this.tooLong(buf.subarray(from)); // +1: room for the CR of a CRLF
      const line = withoutCr(this.parts.length > 0 ? Buffer.concat([...this.parts, piece]) : piece);
      if (line.length > this.cap) throw this.tooLong(buf.subarray(from));
      this.parts = [];
      this.held = 0;
      from = lf + 1;
      yield line;
    }
    if (from < buf.length) {
      const rest = buf.subarray(from);
      if (this.held + rest.length > this.cap + 1) throw this.tooLong(rest);
      this.held += rest.length;
      this.parts.push(rest);
    }
  }

  /** The bytes of the line in progress, left held. */
  inProgress(): Buffer {
    return Buffer.concat(this.parts);
  }

  /** The last line when the chunk does not end with a line break. */
  end(): Buffer | undefined {
    if (this.parts.length === 0) return undefined;
    const line = withoutCr(Buffer.concat(this.parts));
    if (line.length > this.cap) throw this.tooLong(EMPTY);
    this.parts = [];
    this.held = 0;
    return line;
  }

  private tooLong(rest: Buffer): LineTooLong {
    return new LineTooLong([...this.parts, rest]);
  }
}

const EMPTY = Buffer.alloc(0);

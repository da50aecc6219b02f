// The JSONL dialect reader: one JSON value per line, streamed line by line.
//
// - Bytes are checked as UTF-8 as they pass; a BOM at the start of chunk 0 is dropped, and the first
//   skipLeadingRows physical lines of chunk 0 are skipped (later chunks start mid-file). Past invalid
//   UTF-8 nothing more is read, but the chunk's records are still counted (jsonl-count.ts), so the
//   next chunk's rows keep their numbers in the file.
// - Lines end with LF or CRLF; the last line of a chunk may lack its terminator.
// - Blank lines (only whitespace) and comment lines (commentPrefix after any leading blanks) are
//   skipped and not counted as rows.
// - A line that is not JSON, or is JSON but not an object, is a `bad_row` (row-level
//   svc:validation/schema); reading goes on.
// - String values equal to one of nullValues are removed (object members deleted, array slots left
//   empty so indexes keep their meaning); explicit JSON null is passed through for the consumer.
// - `raw` is the line without its terminator.
// - Memory: only the line in progress is held; a line longer than maxRecordBytes (even one that
//   never ends) is a ChunkError as soon as it passes the cap.
import { checkJsonBounds } from '../../../schemas/primitives/json-bounds.ts';
import { jsonlRecordText, JsonlRecordCounter, withoutCr } from './jsonl-count.ts';
import {
  asBuffer,
  ChunkError,
  ChunkHead,
  DEFAULT_MAX_RECORD_BYTES,
  Utf8Validator,
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
    const tooLong = () => new ChunkError('record past the size cap', nextRowNo(), chunkNo);

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
    const utf8 = new Utf8Validator();
    const lines = new LineSplitter(cap, tooLong);

    // Past invalid UTF-8 the rest of the chunk is only counted, from the start of the line the bad
    // byte sits in (the skipped leading lines still end at their line feeds).
    const breakAt = (rest: Buffer): Broken => {
      const counter = new JsonlRecordCounter(prefix);
      counter.push(lines.inProgress());
      const rowNo = head.inPreamble ? undefined : nextRowNo();
      counter.push(head.push(rest));
      return { rowNo, counter };
    };
    const invalidUtf8 = ({ rowNo, counter }: Broken) => {
      counter.push(head.end());
      return new ChunkError('invalid UTF-8', rowNo, chunkNo, nextRowNo() + counter.end());
    };

    let broken: Broken | undefined;
    for await (const chunk of bytes) {
      const buf = asBuffer(chunk);
      if (broken !== undefined) {
        broken.counter.push(head.push(buf));
        continue;
      }
      const bad = utf8.push(buf);
      for (const line of lines.push(head.push(bad < 0 ? buf : buf.subarray(0, bad)))) {
        const record = toRecord(line);
        if (record !== undefined) yield record;
      }
      if (bad >= 0) broken = breakAt(buf.subarray(bad));
    }
    if (broken !== undefined) throw invalidUtf8(broken);
    for (const line of lines.push(head.end())) {
      const record = toRecord(line);
      if (record !== undefined) yield record;
    }
    if (!utf8.end()) throw invalidUtf8(breakAt(Buffer.alloc(0)));
    const last = lines.end();
    if (last !== undefined) {
      const record = toRecord(last);
      if (record !== undefined) yield record;
    }
  }

  return { records: read(), rowsRead: () => rows };
}

/** Where invalid UTF-8 stopped a chunk: the row it sits in, and the counter of the records from there on. */
interface Broken {
  rowNo: number | undefined;
  counter: JsonlRecordCounter;
}

/** Cuts a byte stream into lines (without LF or CRLF), holding only the line in progress. */
class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;

  constructor(
    private readonly cap: number,
    private readonly tooLong: () => Error,
  ) {}

  *push(buf: Buffer): Generator<Buffer> {
    let from = 0;
    for (let lf = buf.indexOf(LF); lf >= 0; lf = buf.indexOf(LF, from)) {
      const piece = buf.subarray(from, lf);
      from = lf + 1;
      if (this.held + piece.length > this.cap + 1) throw this.tooLong();
      let line = piece;
      if (this.parts.length > 0) {
        this.parts.push(piece);
        line = Buffer.concat(this.parts);
        this.parts = [];
        this.held = 0;
      }
      yield this.finish(line);
    }
    if (from < buf.length) {
      const rest = buf.subarray(from);
      this.held += rest.length;
      if (this.held > this.cap + 1) throw this.tooLong(); // +1: room for the CR of a CRLF
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
    const line = Buffer.concat(this.parts);
    this.parts = [];
    this.held = 0;
    return this.finish(line);
  }

  private finish(line: Buffer): Buffer {
    const text = withoutCr(line);
    if (text.length > this.cap) throw this.tooLong();
    return text;
  }
}

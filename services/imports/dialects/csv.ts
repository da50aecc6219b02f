// The CSV dialect reader: streams one import chunk's bytes through csv-parse and yields its records
// with global row numbers and their source text.
//
// - Bytes are checked as UTF-8 as they pass (chunk-bytes.ts); a BOM at the start of a chunk
//   that starts a file is dropped.
// - Past a chunk-level problem after which the bytes still show where records end (invalid UTF-8,
//   also in the skipped leading lines; a record past the size cap; a header that cannot be used)
//   nothing more is read, but the chunk's records are still counted (csv-count.ts), so the next
//   chunk's rows keep their numbers in the file. Past an unterminated quote they cannot be.
// - A chunk "starts a file" when it is chunk 0, or any chunk with headerPerChunk (each chunk is then
//   a whole exported file): skipLeadingRows physical lines are skipped there before the header.
//   Skipped lines are raw text: quotes and delimiters in them mean nothing.
// - Records end with CRLF or LF (a lone CR is data). Fields follow RFC 4180 with the dialect's
//   delimiter and quote: a quoted field may hold delimiters and line breaks, a doubled quote stands
//   for one. A quote inside an unquoted field, or text after a closing quote, is kept as literal text
//   (the spec has no chunk-level code for it; a row it garbles comes out with the wrong field count
//   at worst). A quote still open at the end of the chunk is a ChunkError.
// - Empty lines and comment lines (a record starting with commentPrefix) are skipped and not counted.
// - `raw` is the record's source text without its line terminator (a multi-line record keeps its
//   inner line breaks); preceding comment and empty lines are not part of it.
// - Memory: bytes are fed to the parser in slices of at most FEED_BYTES, the records of one slice are
//   yielded before the next is read, and the bytes of the record in progress are capped: more than
//   maxRecordBytes in one record (or one comment line) is a ChunkError before the rest is read (the
//   rest of the chunk is then only counted, holding a few bytes).
import { CsvError, parse, type InfoRecord, type Parser } from 'csv-parse';
import { readChunkBytes, type Stopped } from './chunk-bytes.ts';
import { CsvRecordCounter } from './csv-count.ts';
import {
  ChunkError,
  ChunkHead,
  DEFAULT_MAX_RECORD_BYTES,
  type ChunkPosition,
  type CsvDialect,
  type CsvRow,
  type ReadLimits,
  type SourceRecord,
} from './types.ts';

export interface CsvChunkReader {
  /** The chunk's data records, in order; single use. Chunk-level problems are thrown as ChunkError. */
  records: AsyncIterable<SourceRecord>;
  /** The column names in force (the dialect's columns, else the file header); known once the header is read. */
  header(): string[] | undefined;
  /** The file's header record as read (from this chunk, or `at.header`); give it back as `at.header` for later chunks. */
  fileHeader(): string[] | undefined;
  /** Data records read so far, bad rows included. */
  rowsRead(): number;
}

/** Bytes handed to the parser at a time: bounds the records waiting to be yielded. */
const FEED_BYTES = 64 * 1024;
/** Bytes the parser may hold back past a finished record while it looks ahead (terminator, doubled quote). */
const LOOKAHEAD_SLACK = 16;
const LF = 10;
const CR = 13;

export function readCsvChunk(
  bytes: AsyncIterable<Uint8Array>,
  dialect: CsvDialect,
  at: ChunkPosition,
  limits: ReadLimits = {},
): CsvChunkReader {
  const cap = limits.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const chunkNo = at.chunkNo;
  let names: string[] | undefined;
  let fileHeader: string[] | undefined;
  let rows = 0; // data records parsed: numbers the rows
  let handedOut = 0; // data records yielded

  async function* read(): AsyncGenerator<SourceRecord> {
    const problem = dialectProblem(dialect);
    if (problem !== undefined) throw new ChunkError(problem, undefined, chunkNo);
    const startsFile = chunkNo === 0 || dialect.headerPerChunk;
    let expectHeader = dialect.hasHeader && startsFile;
    let index = new Map<string, number>();
    const useNames = (list: string[]): void => {
      names = list;
      index = new Map(list.map((name, i) => [name, i]));
      if (index.size !== list.length) throw new ChunkError('header repeats a column name', undefined, chunkNo);
    };
    if (!expectHeader) {
      fileHeader = dialect.hasHeader ? at.header : undefined;
      const list = dialect.columns ?? fileHeader;
      if (list === undefined) throw new ChunkError("the first chunk's header was not given", undefined, chunkNo);
      useNames(list);
    }
    const nulls: ReadonlySet<string> = new Set(dialect.nullValues);
    /** Row number of the record being read, undefined while that is the header. */
    const currentRowNo = (): number | undefined => (expectHeader ? undefined : at.firstRowNo + rows);

    const acceptHeader = (fields: string[]): void => {
      if (chunkNo > 0) {
        if (at.header === undefined) throw new ChunkError("the first chunk's header was not given", undefined, chunkNo);
        if (!sameNames(fields, at.header)) throw new ChunkError("header differs from the first chunk's", undefined, chunkNo);
      }
      if (dialect.columns !== undefined && dialect.columns.length !== fields.length) {
        throw new ChunkError('the columns given and the header differ in length', undefined, chunkNo);
      }
      fileHeader = fields;
      useNames(dialect.columns ?? fields);
      expectHeader = false;
    };

    const window = new ByteWindow();
    let skippedLines = 0; // comment and empty lines already dropped from the window
    const dropSkipped = (counted: number): void => {
      window.dropLines(counted - skippedLines);
      skippedLines = counted;
    };
    const queue: SourceRecord[] = [];
    // While flushing after invalid UTF-8: the record cut short by the bad byte is not emitted; its
    // row and its bytes so far are noted.
    let salvage: { rowNo: number | undefined; bytes: Buffer } | undefined;

    const onRecord = (fields: string[], ctx: InfoRecord): null => {
      // csv-parse takes the field count of its first record as the norm and builds an error object
      // (then dropped, with relax_column_count) for every record that differs: costly when short
      // records are common. With its record counter back at 0, each record sets the norm afresh;
      // the field count is judged here instead.
      (parser.info as { records: number }).records = 0;
      dropSkipped(ctx.comment_lines + ctx.empty_lines);
      const source = window.take(ctx.bytes);
      const terminated = source.length > 0 && source[source.length - 1] === LF;
      const text = terminated ? source.subarray(0, source.length - (source[source.length - 2] === CR ? 2 : 1)) : source;
      if (salvage !== undefined && !terminated) {
        salvage.rowNo = currentRowNo();
        salvage.bytes = Buffer.from(source);
        return null;
      }
      try {
        if (text.length > cap) throw new ChunkError('record past the size cap', currentRowNo(), chunkNo);
        // Only the final record of a chunk can lack its terminator. With headerPerChunk each chunk is
        // a whole exported file, whose last line may end without one.
        if (!terminated && at.more && !dialect.headerPerChunk) {
          throw new ChunkError('the chunk ends in the middle of a record: every chunk but the last ends with a record terminator', currentRowNo(), chunkNo);
        }
        if (expectHeader) {
          acceptHeader(fields);
          return null;
        }
      } catch (error) {
        // The record ends where the parser says all the same: it is passed (a row, or the header),
        // and the records after it are counted.
        if (expectHeader) expectHeader = false;
        else rows++;
        throw error;
      }
      const rowNo = at.firstRowNo + rows;
      rows++;
      const raw = text.toString('utf8');
      if (fields.length > index.size) {
        // The fields the header names are still read, for the reject's external id.
        queue.push({ kind: 'bad_row', rowNo, chunkNo, raw, message: 'more fields than the header', row: new FieldRow(fields, index, nulls) });
      } else {
        queue.push({ kind: 'row', rowNo, chunkNo, raw, row: new FieldRow(fields, index, nulls) });
      }
      return null;
    };

    const parser = parse({
      delimiter: dialect.delimiter,
      quote: dialect.quote,
      escape: dialect.quote,
      record_delimiter: ['\r\n', '\n'],
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: 0, // the cap is enforced here, in bytes
      ...(dialect.commentPrefix ? { comment: dialect.commentPrefix, comment_no_infix: true } : {}),
      on_record: onRecord,
    });
    parser.on('error', () => {}); // errors reach us through the write and end callbacks

    function* drain(): Generator<SourceRecord> {
      for (const record of queue.splice(0)) {
        handedOut++;
        yield record;
      }
    }

    const toChunkError = (err: unknown): unknown => {
      if (err instanceof ChunkError) return err;
      if (err instanceof CsvError) {
        // csv-parse's own messages quote data; ours never do.
        const message = err.code === 'CSV_QUOTE_NOT_CLOSED' ? 'unterminated quote' : 'malformed CSV';
        return new ChunkError(message, currentRowNo(), chunkNo);
      }
      return err;
    };

    const countFrom = (...pieces: Buffer[]): CsvRecordCounter => {
      const counter = new CsvRecordCounter(dialect);
      for (const piece of pieces) counter.push(piece);
      return counter;
    };

    /**
     * Feeds bytes to the parser and yields their records, up to a record too big or a header that
     * cannot be used: then the problem, with a counter of the records from the first one not read
     * on (the window holds the bytes from there on that were fed), fed the bytes not yet fed.
     */
    async function* feed(buf: Buffer): AsyncGenerator<SourceRecord, Stopped<CsvRecordCounter> | undefined> {
      for (let off = 0; off < buf.length; off += FEED_BYTES) {
        const piece = buf.subarray(off, off + FEED_BYTES);
        const unfed = buf.subarray(off + piece.length);
        window.push(piece);
        const err = await write(parser, piece);
        yield* drain();
        // Thrown by onRecord, past a whole record.
        if (err instanceof ChunkError) return { error: err, counter: countFrom(window.rest(), unfed) };
        if (err !== undefined) throw toChunkError(err);
        dropSkipped(parser.info.comment_lines + parser.info.empty_lines);
        if (window.length > cap + LOOKAHEAD_SLACK) {
          const message = window.lineBreaks(3) >= 3
            ? 'record past the size cap (it runs over several lines: an unterminated quote?)'
            : 'record past the size cap';
          // The window holds the record in progress from its start.
          return { error: new ChunkError(message, currentRowNo(), chunkNo), counter: countFrom(window.rest(), unfed) };
        }
      }
      return undefined;
    }

    /**
     * After the valid prefix is fed: the records before the bad byte, then the problem (in the row
     * the bad byte sits in, if it is in one) and a counter of the chunk's records from the start of
     * that row on (fed the bytes from the bad one on, it numbers the rows after it). In the skipped
     * leading lines nothing was fed: the counter starts at the chunk's first record, the header.
     */
    async function* invalidUtf8(head: ChunkHead): AsyncGenerator<SourceRecord, Stopped<CsvRecordCounter>> {
      if (head.inPreamble) return { error: new ChunkError('invalid UTF-8', undefined, chunkNo), counter: countFrom() };
      salvage = { rowNo: undefined, bytes: Buffer.alloc(0) };
      let rowNo: number | undefined;
      try {
        await end(parser);
        rowNo = salvage.rowNo ?? currentRowNo();
      } catch {
        rowNo = currentRowNo(); // the record in progress could not be closed (an open quote, the header...)
      }
      yield* drain();
      // The bytes of the row in progress: cut short (salvaged), or still held (an open quote), with
      // any comment or empty lines before it, which the counter skips as the parser did.
      return { error: new ChunkError('invalid UTF-8', rowNo, chunkNo), counter: countFrom(salvage.bytes, window.rest()) };
    }

    // The problem, with the file's next row number past this chunk when its records were counted
    // (none when the counter ended inside a quoted field).
    const counted = ({ error, counter }: Stopped<CsvRecordCounter>): ChunkError => {
      const records = counter.end();
      if (records === undefined) return error;
      return new ChunkError(error.message, error.rowNo, chunkNo, at.firstRowNo + rows + Math.max(records - (expectHeader ? 1 : 0), 0));
    };

    try {
      const head = new ChunkHead({ dropBom: startsFile, skipLines: startsFile ? dialect.skipLeadingRows : 0 });
      // feed leaves `last` aside: the parser closes the chunk's last record when it is ended, below.
      const stopped = yield* readChunkBytes(bytes, head, {
        read: feed,
        async *readToInvalid(buf) {
          return (yield* feed(buf)) ?? (yield* invalidUtf8(head));
        },
      });
      if (stopped !== undefined) throw counted(stopped);
      let err: unknown;
      try {
        await end(parser);
      } catch (e) {
        err = e;
      }
      yield* drain();
      if (err !== undefined) throw toChunkError(err);
      if (expectHeader) throw new ChunkError('the chunk has no header record', undefined, chunkNo);
    } finally {
      parser.destroy();
    }
  }

  return {
    records: read(),
    header: () => names,
    fileHeader: () => fileHeader,
    rowsRead: () => handedOut,
  };
}

/** Why the dialect cannot be read, or undefined. Messages are about the mapping, never the data. */
function dialectProblem(d: CsvDialect): string | undefined {
  const breaks = (s: string) => s.includes('\n') || s.includes('\r');
  if (d.delimiter.length === 0 || breaks(d.delimiter)) return 'mapping: the delimiter must be non-empty and not a line break';
  if ([...d.quote].length !== 1 || breaks(d.quote)) return 'mapping: the quote must be one character and not a line break';
  if (d.delimiter === d.quote) return 'mapping: the delimiter must differ from the quote';
  if (d.commentPrefix !== undefined && breaks(d.commentPrefix)) return 'mapping: the comment prefix must not hold a line break';
  if (!Number.isInteger(d.skipLeadingRows) || d.skipLeadingRows < 0) return 'mapping: skip_leading_rows must be a whole number';
  if (!d.hasHeader && (d.columns === undefined || d.columns.length === 0)) return 'mapping: columns are required without a header';
  if (d.columns !== undefined && d.columns.length === 0) return 'mapping: columns must not be empty';
  return undefined;
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

class FieldRow implements CsvRow {
  readonly kind = 'csv';

  constructor(
    private readonly fields: readonly string[],
    private readonly index: ReadonlyMap<string, number>,
    private readonly nulls: ReadonlySet<string>,
  ) {}

  get(column: string): string | undefined {
    const i = this.index.get(column);
    if (i === undefined) return undefined;
    const text = this.fields[i];
    return text === undefined || this.nulls.has(text) ? undefined : text;
  }
}

function write(parser: Parser, piece: Buffer): Promise<Error | undefined> {
  return new Promise((resolve) => parser.write(piece, (err) => resolve(err ?? undefined)));
}

function end(parser: Parser): Promise<void> {
  return new Promise((resolve, reject) => {
    parser.once('error', reject);
    parser.once('finish', () => resolve());
    parser.end();
  });
}

/**
 * The bytes fed to the parser from the end of the last record on: the record in progress (plus any
 * comment or empty lines not yet dropped and a few bytes of lookahead). Offsets are absolute within
 * the bytes fed.
 */
class ByteWindow {
  private parts: Buffer[] = [];
  private first = 0; // index in parts of the first held piece
  private held = 0;
  private start = 0; // offset of the first held byte

  get length(): number {
    return this.held;
  }

  push(buf: Buffer): void {
    if (buf.length === 0) return;
    this.parts.push(buf);
    this.held += buf.length;
  }

  /** Removes and returns the bytes before offset `end`. */
  take(end: number): Buffer {
    let n = end - this.start;
    this.start = end;
    this.held -= n;
    const head = this.parts[this.first];
    if (head !== undefined && head.length >= n) {
      this.advance(head, n);
      return head.subarray(0, n);
    }
    const out: Buffer[] = [];
    while (n > 0) {
      const part = this.parts[this.first]!;
      const k = Math.min(n, part.length);
      out.push(part.subarray(0, k));
      this.advance(part, k);
      n -= k;
    }
    return Buffer.concat(out);
  }

  /** Drops `count` whole lines (each through its line feed) from the front. */
  dropLines(count: number): void {
    for (let c = 0; c < count; c++) {
      let offset = this.start;
      for (let i = this.first; i < this.parts.length; i++) {
        const part = this.parts[i]!;
        const lf = part.indexOf(LF);
        if (lf >= 0) {
          offset += lf + 1;
          break;
        }
        offset += part.length;
      }
      this.take(offset);
    }
  }

  /** The bytes held, left held. */
  rest(): Buffer {
    return Buffer.concat(this.parts.slice(this.first));
  }

  /** Line feeds held, counted up to `atMost`. */
  lineBreaks(atMost: number): number {
    let seen = 0;
    for (let i = this.first; i < this.parts.length && seen < atMost; i++) {
      const part = this.parts[i]!;
      for (let k = part.indexOf(LF); k >= 0 && seen < atMost; k = part.indexOf(LF, k + 1)) seen++;
    }
    return seen;
  }

  private advance(part: Buffer, n: number): void {
    if (n === part.length) {
      this.parts[this.first] = EMPTY_PART;
      this.first++;
      if (this.first > 64 && this.first * 2 > this.parts.length) {
        this.parts = this.parts.slice(this.first);
        this.first = 0;
      }
    } else {
      this.parts[this.first] = part.subarray(n);
    }
  }
}

const EMPTY_PART = Buffer.alloc(0);

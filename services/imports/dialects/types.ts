// Shared shapes of the import dialect readers (csv.ts, jsonl.ts) and the byte-level pieces both use:
// streaming UTF-8 validation and the start of a chunk (BOM, skipped leading lines).
//
// A historical import arrives in chunks, each a run of whole records; chunk 0 starts the file. A
// reader streams one chunk's bytes and yields its records with row numbers global to the file.
// Chunk-level problems (spec code svc:import/invalid_chunk) are thrown from the iterator as a
// ChunkError; row-level schema problems come out as `bad_row` records and reading goes on.
import { isUtf8 } from 'node:buffer';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';

/** Default cap on one record's source text (without its line terminator). */
export const DEFAULT_MAX_RECORD_BYTES = 1024 * 1024;

export interface CsvDialect {
  /** Field delimiter; must differ from `quote`. */
  delimiter: string;
  /** Quote character; a quote inside a quoted field is written twice. */
  quote: string;
  /** The first record of chunk 0 (and of every chunk with headerPerChunk) is the header. */
  hasHeader: boolean;
  /**
   * Every chunk is a whole exported file that starts with the header (and with skipLeadingRows
   * lines before it); each later chunk's header must equal chunk 0's.
   */
  headerPerChunk: boolean;
  /** Explicit column names; override a present header (which is still consumed). Required without a header. */
  columns?: string[];
  /** Physical lines skipped at the start of chunk 0 (of every chunk with headerPerChunk), before the header. */
  skipLeadingRows: number;
  /** A record starting with this text is a comment line: skipped, not counted as a row. */
  commentPrefix?: string;
  /** Field texts treated as absent. */
  nullValues: string[];
}

export interface JsonlDialect {
  /** Physical lines skipped at the start of chunk 0. */
  skipLeadingRows: number;
  /** A line starting (after blanks) with this text is skipped and not counted as a row. */
  commentPrefix?: string;
  /** String values treated as absent (removed from the parsed object); explicit JSON null is passed through. */
  nullValues: string[];
}

export interface ChunkPosition {
  /** 0 for the chunk that starts the file. */
  chunkNo: number;
  /** Global row number of this chunk's first data record, from 1. */
  firstRowNo: number;
  /**
   * More chunks of the same file follow this one: it must then end with a record terminator (a
   * chunk cut in the middle of a record would land that record's head as a row of its own, 100.00
   * read as 10). Unset: the chunk is the last, or the whole sample.
   */
  more?: boolean;
  /**
   * The file's header record as read from chunk 0 (the CSV reader's `fileHeader()`), given back for
   * later chunks: it names the fields when the dialect has no `columns`, and with headerPerChunk
   * each later chunk's header must equal it.
   */
  header?: string[];
}

export interface ReadLimits {
  /** Largest record accepted, in bytes of source text; default DEFAULT_MAX_RECORD_BYTES. */
  maxRecordBytes?: number;
}

export interface CsvRow {
  kind: 'csv';
  /** The field's text; undefined when the column is unknown, the record is short, or the text is a null value. */
  get(column: string): string | undefined;
}

interface JsonlRow {
  kind: 'jsonl';
  /** The parsed line (always an object), with null-value strings removed. */
  value: Record<string, unknown>;
}

export type SourceRecord =
  | { kind: 'row'; rowNo: number; chunkNo: number; raw: string; row: CsvRow | JsonlRow }
  /**
   * A row-level schema problem (svc:validation/schema): too many fields, or a JSONL line that is not
   * a JSON object. `row`, when given, reads the fields the header names (for the reject's external id).
   */
  | { kind: 'bad_row'; rowNo: number; chunkNo: number; raw: string; message: string; row?: CsvRow };

/**
 * The whole chunk is unusable (svc:import/invalid_chunk): header or mapping mismatch, unterminated
 * quote, invalid UTF-8, record past the size cap. `rowNo` is the row the problem sits in when it is
 * a data row (undefined in the header or the skipped leading lines). The message never quotes data.
 * `nextRowNo` is the number the record after the chunk's last has, when the chunk's records could
 * still be counted past the problem (its bytes still show where they end: invalid UTF-8, a record
 * past the size cap, a header that cannot be used): the next chunk starts there.
 */
export class ChunkError extends Error {
  readonly code = 'svc:import/invalid_chunk' satisfies ErrorCode;

  constructor(
    message: string,
    readonly rowNo: number | undefined,
    readonly chunkNo: number,
    readonly nextRowNo?: number,
  ) {
    super(message);
    this.name = 'ChunkError';
  }
}

/**
 * Validates UTF-8 as bytes stream past, holding no more than the state of one partial sequence
 * (rules of the WHATWG decoder: no overlongs, no surrogates, nothing past U+10FFFF).
 */
export class Utf8Validator {
  private needed = 0;
  private lower = 0x80;
  private upper = 0xbf;

  /** Index in `buf` of the byte at which the stream stops being UTF-8, or -1 when all is well so far. */
  push(buf: Uint8Array): number {
    const n = buf.length;
    let i = 0;
    // Finish a sequence carried over from the previous buffer.
    while (this.needed > 0 && i < n) {
      if (!this.step(buf[i]!)) return i;
      i++;
    }
    if (i === n) return -1;
    // Fast path: everything up to a possibly incomplete sequence at the end is checked natively.
    let cut = n;
    for (let j = n - 1; j >= Math.max(i, n - 3); j--) {
      const b = buf[j]!;
      if (b < 0x80) break;
      if (b >= 0xc0) {
        const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
        if (j + len > n) cut = j;
        break;
      }
    }
    const from = isUtf8(buf.subarray(i, cut)) ? cut : i;
    for (let j = from; j < n; j++) {
      if (!this.step(buf[j]!)) return j;
    }
    return -1;
  }

  /** False when the stream ended inside a multi-byte sequence. */
  end(): boolean {
    return this.needed === 0;
  }

  private step(b: number): boolean {
    if (this.needed === 0) {
      if (b < 0x80) return true;
      if (b >= 0xc2 && b <= 0xdf) {
        this.needed = 1;
      } else if (b >= 0xe0 && b <= 0xef) {
        if (b === 0xe0) this.lower = 0xa0;
        else if (b === 0xed) this.upper = 0x9f;
        this.needed = 2;
      } else if (b >= 0xf0 && b <= 0xf4) {
        if (b === 0xf0) this.lower = 0x90;
        else if (b === 0xf4) this.upper = 0x8f;
        this.needed = 3;
      } else {
        return false;
      }
      return true;
    }
    if (b < this.lower || b > this.upper) return false;
    this.lower = 0x80;
    this.upper = 0xbf;
    this.needed--;
    return true;
  }
}

const EMPTY = Buffer.alloc(0);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The start of a chunk: drops a UTF-8 BOM and then the first `skipLines` physical lines (each ends
 * at a line feed, so CRLF and LF both count once), passing on the bytes after them. Skipped lines
 * are never held, whatever their length.
 */
export class ChunkHead {
  private pending: Buffer | undefined;
  private bomDecided: boolean;
  private linesLeft: number;

  constructor(opts: { dropBom: boolean; skipLines: number }) {
    this.bomDecided = !opts.dropBom;
    this.linesLeft = opts.skipLines;
  }

  /** True while the bytes passed in so far are all BOM or skipped lines. */
  get inPreamble(): boolean {
    return !this.bomDecided || this.linesLeft > 0;
  }

  push(buf: Buffer): Buffer {
    if (!this.bomDecided) {
      const b = this.pending === undefined ? buf : Buffer.concat([this.pending, buf]);
      this.pending = undefined;
      if (b.length < BOM.length && BOM.subarray(0, b.length).equals(b)) {
        this.pending = b;
        return EMPTY;
      }
      this.bomDecided = true;
      buf = b.subarray(0, BOM.length).equals(BOM) ? b.subarray(BOM.length) : b;
    }
    while (this.linesLeft > 0 && buf.length > 0) {
      const lf = buf.indexOf(10);
      if (lf < 0) return EMPTY;
      buf = buf.subarray(lf + 1);
      this.linesLeft--;
    }
    return buf;
  }

  /** At the end of the chunk: bytes still held back (a short start that only looked like a BOM). */
  end(): Buffer {
    if (this.bomDecided) return EMPTY;
    this.bomDecided = true;
    const held = this.pending ?? EMPTY;
    this.pending = undefined;
    return this.push(held);
  }
}

/** The stream's pieces as Buffers (a byte source may hand out plain Uint8Arrays). */
export function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

// Cuts an import file into upload chunks at record boundaries, streaming: the import API takes a
// file as numbered chunks of whole records (PUT /v1/imports/{id}/chunks/{n}), each under the
// server's payload cap. Pure: bytes in, chunks out, no I/O.
//
// Records are found the way the server's dialect readers find them (services/imports/dialects):
// - JSONL: a record ends at a line feed.
// - CSV: a record ends at a line feed outside a quoted field (CRLF and LF; a lone CR is data). A
//   quote opens a quoted field only at the start of a field; inside one, a doubled quote is a literal
//   quote and a quote followed by anything else closes it; a quote inside an unquoted field is
//   literal text. A comment line (a record starting with the comment prefix) ends at its line feed
//   whatever quotes it holds.
// - The file's preamble (a UTF-8 BOM, the skip_leading_rows physical lines, and for CSV with a
//   header the header record and any empty or comment lines before it) stays whole in chunk 0; with
//   header_per_chunk it is repeated (without the BOM) at the start of every later chunk, since the
//   server then reads each chunk as a whole exported file.
// Memory: at most the chunk being filled plus the record in progress (each ≤ maxBytes).

export type ChunkFormat =
  | { kind: 'csv'; delimiter: string; quote: string; hasHeader: boolean; headerPerChunk: boolean; skipLeadingRows: number; commentPrefix?: string }
  | { kind: 'jsonl'; skipLeadingRows: number };

export interface Chunk {
  /** 0, 1, 2, … in file order. */
  no: number;
  /** The bytes to upload. */
  body: Buffer;
  /** Bytes at the start of `body` that repeat the file's preamble (0 unless header_per_chunk, and for chunk 0). */
  repeatedBytes: number;
}

/** A record (with the repeated preamble, when there is one) that cannot fit in one chunk. */
export class RecordTooLargeError extends Error {
  constructor(
    /** 1-based physical line where the record starts. */
    readonly line: number,
    /** Byte offset in the file where the record starts. */
    readonly offset: number,
    readonly limit: number,
    what: string,
  ) {
    super(`${what} at line ${line} (byte offset ${offset}) is larger than the chunk size (${limit} bytes): raise --chunk-bytes, or check the file`);
    this.name = 'RecordTooLargeError';
  }
}

/**
 * The chunking-relevant part of a mapping's `format`, with the server's defaults. Lenient: the
 * server validates the mapping; this only reads what it needs.
 */
export function chunkFormatOf(mapping: unknown): ChunkFormat {
  const format = (mapping && typeof mapping === 'object' ? (mapping as { format?: unknown }).format : undefined) ?? {};
  const f = format as Record<string, unknown>;
  const skip = typeof f.skip_leading_rows === 'number' && Number.isInteger(f.skip_leading_rows) && f.skip_leading_rows > 0 ? f.skip_leading_rows : 0;
  if (f.kind === 'jsonl') return { kind: 'jsonl', skipLeadingRows: skip };
  const text = (v: unknown, fallback: string) => (typeof v === 'string' && v.length > 0 ? v : fallback);
  return {
    kind: 'csv',
    delimiter: text(f.delimiter, ','),
    quote: text(f.quote, '"'),
    hasHeader: f.has_header !== false,
    headerPerChunk: f.header_per_chunk === true,
    skipLeadingRows: skip,
    ...(typeof f.comment_prefix === 'string' && f.comment_prefix.length > 0 ? { commentPrefix: f.comment_prefix } : {}),
  };
}

const LF = 0x0a;
const CR = 0x0d;
const BOM_CP = 0xfeff;
const INVALID = -1;

function codePoints(text: string): number[] {
  return [...text].map((c) => c.codePointAt(0)!);
}

/**
 * Incremental chunker: push the file's bytes in any pieces, collect the chunks completed so far,
 * then end() for the rest. Throws RecordTooLargeError as soon as a record in progress outgrows
 * the chunk size.
 */
export class RecordChunker {
  private readonly csv: boolean;
  private readonly quote: number;
  private readonly delimiter: number;
  private readonly comment: number[];
  private readonly hasHeader: boolean;
  private readonly headerPerChunk: boolean;

  // UTF-8 assembly of code points (the quote and delimiter may be any one character).
  private cp = 0;
  private need = 0;
  private firstCodePoint = true;
  private line = 1; // physical line of the next byte

  // The preamble: open until its last byte is read; `unitIsPreamble` until it is closed as a unit.
  private inPreamble = true;
  private unitIsPreamble = true;
  private linesToSkip: number;
  private bomBytes = 0;

  // CSV record state.
  private recordStart = true;
  private recordHasContent = false;
  private pendingCR = false;
  private fieldStart = true;
  private quoting = false;
  private afterQuote = false;
  private commenting = false;
  private commentMatched = 0;
  private lastRecordHadContent = false;

  // The unit in progress (one record, or the whole preamble).
  private unitParts: Buffer[] = [];
  private unitLen = 0;
  private unitLine = 1;
  private unitOffset = 0;
  private unitBreaks = 0; // line feeds in the unit so far, counted up to 3

  // The chunk being filled.
  private current: Buffer[] = [];
  private currentLen = 0;
  private currentUnits = 0;
  private repeat: Buffer = Buffer.alloc(0);
  private nextNo = 0;
  private readonly out: Chunk[] = [];
  private ended = false;

  constructor(
    format: ChunkFormat,
    private readonly maxBytes: number,
  ) {
    if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new RangeError('the chunk size must be a positive integer');
    this.csv = format.kind === 'csv';
    this.quote = format.kind === 'csv' ? codePoints(format.quote)[0]! : INVALID;
    this.delimiter = format.kind === 'csv' ? codePoints(format.delimiter)[0]! : INVALID;
    this.comment = format.kind === 'csv' && format.commentPrefix ? codePoints(format.commentPrefix) : [];
    this.hasHeader = format.kind === 'csv' && format.hasHeader;
    this.headerPerChunk = format.kind === 'csv' && format.headerPerChunk && format.hasHeader;
    this.linesToSkip = format.skipLeadingRows;
  }

  /** Feeds the next bytes of the file; returns the chunks completed by them. */
  push(bytes: Uint8Array): Chunk[] {
    if (this.ended) throw new Error('push after end');
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let start = 0; // where the unit in progress starts in buf
    const cut = (end: number) => {
      this.grow(buf.subarray(start, end));
      start = end;
      this.closeUnit();
    };
    for (let i = 0; i < buf.length; i++) {
      if (!this.csv && !this.inPreamble && this.need === 0) {
        // JSONL past its preamble: records are lines.
        const lf = buf.indexOf(LF, i);
        if (lf < 0) break;
        this.line++;
        cut(lf + 1);
        i = lf;
        continue;
      }
      const b = buf[i]!;
      let ends = false;
      if (this.need > 0) {
        if ((b & 0xc0) === 0x80) {
          this.cp = (this.cp << 6) | (b & 0x3f);
          if (--this.need === 0 && this.codePoint(this.cp)) cut(i + 1);
          continue;
        }
        this.need = 0;
        this.codePoint(INVALID); // a sequence cut short: some character, never a token
      }
      if (b < 0x80) ends = this.codePoint(b);
      else if ((b & 0xe0) === 0xc0) [this.cp, this.need] = [b & 0x1f, 1];
      else if ((b & 0xf0) === 0xe0) [this.cp, this.need] = [b & 0x0f, 2];
      else if ((b & 0xf8) === 0xf0) [this.cp, this.need] = [b & 0x07, 3];
      else ends = this.codePoint(INVALID);
      if (b === LF) this.line++;
      if (ends) cut(i + 1);
    }
    if (start < buf.length) this.grow(buf.subarray(start));
    return this.out.splice(0);
  }

  /** The end of the file: returns the last chunks. */
  end(): Chunk[] {
    if (this.ended) return [];
    this.ended = true;
    if (this.unitLen > 0) this.closeUnit();
    if (this.currentUnits > 0) this.emit();
    return this.out.splice(0);
  }

  // One code point; true when it ends the unit in progress.
  private codePoint(cp: number): boolean {
    const first = this.firstCodePoint;
    this.firstCodePoint = false;
    if (this.inPreamble) return this.preambleCodePoint(cp, first);
    return this.csv ? this.csvCodePoint(cp) : cp === LF;
  }

  private preambleCodePoint(cp: number, first: boolean): boolean {
    if (first && cp === BOM_CP) {
      this.bomBytes = 3;
      return this.preambleEndsHere();
    }
    if (this.linesToSkip > 0) {
      // Skipped lines are raw text: quotes and delimiters in them mean nothing.
      return cp === LF && --this.linesToSkip === 0 ? this.preambleEndsHere() : false;
    }
    if (this.hasHeader) {
      // The header record; empty and comment lines before it belong to the preamble too.
      if (!this.csvCodePoint(cp) || !this.lastRecordHadContent) return false;
      this.inPreamble = false;
      return true;
    }
    // No preamble at all (no BOM, no skipped lines, no header): this code point starts the first record.
    this.inPreamble = false;
    this.unitIsPreamble = false;
    return this.csv ? this.csvCodePoint(cp) : cp === LF;
  }

  private preambleEndsHere(): boolean {
    if (this.linesToSkip > 0 || this.hasHeader) return false;
    this.inPreamble = false;
    return true;
  }

  private csvCodePoint(cp: number): boolean {
    if (this.afterQuote) {
      this.afterQuote = false;
      if (cp === this.quote) return false; // a doubled quote: one literal quote, still quoted
      this.quoting = false; // closed: this code point is read outside the quotes
    }
    if (this.quoting) {
      if (cp === this.quote) this.afterQuote = true;
      return false;
    }
    if (this.commenting) return cp === LF ? this.endRecord(false) : false;
    if (this.commentMatched > 0) {
      if (cp === this.comment[this.commentMatched]) {
        if (++this.commentMatched === this.comment.length) {
          this.commenting = true;
          this.commentMatched = 0;
        }
        return false;
      }
      // Not a comment after all: what matched is ordinary text.
      const matched = this.comment.slice(0, this.commentMatched);
      this.commentMatched = 0;
      for (const c of matched) this.ordinary(c);
      return this.ordinary(cp);
    }
    if (this.recordStart && this.comment.length > 0 && cp === this.comment[0] && cp !== this.quote) {
      this.recordStart = false;
      if (this.comment.length === 1) this.commenting = true;
      else this.commentMatched = 1;
      return false;
    }
    return this.ordinary(cp);
  }

  // A code point outside quotes and comments.
  private ordinary(cp: number): boolean {
    if (cp === LF) return this.endRecord(this.recordHasContent);
    // A CR is part of the terminator only right before the LF.
    if (this.pendingCR || cp !== CR) this.recordHasContent = true;
    this.pendingCR = cp === CR;
    this.recordStart = false;
    if (cp === this.quote) {
      // Opens a quoted field at the start of a field; elsewhere it is literal text.
      if (this.fieldStart) this.quoting = true;
      this.fieldStart = false;
      return false;
    }
    this.fieldStart = cp === this.delimiter;
    return false;
  }

  private endRecord(hadContent: boolean): boolean {
    this.recordStart = true;
    this.recordHasContent = false;
    this.pendingCR = false;
    this.fieldStart = true;
    this.commenting = false;
    this.lastRecordHadContent = hadContent;
    return true;
  }

  private grow(piece: Buffer): void {
    if (piece.length === 0) return;
    this.unitParts.push(piece);
    this.unitLen += piece.length;
    for (let k = piece.indexOf(LF); k >= 0 && this.unitBreaks < 3; k = piece.indexOf(LF, k + 1)) this.unitBreaks++;
    // Fail as soon as the unit in progress cannot fit, before reading the rest of it.
    const limit = this.unitIsPreamble ? this.maxBytes : this.maxBytes - this.repeat.length;
    if (this.unitLen > limit) this.tooLarge();
  }

  private tooLarge(): never {
    const what = this.unitIsPreamble
      ? 'the header'
      : this.csv && this.unitBreaks >= 3 && this.quoting
        ? 'a record running over several lines (an unterminated quote?)'
        : this.repeat.length > 0
          ? 'a record (with the repeated header)'
          : 'a record';
    throw new RecordTooLargeError(this.unitLine, this.unitOffset, this.maxBytes, what);
  }

  private closeUnit(): void {
    const parts = this.unitParts;
    const len = this.unitLen;
    this.unitParts = [];
    this.unitLen = 0;
    this.unitOffset += len;
    this.unitLine = this.line;
    this.unitBreaks = 0;
    if (len === 0) return;
    if (this.unitIsPreamble) {
      this.unitIsPreamble = false;
      // Copied: it outlives the caller's buffers.
      if (this.headerPerChunk) this.repeat = Buffer.from(Buffer.concat(parts, len).subarray(this.bomBytes));
    }
    if (this.currentUnits > 0 && this.currentLen + len > this.maxBytes) this.emit();
    this.current.push(...parts);
    this.currentLen += len;
    this.currentUnits++;
  }

  private emit(): void {
    const first = this.nextNo === 0;
    this.out.push({ no: this.nextNo++, body: Buffer.concat(this.current, this.currentLen), repeatedBytes: first ? 0 : this.repeat.length });
    this.current = this.repeat.length > 0 ? [this.repeat] : [];
    this.currentLen = this.repeat.length;
    this.currentUnits = 0;
  }
}

/** Chunks of a byte stream (a file read stream, say), as they complete. */
export async function* chunkStream(source: AsyncIterable<Uint8Array>, format: ChunkFormat, maxBytes: number): AsyncGenerator<Chunk> {
  const chunker = new RecordChunker(format, maxBytes);
  for await (const piece of source) yield* chunker.push(piece);
  yield* chunker.end();
}

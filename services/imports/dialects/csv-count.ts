// Counts the records of CSV bytes without parsing their fields, by the rules csv.ts reads them
// with (csv-parse with relax_quotes, skip_empty_lines and comment_no_infix): a record ends at a
// line feed outside quotes; a quote opens a quoted field only at the start of a field; inside one,
// a doubled quote is a quote and any other quote closes it; empty lines and lines starting with the
// comment prefix are no records. Used past a chunk-level problem whose bytes still show where
// records end (invalid UTF-8, a record past the size cap, a header that cannot be used), so the
// rows after it keep their numbers in the file. Bytes are matched as bytes: invalid UTF-8 never
// looks like a quote, delimiter or line feed. A quote still open at the end is the reader's
// unterminated quote: where the records in it end is unknown, and so is the count. Holds only a
// few bytes of lookahead between pieces.
const LF = 10;
const CR = 13;

export class CsvRecordCounter {
  private readonly quote: Buffer;
  private readonly delimiter: Buffer;
  private readonly comment: Buffer | undefined;
  // Bytes needed past a position to decide what stands there.
  private readonly lookahead: number;
  private carry = Buffer.alloc(0);
  private counted = 0;
  // State at the scan position.
  private lineStart = true; // nothing of the current line read yet
  private fieldStart = true;
  private quoted = false;
  private commentLine = false;
  private lineBytes = 0; // bytes of the current line read so far
  private lastCr = false; // the last of them was a CR outside quotes

  constructor(dialect: { quote: string; delimiter: string; commentPrefix?: string | undefined }) {
    this.quote = Buffer.from(dialect.quote);
    this.delimiter = Buffer.from(dialect.delimiter);
    this.comment = dialect.commentPrefix ? Buffer.from(dialect.commentPrefix) : undefined;
    this.lookahead = Math.max(2 * this.quote.length, this.delimiter.length, this.comment?.length ?? 0);
  }

  /** Records ended so far (the last one counts once `end` is called). */
  get records(): number {
    return this.counted;
  }

  push(piece: Uint8Array): void {
    const buf = this.carry.length === 0 ? Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength) : Buffer.concat([this.carry, piece]);
    const stop = buf.length - this.lookahead + 1;
    let i = 0;
    while (i < stop) i = this.step(buf, i);
    this.carry = Buffer.from(buf.subarray(i));
  }

  /**
   * Counts a last record without its terminator; returns every record counted, or undefined when
   * the bytes end inside a quoted field.
   */
  end(): number | undefined {
    const buf = this.carry;
    this.carry = Buffer.alloc(0);
    let i = 0;
    while (i < buf.length) i = this.step(buf, i);
    if (this.quoted) return undefined;
    if (!this.lineStart) this.endLine(false);
    return this.counted;
  }

  // Reads what stands at `i`; returns the position after it.
  private step(buf: Buffer, i: number): number {
    if (this.quoted) {
      if (!starts(buf, i, this.quote)) return this.read(i, 1);
      // A doubled quote stands for one; any other quote closes the field.
      if (starts(buf, i + this.quote.length, this.quote)) return this.read(i, 2 * this.quote.length);
      this.quoted = false;
      return this.read(i, this.quote.length);
    }
    if (buf[i] === LF) {
      this.endLine(true);
      return i + 1;
    }
    if (this.commentLine) return i + 1;
    if (this.lineStart && this.comment && starts(buf, i, this.comment)) {
      this.commentLine = true;
      return this.read(i, this.comment.length);
    }
    if (this.fieldStart && starts(buf, i, this.quote)) {
      const next = this.read(i, this.quote.length);
      this.quoted = true;
      return next;
    }
    if (starts(buf, i, this.delimiter)) {
      const next = this.read(i, this.delimiter.length);
      this.fieldStart = true;
      return next;
    }
    const next = this.read(i, 1);
    // A CR right before the line feed is the terminator's; elsewhere it is data.
    this.lastCr = buf[i] === CR;
    return next;
  }

  // `n` bytes of the line read from `i`.
  private read(i: number, n: number): number {
    this.lineStart = false;
    this.fieldStart = false;
    this.lastCr = false;
    this.lineBytes += n;
    return i + n;
  }

  // The line ends at a line feed (`terminated`), or with the bytes.
  private endLine(terminated: boolean): void {
    // An empty line (LF or CRLF alone) and a comment line are no record; a CR not before a line
    // feed is data.
    if (!this.commentLine && this.lineBytes - (terminated && this.lastCr ? 1 : 0) > 0) this.counted++;
    this.lineStart = true;
    this.fieldStart = true;
    this.quoted = false;
    this.commentLine = false;
    this.lineBytes = 0;
    this.lastCr = false;
  }
}

function starts(buf: Buffer, at: number, token: Buffer): boolean {
  if (at + token.length > buf.length) return false;
  for (let k = 0; k < token.length; k++) if (buf[at + k] !== token[k]) return false;
  return true;
}

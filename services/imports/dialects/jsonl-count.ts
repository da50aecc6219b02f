// What makes a JSONL line a record, and a counter of the records in JSONL bytes by that rule, for
// jsonl.ts. A record is a line (ended by LF, a CR before it dropped) that is neither blank (only
// whitespace) nor a comment (commentPrefix after any leading blanks). The counter is used past
// invalid UTF-8, which never looks like a line feed, and past a line over the size cap: the lines
// after them still end where they did, so the rows after them keep their numbers in the file. A
// line holding invalid UTF-8 is classed on its text with U+FFFD in place of the bad bytes (never
// blank; a comment only when the prefix comes before them). Only a line's start is held.
const LF = 10;
const CR = 13;
// Bytes of a line held before trying to class it: a long line is then classed by its start and not
// held (only a line of nothing but blanks is held whole).
const LEAD_BYTES = 1024;

/** The text of a line (without its terminator), or undefined when it is blank or a comment. */
export function jsonlRecordText(line: Buffer, commentPrefix: string | undefined): string | undefined {
  const text = line.toString('utf8');
  const start = text.search(/\S/);
  if (start < 0) return undefined;
  if (commentPrefix !== undefined && text.startsWith(commentPrefix, start)) return undefined;
  return text;
}

/** Strips the CR of a CRLF from a line cut at its LF. */
export function withoutCr(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
}

export class JsonlRecordCounter {
  private parts: Buffer[] = [];
  private held = 0;
  // Held bytes at which to try to class the line in progress before its end.
  private nextTry = LEAD_BYTES;
  // Whether the line in progress is a record, once known before its end (its bytes are then dropped).
  private classed: boolean | undefined;
  private counted = 0;

  constructor(private readonly commentPrefix: string | undefined) {}

  push(piece: Buffer): void {
    let from = 0;
    for (let lf = piece.indexOf(LF); lf >= 0; lf = piece.indexOf(LF, from)) {
      this.hold(piece.subarray(from, lf));
      from = lf + 1;
      this.endLine();
    }
    this.hold(piece.subarray(from));
  }

  /** Counts a last line without its terminator; returns every record counted. */
  end(): number {
    if (this.held > 0 || this.classed !== undefined) this.endLine();
    return this.counted;
  }

  private hold(bytes: Buffer): void {
    if (this.classed !== undefined || bytes.length === 0) return;
    this.parts.push(bytes);
    this.held += bytes.length;
    if (this.held < this.nextTry) return;
    this.nextTry = 2 * this.held;
    // Known once the first character past the blanks and the prefix's length after it are read,
    // and are not the last character held (which may be cut short).
    const line = Buffer.concat(this.parts);
    const text = line.toString('utf8');
    const start = text.search(/\S/);
    if (start < 0 || start + (this.commentPrefix?.length ?? 1) >= text.length - 1) {
      this.parts = [line];
      return;
    }
    this.classed = jsonlRecordText(line, this.commentPrefix) !== undefined;
    this.parts = [];
  }

  private endLine(): void {
    const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    if (this.classed ?? jsonlRecordText(withoutCr(line), this.commentPrefix) !== undefined) this.counted++;
    this.parts = [];
    this.held = 0;
    this.nextTry = LEAD_BYTES;
    this.classed = undefined;
  }
}

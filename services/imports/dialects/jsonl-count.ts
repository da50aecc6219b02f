// What makes a JSONL line a record, and a counter of the records in JSONL bytes by that rule, for
// jsonl.ts. A record is a line (ended by LF, a CR before it dropped) that is neither blank (only
// whitespace) nor a comment (commentPrefix after any leading blanks). The counter is used past
// invalid UTF-8, which never looks like a line feed: the lines after it still end where they did,
// so the rows after it keep their numbers in the file. A line holding invalid UTF-8 is classed
// on its text with U+FFFD in place of the bad bytes (never blank; a comment only when the prefix
// comes before them).
const LF = 10;
const CR = 13;

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
  private counted = 0;

  constructor(private readonly commentPrefix: string | undefined) {}

  push(piece: Buffer): void {
    let from = 0;
    for (let lf = piece.indexOf(LF); lf >= 0; lf = piece.indexOf(LF, from)) {
      this.parts.push(piece.subarray(from, lf));
      from = lf + 1;
      this.endLine();
    }
    if (from < piece.length) this.parts.push(piece.subarray(from));
  }

  /** Counts a last line without its terminator; returns every record counted. */
  end(): number {
    if (this.parts.length > 0) this.endLine();
    return this.counted;
  }

  private endLine(): void {
    const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    if (jsonlRecordText(withoutCr(line), this.commentPrefix) !== undefined) this.counted++;
  }
}

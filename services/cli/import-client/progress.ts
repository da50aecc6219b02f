// Progress on stderr: on a terminal one line redrawn in place (a bar), otherwise plain lines at
// most every few seconds (and the last state), so logs of a scripted run stay readable.

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export class ProgressLine {
  private drawn = false;
  private lastPlainAt = -Infinity;
  private lastPlain = '';

  constructor(
    private readonly stream: ProgressStream,
    private readonly plainEveryMs = 5000,
    private readonly now: () => number = Date.now,
  ) {}

  get tty(): boolean {
    return this.stream.isTTY === true;
  }

  /** Shows the state: `bar` on a terminal, `plain` as a line when due (or when `force`). */
  show(render: { bar: (width: number) => string; plain: () => string }, force = false): void {
    if (this.tty) {
      const width = Math.max(40, (this.stream.columns || 80) - 1);
      const line = render.bar(width).slice(0, width);
      this.stream.write(`\r${line}\x1b[K`);
      this.drawn = true;
      return;
    }
    const at = this.now();
    if (!force && at - this.lastPlainAt < this.plainEveryMs) return;
    const line = render.plain();
    if (line === this.lastPlain && !force) return;
    this.lastPlainAt = at;
    this.lastPlain = line;
    this.stream.write(`${line}\n`);
  }

  /** A message of its own, above the bar. */
  note(line: string): void {
    this.clear();
    this.stream.write(`${line}\n`);
  }

  /** Leaves the last bar on screen and moves below it. */
  done(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }

  private clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}

export interface UploadState {
  sentBytes: number;
  totalBytes: number;
  chunks: number;
  elapsedMs: number;
}

export function renderUploadBar(s: UploadState, width: number): string {
  const pct = s.totalBytes > 0 ? Math.min(1, s.sentBytes / s.totalBytes) : 1;
  return withBar('uploading ', pct, ` ${percent(pct)} ${bytes(s.sentBytes)}/${bytes(s.totalBytes)} · ${s.chunks} chunk${s.chunks === 1 ? '' : 's'} · ${rate(s)}`, width);
}

export function renderUploadPlain(s: UploadState): string {
  const pct = s.totalBytes > 0 ? Math.min(1, s.sentBytes / s.totalBytes) : 1;
  return `uploaded ${bytes(s.sentBytes)} of ${bytes(s.totalBytes)} (${percent(pct).trim()}), ${s.chunks} chunk${s.chunks === 1 ? '' : 's'}, ${rate(s)}`;
}

export interface LandingState {
  state: string;
  chunksLanded: number;
  chunkCount: number;
  rowsRead: number;
  accepted: number;
  rejected: number;
}

export function renderLandingBar(s: LandingState, width: number): string {
  const pct = s.chunkCount > 0 ? Math.min(1, s.chunksLanded / s.chunkCount) : 0;
  return withBar('landing   ', pct, ` ${s.chunksLanded}/${s.chunkCount} chunks · ${s.rowsRead} rows (${s.accepted} accepted, ${s.rejected} rejected)`, width);
}

export function renderLandingPlain(s: LandingState): string {
  return `${s.state}: ${s.chunksLanded}/${s.chunkCount} chunks landed, ${s.rowsRead} rows read (${s.accepted} accepted, ${s.rejected} rejected)`;
}

// The label, a bar as wide as the line leaves room for (none when under 10), and the figures.
function withBar(label: string, fraction: number, figures: string, width: number): string {
  const room = Math.min(40, width - label.length - figures.length - 2);
  return room >= 10 ? `${label}${bar(fraction, room)}${figures}` : `${label.trimEnd()}${figures}`;
}

function bar(fraction: number, width: number): string {
  const full = Math.round(fraction * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

function percent(fraction: number): string {
  return `${Math.floor(fraction * 100)}%`.padStart(4);
}

function rate(s: UploadState): string {
  return s.elapsedMs > 0 ? `${bytes((s.sentBytes * 1000) / s.elapsedMs)}/s` : '-';
}

/** 1536 → "1.5 KiB". */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

// Labels for training: what a bank knows from its own history. A label file is CSV with the
// header `kind,external_id,label[,as_of]`: kind account or party, label 1/true (confirmed
// laundering) or 0/false (cleared), as_of the RFC 3339 instant the label describes (default: the
// subject's latest activity when training runs), not later than now: an account judged at a
// future instant has no activity in its window, and the model would learn the empty window.
// Every bad row is reported by its line, none is dropped silently; an account labelled both ways
// keeps one label, and training reports it.
import { parse, type Info } from 'csv-parse/sync';
import { dateTimeMs, isDateTime } from '../../../schemas/primitives/timestamp.ts';

export interface Label {
  kind: 'account' | 'party';
  externalId: string;
  label: boolean;
  asOf: Date | null;
  source: 'file' | 'disposition';
}

interface LabelIssue {
  line: number;
  message: string;
}

export type LabelFileOutcome = { ok: true; labels: Label[] } | { ok: false; issues: LabelIssue[] };

const REQUIRED = ['kind', 'external_id', 'label'] as const;
const KNOWN = new Set<string>([...REQUIRED, 'as_of']);
// Reported issues at most: a file wrong throughout says so in the first few.
const MAX_ISSUES = 20;
// Characters of the CSV parser's own message shown.
const MAX_PARSE_MESSAGE = 200;
// The spec's external_id: 1 to 256 characters.
const MAX_EXTERNAL_ID = 256;
const TRUE = new Set(['1', 'true']);
const FALSE = new Set(['0', 'false']);

// now: the instant training runs at; an as_of after it is refused.
export function parseLabelFile(text: string, now: Date): LabelFileOutcome {
  // Read as UTF-8, a UTF-16 file (Excel's "Unicode text") has a NUL byte between every letter of
  // its header, which then read as "unknown k i n d": name the encoding instead.
  if (text.split('\n', 1)[0]!.includes('\u0000')) {
    return { ok: false, issues: [{ line: 1, message: 'the file is not UTF-8 text (its header holds NUL bytes: UTF-16, or not text at all); save it as CSV in UTF-8' }] };
  }
  let rows: Array<{ record: string[]; info: Info }>;
  try {
    // info: each record's line in the file, blank lines included (a record whose quoted field spans
    // lines is named by its last).
    rows = parse(text, { skip_empty_lines: true, trim: true, relax_column_count: true, info: true }) as unknown as typeof rows;
  } catch (error) {
    // csv-parse names the line it stopped at; its message may quote a whole field (a binary file's
    // kilobytes), so it is cut short.
    const line = (error as { lines?: number }).lines ?? 1;
    const message = (error as Error).message;
    return { ok: false, issues: [{ line, message: `not CSV: ${message.length > MAX_PARSE_MESSAGE ? `${message.slice(0, MAX_PARSE_MESSAGE)}…` : message}` }] };
  }
  const header = rows[0]?.record.map((cell) => cell.toLowerCase());
  if (!header) return { ok: false, issues: [{ line: 1, message: 'the file is empty; expected the header kind,external_id,label[,as_of]' }] };
  const headerIssue = checkHeader(header);
  if (headerIssue) return { ok: false, issues: [{ line: rows[0]!.info.lines, message: `header: ${headerIssue} (expected kind,external_id,label[,as_of])` }] };
  const issues: LabelIssue[] = [];
  const labels: Label[] = [];
  for (const { record, info } of rows.slice(1)) {
    const read = labelOf(header, record, now);
    if (typeof read === 'string') issues.push({ line: info.lines, message: read });
    else labels.push(read);
  }
  if (issues.length > 0) return { ok: false, issues: issues.slice(0, MAX_ISSUES) };
  return { ok: true, labels };
}

// What is wrong with the (lower-cased) header, if anything. A column named twice is refused: which
// of the two a row's value is read from would be a guess.
function checkHeader(header: readonly string[]): string | null {
  const missing = REQUIRED.filter((name) => !header.includes(name));
  const unknown = header.filter((name) => !KNOWN.has(name));
  const repeated = [...new Set(header.filter((name, i) => header.indexOf(name) !== i))];
  const parts = [
    missing.length ? `missing ${missing.join(', ')}` : '',
    unknown.length ? `unknown ${unknown.join(', ')}` : '',
    repeated.length ? `repeated ${repeated.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : null;
}

// One row's label, or what is wrong with it.
function labelOf(header: readonly string[], row: readonly string[], now: Date): Label | string {
  if (row.length !== header.length) return `${row.length} columns where the header has ${header.length}`;
  const cell = (name: string) => (header.includes(name) ? (row[header.indexOf(name)] ?? '') : '');
  const kind = cell('kind').toLowerCase();
  const externalId = cell('external_id');
  const label = cell('label').toLowerCase();
  const asOf = cell('as_of');
  if (kind !== 'account' && kind !== 'party') return `kind must be account or party, not ${JSON.stringify(cell('kind'))}`;
  if (externalId === '' || externalId.length > MAX_EXTERNAL_ID) return `external_id must be 1 to ${MAX_EXTERNAL_ID} characters`;
  if (!TRUE.has(label) && !FALSE.has(label)) return `label must be 1, 0, true or false, not ${JSON.stringify(cell('label'))}`;
  if (asOf !== '' && !isDateTime(asOf)) return `as_of must be an RFC 3339 date-time with an offset or Z, not ${JSON.stringify(asOf)}`;
  const at = asOf === '' ? null : new Date(dateTimeMs(asOf));
  if (at && at.getTime() > now.getTime()) return `as_of ${asOf} is later than now (${now.toISOString()}): a label describes an instant that has passed`;
  return { kind, externalId, label: TRUE.has(label), asOf: at, source: 'file' };
}

// A label on one account: as given, or a party's label on an account the party holds.
export interface AccountLabel {
  account: string;
  label: boolean;
  asOf: Date | null;
  source: Label['source'];
}

// An account labelled both ways, and the label training kept for it.
export interface LabelConflict {
  account: string;
  positive: number;
  negative: number;
  kept: AccountLabel;
}

// One label per account: training takes each account as one example, so that the held-back part
// is accounts the fit never saw. Labels given in order (the file's rows, then the dispositions);
// the one kept is, in precedence:
//   1. a case disposition over a file row: what an analyst judged, on the service's own alerts;
//   2. the later instant (a file row without as_of counts as latest: it is judged at the account's
//      latest activity);
//   3. the one given later.
// Labels that agree just collapse; accounts labelled both ways are returned with the kept label,
// to be reported.
export function oneLabelPerAccount(labels: readonly AccountLabel[]): { labels: AccountLabel[]; conflicts: LabelConflict[] } {
  const kept = new Map<string, AccountLabel>();
  const counts = new Map<string, { positive: number; negative: number }>();
  for (const l of labels) {
    const current = kept.get(l.account);
    if (!current || outranks(l, current)) kept.set(l.account, l);
    const count = counts.get(l.account) ?? { positive: 0, negative: 0 };
    if (l.label) count.positive += 1;
    else count.negative += 1;
    counts.set(l.account, count);
  }
  const conflicts = [...counts]
    .filter(([, c]) => c.positive > 0 && c.negative > 0)
    .map(([account, c]) => ({ account, ...c, kept: kept.get(account)! }));
  return { labels: [...kept.values()], conflicts };
}

const SOURCE_RANK: Record<Label['source'], number> = { file: 0, disposition: 1 };
const instantOf = (l: AccountLabel): number => l.asOf?.getTime() ?? Number.POSITIVE_INFINITY;

// Whether a label given later takes the place of one given earlier.
function outranks(later: AccountLabel, earlier: AccountLabel): boolean {
  if (later.source !== earlier.source) return SOURCE_RANK[later.source] > SOURCE_RANK[earlier.source];
  return instantOf(later) >= instantOf(earlier);
}

// Labels for training: what a bank knows from its own history. A label file is CSV with the
// header `kind,external_id,label[,as_of]`: kind account or party, label 1/true (confirmed
// laundering) or 0/false (cleared), as_of the RFC 3339 instant the label describes (default: the
// subject's latest activity when training runs). Every bad row is reported by its line, none
// is dropped silently.
import { parse } from 'csv-parse/sync';
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
const TRUE = new Set(['1', 'true']);
const FALSE = new Set(['0', 'false']);

export function parseLabelFile(text: string): LabelFileOutcome {
  let rows: string[][];
  try {
    rows = parse(text, { skip_empty_lines: true, trim: true, relax_column_count: true }) as string[][];
  } catch (error) {
    return { ok: false, issues: [{ line: 0, message: `not CSV: ${(error as Error).message}` }] };
  }
  const header = rows[0]?.map((cell) => cell.toLowerCase());
  if (!header) return { ok: false, issues: [{ line: 1, message: 'the file is empty; expected the header kind,external_id,label[,as_of]' }] };
  const missing = REQUIRED.filter((name) => !header.includes(name));
  const unknown = header.filter((name) => !KNOWN.has(name));
  if (missing.length > 0 || unknown.length > 0) {
    const parts = [missing.length ? `missing ${missing.join(', ')}` : '', unknown.length ? `unknown ${unknown.join(', ')}` : ''].filter(Boolean);
    return { ok: false, issues: [{ line: 1, message: `header: ${parts.join('; ')} (expected kind,external_id,label[,as_of])` }] };
  }
  const col = (name: string) => header.indexOf(name);
  const issues: LabelIssue[] = [];
  const labels: Label[] = [];
  rows.slice(1).forEach((row, i) => {
    const line = i + 2;
    const cell = (name: string) => (col(name) >= 0 ? (row[col(name)] ?? '') : '');
    if (row.length !== header.length) return void issues.push({ line, message: `${row.length} columns where the header has ${header.length}` });
    const kind = cell('kind');
    const externalId = cell('external_id');
    const label = cell('label').toLowerCase();
    const asOf = cell('as_of');
    if (kind !== 'account' && kind !== 'party') return void issues.push({ line, message: `kind must be account or party, not ${JSON.stringify(kind)}` });
    if (externalId === '' || externalId.length > 128) return void issues.push({ line, message: 'external_id must be 1 to 128 characters' });
    if (!TRUE.has(label) && !FALSE.has(label)) return void issues.push({ line, message: `label must be 1, 0, true or false, not ${JSON.stringify(cell('label'))}` });
    if (asOf !== '' && !isDateTime(asOf)) return void issues.push({ line, message: `as_of must be an RFC 3339 date-time with an offset or Z, not ${JSON.stringify(asOf)}` });
    labels.push({ kind, externalId, label: TRUE.has(label), asOf: asOf === '' ? null : new Date(dateTimeMs(asOf)), source: 'file' });
  });
  if (issues.length > 0) return { ok: false, issues: issues.slice(0, MAX_ISSUES) };
  return { ok: true, labels };
}

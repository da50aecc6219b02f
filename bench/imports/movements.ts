import { SCHEMA_VERSION } from '../../schemas/envelope.ts';
import { ACCOUNTS, HISTORY_DAYS } from './settings.ts';

// The synthetic movements of bench/imports: row n of the file is a function of n alone (a hash of
// it seeds the row's draws), so the CSV can be written as a stream and the baseline can build the
// same events for any row without keeping the file or the rows in memory.

const DAY_MS = 86_400_000;

export const CSV_HEADER = 'id,at,amount,currency,from,to,memo';

// The import's mapping over that file (as in services/api/routes/imports.test.ts).
export const MAPPING = {
  mapping_version: 1,
  family: 'movement',
  format: { kind: 'csv' },
  fields: {
    external_id: { from: 'id' },
    occurred_at: { from: 'at', type: 'datetime' },
    'data.type': { const: 'p2p' },
    'data.status': { const: 'completed' },
    'data.amount': { type: 'money', value: { from: 'amount' }, asset: { from: 'currency' } },
    'data.debit.account_id': { from: 'from' },
    'data.credit.account_id': { from: 'to' },
    'data.memo': { from: 'memo', optional: true },
  },
} as const;

export interface MovementRow {
  at: Date;
  // Minor units (cents); every currency used has scale 2.
  cents: number;
  currency: string;
  from: string;
  to: string;
  // '' when the row has none (the mapping's optional memo is then left out).
  memo: string;
}

// One draw sequence per row: mulberry32 seeded with a hash of the row number.
function drawsFor(n: number): () => number {
  let state = Math.imul(n + 1, 0x9e3779b1) ^ 0x5bd1e995;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MEMOS = ['rent', 'groceries', 'salary', 'dinner', 'utilities', 'loan repayment', 'gift', 'subscription', 'school fees', 'car repair'];
const ACCOUNT_WIDTH = String(ACCOUNTS).length;
const account = (index: number): string => `acct-${String(index + 1).padStart(ACCOUNT_WIDTH, '0')}`;

// Row n of `rows`, the rows spread in time order over the HISTORY_DAYS before goLive (whole seconds).
export function movementRow(n: number, rows: number, goLiveMs: number): MovementRow {
  const draw = drawsFor(n);
  const span = HISTORY_DAYS * DAY_MS;
  const at = new Date(Math.floor((goLiveMs - span + ((n + draw()) / rows) * span) / 1000) * 1000);
  // Amounts from 1.00 to ~50,000.00, most of them small (log-uniform).
  const cents = Math.max(100, Math.round(10 ** (2 + draw() * 4.7)));
  const c = draw();
  const currency = c < 0.8 ? 'USD' : c < 0.92 ? 'EUR' : 'GBP';
  // Some accounts far busier than others.
  const debit = Math.floor(draw() ** 2 * ACCOUNTS);
  const credit = (debit + 1 + Math.floor(draw() * (ACCOUNTS - 1))) % ACCOUNTS;
  const m = draw();
  let memo = '';
  if (m < 0.45) memo = MEMOS[Math.floor(draw() * MEMOS.length)]!;
  else if (m < 0.6) memo = `invoice ${10_000 + Math.floor(draw() * 90_000)}`;
  // A few that need quoting in the CSV.
  else if (m < 0.63) memo = 'dinner, drinks';
  else if (m < 0.64) memo = 'refund "order 7"';
  return { at, cents, currency, from: account(debit), to: account(credit), memo };
}

const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const decimal = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

// The row's instant as the file writes it: RFC 3339 without fractional seconds. The mapping keeps
// a datetime in that form as written, so the baseline sends it the same way.
const fileInstant = (at: Date): string => at.toISOString().replace('.000Z', 'Z');

// The row as a line of the file (amounts in decimal).
export function csvLine(id: string, row: MovementRow): string {
  const at = fileInstant(row.at);
  return `${id},${at},${decimal(row.cents)},${row.currency},${row.from},${row.to},${csvField(row.memo)}\n`;
}

// The event the mapping makes of the row: what the baseline sends as {object: 'movement', event}.
export function movementEvent(id: string, row: MovementRow) {
  return {
    external_id: id,
    schema_version: SCHEMA_VERSION,
    occurred_at: fileInstant(row.at),
    data: {
      type: 'p2p',
      status: 'completed',
      amount: { value: String(row.cents), asset: row.currency, scale: 2 },
      debit: { account_id: row.from },
      credit: { account_id: row.to },
      ...(row.memo ? { memo: row.memo } : {}),
    },
  };
}

// ids of the same width on both sides, so that the events are the same size too.
export function externalId(prefix: string, n: number, rows: number): string {
  return `${prefix}${String(n + 1).padStart(String(rows).length, '0')}`;
}

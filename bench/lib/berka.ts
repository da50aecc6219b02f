import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SCHEMA_VERSION } from '../../schemas/envelope.ts';

// The Berka / PKDD'99 Czech bank data (a real retail bank's accounts, anonymised; no laundering
// labels) as the service's events: every account a party `berka-P<id>` holding one account
// `berka-A<id>`, every customer payment of trans.asc a movement `berka-M<trans_id>` between the
// account and cash (no counterparty) or the other bank's account named on the row (an external
// counterparty). Deterministic: the same files give the same events on every run.

// The amounts are Czech crowns; the default model reads USD. One fixed rate, about the average of
// 1993-1994, the years the rows cover (CZK 29 to the dollar).
export const CZK_PER_USD = 29n;
// The rows' dates moved forward by whole years, so that every engine holds them as recent history,
// as the AMLSim sets are dated 2026 (weekdays shift; months and days are kept).
export const YEARS_SHIFTED = 32;
// The bank's own postings, not payments of the customer: interest credited, statement fees and
// penalty interest. A payment-monitoring feed carries what the customer does.
const BANK_POSTINGS = new Set(['UROK', 'SLUZBY', 'SANKC. UROK']);
const DAY_MS = 86_400_000;

const accountKey = (id: number): string => `berka-A${id}`;
const partyKey = (id: number): string => `berka-P${id}`;

export type Half = 'chooser' | 'judged';
// A fixed, content-blind split of the accounts in two halves: the first bit of the SHA-256 of the
// account's number. One half may train and choose; the other is only ever judged.
export const halfOf = (id: number): Half => ((createHash('sha256').update(`berka:${id}`).digest()[0]! & 1) === 0 ? 'chooser' : 'judged');

export interface BerkaAccount {
  id: number;
  openedAtMs: number;
}

export interface BerkaPayment {
  id: number;
  account: number;
  direction: 'in' | 'out';
  // USD cents, as a decimal string.
  cents: string;
  // The other bank and account when the row names one; none for cash.
  counterparty: { bank: string; account: string } | null;
  occurredAtMs: number;
}

export interface BerkaData {
  accounts: BerkaAccount[];
  // In time order.
  payments: BerkaPayment[];
  // Rows that are not complete rows (the published trans.asc ends in a cut line), and bank postings.
  rejected: number;
  bankPostings: number;
}

const cells = (line: string): string[] => line.split(';').map((c) => c.trim().replace(/^"(.*)"$/, '$1').trim());

// YYMMDD (19YY), moved forward by YEARS_SHIFTED, at midnight UTC.
function dayMs(yymmdd: string): number {
  const m = /^(\d{2})(\d{2})(\d{2})$/.exec(yymmdd);
  if (!m) throw new Error(`not a YYMMDD date: ${yymmdd}`);
  return Date.UTC(1900 + Number(m[1]) + YEARS_SHIFTED, Number(m[2]) - 1, Number(m[3]));
}

// "700.00" CZK → USD cents at CZK_PER_USD, rounded half up: integer arithmetic only.
function usdCentsOf(czk: string): string {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(czk);
  if (!m) throw new Error(`not an amount with at most 2 decimal places: ${czk}`);
  const halers = BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
  return ((halers * 2n + CZK_PER_USD) / (2n * CZK_PER_USD)).toString();
}

// The accounts of `keep` opened by the last day trans.asc covers (the published file is cut in
// March 1994; account.asc lists accounts opened up to 1997), and their customer payments.
export async function loadBerka(dir: string, keep: (account: number) => boolean): Promise<BerkaData> {
  const accountLines = (await readFile(join(dir, 'account.asc'), 'utf8')).split(/\r?\n/).filter((l) => l.trim());
  const opened = accountLines
    .slice(1)
    .map(cells)
    .map((c) => ({ id: Number(c[0]), openedAtMs: dayMs(c[3]!) }))
    .filter((a) => keep(a.id));
  const known = new Set(opened.map((a) => a.id));
  const payments: BerkaPayment[] = [];
  let lastDayMs = 0;
  let rejected = 0;
  let bankPostings = 0;
  const lines = (await readFile(join(dir, 'trans.asc'), 'utf8')).split(/\r?\n/).filter((l) => l.trim());
  for (const [index, line] of lines.slice(1).entries()) {
    const c = cells(line);
    const [id, account, date, type, , amount, , kSymbol, bank, other] = c;
    if (c.length !== 10 || !/^\d+$/.test(id!) || !['PRIJEM', 'VYDAJ', 'VYBER'].includes(type!)) {
      rejected += 1;
      continue;
    }
    lastDayMs = Math.max(lastDayMs, dayMs(date!));
    if (!known.has(Number(account))) continue;
    if (BANK_POSTINGS.has(kSymbol!)) {
      bankPostings += 1;
      continue;
    }
    payments.push({
      id: Number(id),
      account: Number(account),
      direction: type === 'PRIJEM' ? 'in' : 'out',
      cents: usdCentsOf(amount!),
      counterparty: bank && other ? { bank, account: other } : null,
      // The rows carry a date only: the row's place in the file orders a day's payments.
      occurredAtMs: dayMs(date!) + (index % 86_400) * 1000,
    });
  }
  payments.sort((a, b) => a.occurredAtMs - b.occurredAtMs || a.id - b.id);
  return { accounts: opened.filter((a) => a.openedAtMs <= lastDayMs), payments, rejected, bankPostings };
}

// ---- events, as batch items (JSON text) ----

export function partyItem(a: BerkaAccount): string {
  const at = new Date(a.openedAtMs).toISOString().replace('.000Z', 'Z');
  return JSON.stringify({
    object: 'party',
    event: { external_id: partyKey(a.id), schema_version: SCHEMA_VERSION, occurred_at: at, sequence: 1, data: { type: 'person', status: 'active', created_at: at } },
  });
}

export function accountItem(a: BerkaAccount): string {
  const at = new Date(a.openedAtMs).toISOString().replace('.000Z', 'Z');
  return JSON.stringify({
    object: 'account',
    event: {
      external_id: accountKey(a.id),
      schema_version: SCHEMA_VERSION,
      occurred_at: at,
      sequence: 1,
      data: { type: 'checking', holder_party_id: partyKey(a.id), asset: 'USD', status: 'active', opened_at: at },
    },
  });
}

export function movementItem(p: BerkaPayment): string {
  const own = { account_id: accountKey(p.account) };
  const other = p.counterparty ? { counterparty: { institution: p.counterparty.bank, instrument_ref: p.counterparty.account } } : {};
  const type = p.counterparty ? 'p2p' : p.direction === 'in' ? 'cash_in' : 'cash_out';
  return JSON.stringify({
    object: 'movement',
    event: {
      external_id: `berka-M${p.id}`,
      schema_version: SCHEMA_VERSION,
      occurred_at: new Date(p.occurredAtMs).toISOString().replace('.000Z', 'Z'),
      data: {
        type,
        status: 'completed',
        amount: { value: p.cents, asset: 'USD', scale: 2 },
        debit: p.direction === 'out' ? own : other,
        credit: p.direction === 'in' ? own : other,
      },
    },
  });
}

// The instant of each account's last payment on each day it had one, from `fromMs` on, in time
// order: where the pipeline would judge it at least once a day.
export function dailyInstants(payments: readonly BerkaPayment[], fromMs: number): Map<string, Date[]> {
  const days = new Map<string, Map<number, number>>();
  for (const p of payments) {
    if (p.occurredAtMs < fromMs) continue;
    const key = accountKey(p.account);
    let byDay = days.get(key);
    if (!byDay) days.set(key, (byDay = new Map()));
    const day = Math.floor(p.occurredAtMs / DAY_MS);
    byDay.set(day, Math.max(byDay.get(day) ?? 0, p.occurredAtMs));
  }
  return new Map([...days].map(([account, byDay]) => [account, [...byDay.values()].sort((a, b) => a - b).map((ms) => new Date(ms))]));
}

// The first instant judged: FEATURE_DAYS after the first row of the file, so that every judged
// window holds as much of an account's history as the bank had given (1993-04-01, shifted).
export const firstJudgedMs = (): number => dayMs('930401');

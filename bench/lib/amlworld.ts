import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { SCHEMA_VERSION } from '../../schemas/envelope.ts';

// IBM AMLworld HI-Small as the service's events: the complete laundering-pattern file plus the
// labelled transaction sample. An account is a bank and an account number together: account
// `hi-A<bank>B<number>` held by party `hi-P<bank>B<number>` (the data has no owners, so each
// account is its own party). A transaction row is a movement whose external id is a hash of its
// fields, so a row present in both files is one movement. Bank ids lost their leading zeros in the
// sample (pandas), so bank ids are compared as integers; amounts too lost trailing zeros.

const CURRENCIES: Record<string, { asset: string; scale: number }> = {
  'US Dollar': { asset: 'USD', scale: 2 },
  Euro: { asset: 'EUR', scale: 2 },
  Yuan: { asset: 'CNY', scale: 2 },
  Yen: { asset: 'JPY', scale: 0 },
  'UK Pound': { asset: 'GBP', scale: 2 },
  Rupee: { asset: 'INR', scale: 2 },
  Ruble: { asset: 'RUB', scale: 2 },
  'Australian Dollar': { asset: 'AUD', scale: 2 },
  'Canadian Dollar': { asset: 'CAD', scale: 2 },
  'Swiss Franc': { asset: 'CHF', scale: 2 },
  'Mexican Peso': { asset: 'MXN', scale: 2 },
  'Brazil Real': { asset: 'BRL', scale: 2 },
  'Saudi Riyal': { asset: 'SAR', scale: 2 },
  Shekel: { asset: 'ILS', scale: 2 },
  Bitcoin: { asset: 'X-BTC', scale: 8 },
};

// USD per unit, approximate market rates of early September 2022 (the data's dates), rounded: for
// the currencies the data never converts (impliedUsdRates), whose rates it does not tell.
const APPROXIMATE_USD_RATES: Record<string, string> = {
  EUR: '1.00', CNY: '0.145', JPY: '0.0070', GBP: '1.16', INR: '0.0125', RUB: '0.0165', AUD: '0.68', CAD: '0.76',
  CHF: '1.03', MXN: '0.050', BRL: '0.19', SAR: '0.266', ILS: '0.29', 'X-BTC': '20000',
};

const FORMATS: Record<string, { type: string; cash?: boolean }> = {
  ACH: { type: 'ach' },
  Wire: { type: 'wire' },
  Cash: { type: 'cash_out', cash: true },
  Cheque: { type: 'other' },
  'Credit Card': { type: 'merchant_payment' },
  Reinvestment: { type: 'internal_transfer' },
  Bitcoin: { type: 'other' },
};

export interface WorldTransaction {
  id: string;
  at: string;
  from: string;
  to: string;
  amount: { value: string; asset: string; scale: number };
  format: string;
  laundering: boolean;
}

interface Attempt {
  id: number;
  typology: string;
  accounts: Set<string>;
  movements: Set<string>;
}

export interface World {
  accounts: string[];
  transactions: WorldTransaction[];
  attempts: Attempt[];
  // USD per unit of each asset, as decimal text, and whether the data itself told it.
  usdRates: Map<string, { rate: string; from: 'data' | 'approximation' }>;
}

// The rates the data was generated with. A row paid in one currency and received in another
// gives the generator's rate between the two (Amount Received / Amount Paid): each such pair
// agrees to five significant digits across rows. Pricing the data at market rates instead (the
// euro at par with the dollar, the ruble and the yen about a quarter off) made a chain of
// conversions look like money lost or gained along the way. A currency converted only to or from
// the euro is priced through it; one never converted keeps its approximate market rate.
function impliedUsdRates(conversions: ReadonlyArray<{ paid: string; received: string; ratio: number }>): World['usdRates'] {
  const ratios = new Map<string, number[]>();
  for (const c of conversions) {
    const key = `${c.paid}>${c.received}`;
    (ratios.get(key) ?? ratios.set(key, []).get(key)!).push(c.ratio);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  // Units of `to` per unit of `from`, from either direction of the pair.
  const per = (from: string, to: string): number | undefined => {
    const direct = ratios.get(`${from}>${to}`);
    if (direct) return median(direct);
    const inverse = ratios.get(`${to}>${from}`);
    return inverse ? 1 / median(inverse) : undefined;
  };
  const rates: World['usdRates'] = new Map();
  const eurUsd = per('EUR', 'USD');
  for (const [asset, approximate] of Object.entries(APPROXIMATE_USD_RATES)) {
    const viaEuro = eurUsd === undefined ? undefined : per(asset, 'EUR');
    const usd = per(asset, 'USD') ?? (viaEuro === undefined ? undefined : viaEuro * eurUsd!);
    rates.set(asset, usd === undefined ? { rate: approximate, from: 'approximation' } : { rate: plainDecimal(usd.toPrecision(6)), from: 'data' });
  }
  return rates;
}

// Bank and account number apart by a letter: joined by a dash, some of them read as a card
// number (13+ digits passing Luhn), which the service rightly refuses in any field.
const accountId = (bank: string, number: string): string => `hi-A${Number(bank)}B${number}`;
const partyOfAccount = (account: string): string => account.replace(/^hi-A/, 'hi-P');

// "2848.96" in a currency of scale 2 → "284896". The source gives some yen amounts in hundredths
// although the yen has no minor unit: digits beyond the scale are rounded half up (less than one
// yen; the evaluation compares amounts across currencies, it does no accounting).
function minorUnits(text: string, scale: number): string {
  const decimal = plainDecimal(text);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!match) throw new Error(`not an amount: ${text}`);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  const kept = BigInt(match[1]!) * 10n ** BigInt(scale) + BigInt(fraction.slice(0, scale).padEnd(scale, '0') || '0');
  return (fraction.length > scale && Number(fraction[scale]) >= 5 ? kept + 1n : kept).toString();
}

// The sample went through pandas, which writes small amounts in exponent form ("3.4e-05"): the
// same number as plain decimal digits ("0.000034"), exactly (no floating point).
function plainDecimal(text: string): string {
  const match = /^(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(text);
  if (!match) return text;
  const digits = `${match[1]}${match[2] ?? ''}`;
  const point = match[1]!.length + Number(match[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

// A row paid and received in different currencies: the generator's rate between them.
function conversionOf(cells: string[]): { paid: string; received: string; ratio: number } | undefined {
  const [, , , , , received, receivedCurrency, paid, paidCurrency] = cells;
  const [from, to] = [CURRENCIES[paidCurrency!]?.asset, CURRENCIES[receivedCurrency!]?.asset];
  if (!from || !to || from === to || Number(paid) <= 0) return undefined;
  return { paid: from, received: to, ratio: Number(received) / Number(paid) };
}

function transactionOf(cells: string[]): WorldTransaction {
  const [timestamp, fromBank, fromAccount, toBank, toAccount, , , paid, paidCurrency, format, label] = cells;
  const currency = CURRENCIES[paidCurrency!];
  if (!currency) throw new Error(`unknown currency ${paidCurrency}`);
  const at = `${timestamp!.replace(/\//g, '-').replace(' ', 'T')}:00Z`;
  const from = accountId(fromBank!, fromAccount!);
  const to = accountId(toBank!, toAccount!);
  const amount = { value: minorUnits(paid!, currency.scale), ...currency };
  // Hex in groups of six joined by a letter: a long run of digits could read as a card number.
  const hash = createHash('sha256').update([at, from, to, amount.value, amount.asset, format].join('|')).digest('hex').slice(0, 24);
  const id = `hi-M${hash.match(/.{6}/g)!.join('g')}`;
  return { id, at, from, to, amount, format: format!, laundering: label === '1' };
}

export async function loadWorld(dir: string): Promise<World> {
  const patterns = await readFile(join(dir, 'HI-Small_Patterns.txt'), 'utf8');
  const attempts: Attempt[] = [];
  const byId = new Map<string, WorldTransaction>();
  const conversions: Array<{ paid: string; received: string; ratio: number }> = [];
  const convert = (cells: string[]) => {
    const conversion = conversionOf(cells);
    if (conversion) conversions.push(conversion);
  };
  let current: Attempt | undefined;
  for (const line of patterns.split('\n')) {
    const begin = /^BEGIN LAUNDERING ATTEMPT - ([A-Z-]+)/.exec(line);
    if (begin) {
      current = { id: attempts.length, typology: begin[1]!, accounts: new Set(), movements: new Set() };
      attempts.push(current);
      continue;
    }
    if (line.startsWith('END LAUNDERING ATTEMPT') || line.trim() === '') {
      current = undefined;
      continue;
    }
    if (!current) throw new Error(`pattern row outside an attempt: ${line}`);
    convert(line.split(','));
    const t = transactionOf(line.split(','));
    current.accounts.add(t.from).add(t.to);
    current.movements.add(t.id);
    byId.set(t.id, t);
  }
  const sample = parse(await readFile(join(dir, 'HI-Small_Trans_sample.csv'), 'utf8'), { from_line: 2, skip_empty_lines: true }) as string[][];
  for (const cells of sample) {
    convert(cells);
    const t = transactionOf(cells);
    const known = byId.get(t.id);
    byId.set(t.id, known ? { ...known, laundering: known.laundering || t.laundering } : t);
  }
  const transactions = [...byId.values()].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1));
  const accounts = [...new Set(transactions.flatMap((t) => [t.from, t.to]))].sort();
  return { accounts, transactions, attempts, usdRates: impliedUsdRates(conversions) };
}

// ---- events, as batch items ----

const ENTITY_AT = '2022-06-01T00:00:00Z';

export function worldPartyItem(account: string): string {
  return JSON.stringify({
    object: 'party',
    event: { external_id: partyOfAccount(account), schema_version: SCHEMA_VERSION, occurred_at: ENTITY_AT, sequence: 1, data: { type: 'other', status: 'active', created_at: ENTITY_AT } },
  });
}

export function worldAccountItem(account: string): string {
  return JSON.stringify({
    object: 'account',
    event: {
      external_id: account,
      schema_version: SCHEMA_VERSION,
      occurred_at: ENTITY_AT,
      sequence: 1,
      data: { type: 'checking', holder_party_id: partyOfAccount(account), asset: 'USD', status: 'active', opened_at: '2020-01-01T00:00:00Z' },
    },
  });
}

export function worldMovementItem(t: WorldTransaction): string {
  const format = FORMATS[t.format] ?? { type: 'other' };
  return JSON.stringify({
    object: 'movement',
    event: {
      external_id: t.id,
      schema_version: SCHEMA_VERSION,
      occurred_at: t.at,
      data: {
        type: format.type,
        status: 'completed',
        amount: t.amount,
        debit: { account_id: t.from },
        credit: { account_id: t.to },
        ...(format.cash ? { cash: true } : {}),
      },
    },
  });
}

// The FX rate file (CSV) that prices every currency of the data in USD from before its first day.
export function usdRateFile(world: World): string {
  const lines = ['base,quote,rate,rate_scale,valid_from'];
  for (const [asset, { rate }] of world.usdRates) {
    const scale = rate.includes('.') ? rate.split('.')[1]!.length : 0;
    lines.push(`${asset},USD,${rate},${scale},2022-01-01T00:00:00Z`);
  }
  return `${lines.join('\n')}\n`;
}

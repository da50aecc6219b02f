import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SCHEMA_VERSION } from '../../schemas/envelope.ts';

// An IBM AMLSim data set (nodes.csv, transactions.csv) as the service's events: every node a
// party `amlsim-P<N>` holding one account `amlsim-A<N>`, every transaction row i a p2p movement
// `amlsim-M<i>` from the source's account to the target's. Deterministic: the same files give the
// same events, in the same order, on every run.

const PARTY_PREFIX = 'amlsim-P';
const ACCOUNT_PREFIX = 'amlsim-A';
export const MOVEMENT_PREFIX = 'amlsim-M';

export const partyKey = (node: number): string => `${PARTY_PREFIX}${node}`;
export const accountKey = (node: number): string => `${ACCOUNT_PREFIX}${node}`;

// Step 1 of the simulation is this day; one step is one day.
const FIRST_DAY_MS = Date.parse('2026-01-01T00:00:00Z');
const DAY_MS = 86_400_000;
// Every party and account existed before the first movement.
const ENTITY_OCCURRED_AT = '2025-06-01T00:00:00Z';
const PARTY_CREATED_AT = '2025-03-01T00:00:00Z';
const ACCOUNT_OPENED_AT = '2025-03-01T00:00:00Z';

export interface Transaction {
  // The row's index in transactions.csv (0 = the first row after the header).
  index: number;
  source: number;
  target: number;
  // Integer cents, as a decimal string.
  cents: string;
  step: number;
  // Event time: the step's day plus `index` seconds (mod one day), in milliseconds.
  occurredAtMs: number;
}

export interface Dataset {
  nodes: number[];
  // In time order (occurred_at, then row index).
  transactions: Transaction[];
}

// Rows of a simple CSV (no quoting), CRLF or LF, without the header, which must be `header`.
function rows(text: string, file: string, header: string[]): string[][] {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  const found = lines[0]?.split(',').map((cell) => cell.trim());
  if (!found || found.join(',') !== header.join(',')) throw new Error(`${file}: expected the header ${header.join(',')}, found ${found?.join(',') ?? 'nothing'}`);
  return lines.slice(1).map((line) => line.split(',').map((cell) => cell.trim()));
}

function integer(cell: string | undefined, file: string, row: number, column: string): number {
  if (cell === undefined || !/^-?\d+$/.test(cell)) throw new Error(`${file} row ${row + 1}: ${column} is not an integer: ${cell}`);
  return Number(cell);
}

// "103.55" → "10355", "375.7" → "37570", "12" → "1200": string and BigInt arithmetic only, never a
// float. More than two decimal places, a sign or anything else is refused.
function centsOf(decimal: string): string {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(decimal);
  if (!match) throw new Error(`not an amount with at most 2 decimal places: ${decimal}`);
  return (BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'))).toString();
}

// Reads the data set; `movements` keeps only the first that many transaction rows (a prefix of
// the file, which the simulation writes in time order).
export async function loadDataset(dir: string, movements = Number.POSITIVE_INFINITY): Promise<Dataset> {
  const nodesFile = join(dir, 'nodes.csv');
  const transactionsFile = join(dir, 'transactions.csv');
  const nodeRows = rows(await readFile(nodesFile, 'utf8'), nodesFile, ['nodeid', 'isFraud', 'init_balance', 'fraudStep']);
  const nodes = nodeRows.map((row, i) => integer(row[0], nodesFile, i, 'nodeid'));
  const known = new Set(nodes);
  if (known.size !== nodes.length) throw new Error(`${nodesFile}: duplicate node ids`);

  const transactionRows = rows(await readFile(transactionsFile, 'utf8'), transactionsFile, ['sourceNodeId', 'targetNodeId', 'value', 'time']);
  const transactions = transactionRows.slice(0, movements).map((row, index): Transaction => {
    const source = integer(row[0], transactionsFile, index, 'sourceNodeId');
    const target = integer(row[1], transactionsFile, index, 'targetNodeId');
    const step = integer(row[3], transactionsFile, index, 'time');
    if (!known.has(source) || !known.has(target)) throw new Error(`${transactionsFile} row ${index + 1}: unknown node ${known.has(source) ? target : source}`);
    if (step < 1) throw new Error(`${transactionsFile} row ${index + 1}: time ${step} < 1`);
    let cents: string;
    try {
      cents = centsOf(row[2] ?? '');
    } catch (error) {
      throw new Error(`${transactionsFile} row ${index + 1}: ${(error as Error).message}`);
    }
    return { index, source, target, cents, step, occurredAtMs: FIRST_DAY_MS + (step - 1) * DAY_MS + (index % 86_400) * 1000 };
  });
  transactions.sort((a, b) => a.occurredAtMs - b.occurredAtMs || a.index - b.index);
  return { nodes, transactions };
}

// ---- events, as batch items (JSON text) ----

export function partyItem(node: number): string {
  return JSON.stringify({
    object: 'party',
    event: {
      external_id: partyKey(node),
      schema_version: SCHEMA_VERSION,
      occurred_at: ENTITY_OCCURRED_AT,
      sequence: 1,
      // No identifiers: one shared by every party would make a hub of 20,000 edges.
      data: { type: 'person', status: 'active', created_at: PARTY_CREATED_AT },
    },
  });
}

export function accountItem(node: number): string {
  return JSON.stringify({
    object: 'account',
    event: {
      external_id: accountKey(node),
      schema_version: SCHEMA_VERSION,
      occurred_at: ENTITY_OCCURRED_AT,
      sequence: 1,
      data: { type: 'checking', holder_party_id: partyKey(node), asset: 'USD', status: 'active', opened_at: ACCOUNT_OPENED_AT },
    },
  });
}

export function movementItem(t: Transaction): string {
  return JSON.stringify({
    object: 'movement',
    event: {
      external_id: `${MOVEMENT_PREFIX}${t.index}`,
      schema_version: SCHEMA_VERSION,
      occurred_at: new Date(t.occurredAtMs).toISOString().replace('.000Z', 'Z'),
      data: {
        type: 'p2p',
        status: 'completed',
        amount: { value: t.cents, asset: 'USD', scale: 2 },
        debit: { account_id: accountKey(t.source) },
        credit: { account_id: accountKey(t.target) },
      },
    },
  });
}

export function batchBody(items: string[]): Buffer {
  return Buffer.from(`{"events":[${items.join(',')}]}`, 'utf8');
}

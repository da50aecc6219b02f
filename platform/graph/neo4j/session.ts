// The one way the Neo4j GraphStore talks to the driver: run(statement, params) with a Statement
// of cypher.ts (never a string), exactly the parameters its text uses, and values converted to
// what Neo4j stores without loss: integers (JS numbers, bigints, times as epoch milliseconds) as
// 64-bit Integers, never as floats.

import neo4j, { type Driver, type ManagedTransaction, type Session } from 'neo4j-driver';
import { isDefinedStatement, type Statement } from './cypher.ts';

export type Row = Record<string, unknown>;

// What run() needs of a transaction (managed or explicit): tests give a recording fake.
export interface QueryRunner {
  run: ManagedTransaction['run'];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// A parameter value as Neo4j will hold it. Throws rather than send a float or a value the driver
// would silently mangle (a Date packs as an empty map; a number as a float).
export function toCypher(value: unknown, path = 'value'): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isSafeInteger(value)) throw new TypeError(`${path}: ${value} is not an integer (Neo4j parameters here are integers, never floats)`);
      return BigInt(value);
    case 'bigint':
      if (value < INT64_MIN || value > INT64_MAX) throw new RangeError(`${path}: ${value} does not fit a 64-bit Neo4j integer`);
      return value;
    case 'object': {
      if (value instanceof Date) {
        const ms = value.getTime();
        if (Number.isNaN(ms)) throw new TypeError(`${path}: invalid date`);
        return BigInt(ms);
      }
      if (Array.isArray(value)) return value.map((v, i) => toCypher(v, `${path}[${i}]`));
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path}: not a plain object`);
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCypher(v, `${path}.${k}`)]));
    }
    default:
      throw new TypeError(`${path}: cannot be a Cypher parameter (${typeof value})`);
  }
}

// Runs one statement of cypher.ts with exactly the parameters its text uses.
export async function run(runner: QueryRunner, statement: Statement, params: Record<string, unknown> = {}): Promise<Row[]> {
  if (!isDefinedStatement(statement)) throw new Error('run() takes only the statements of platform/graph/neo4j/cypher.ts');
  const given = Object.keys(params);
  const missing = statement.params.filter((p) => !given.includes(p));
  const extra = given.filter((p) => !statement.params.includes(p));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`${statement.name}: parameters ${missing.length ? `missing ${missing.join(', ')}` : ''}${extra.length ? ` unused ${extra.join(', ')}` : ''}`);
  }
  const result = await runner.run(statement.text, toCypher(params, statement.name));
  return result.records.map((record) => record.toObject());
}

// ---- reading values back ----

// An integer as the driver returns it (bigint with useBigInt, else an Integer, or a number).
export function bigintOf(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    // With useBigInt every Neo4j integer arrives as a bigint: a number here is a FLOAT. Cypher's
    // sum() of integers becomes one past 2^63 − 1 instead of failing (seen on 5.26), so an amount
    // beyond 2^53 as a number has been rounded: refused, never returned as if exact.
    if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not an exact integer (a sum beyond a 64-bit integer?)`);
    return BigInt(value);
  }
  if (neo4j.isInt(value)) return (value as { toBigInt(): bigint }).toBigInt();
  throw new TypeError(`not an integer: ${String(value)}`);
}

export function bigintOrNull(value: unknown): bigint | null {
  return value === null || value === undefined ? null : bigintOf(value);
}

export function numberOf(value: unknown): number {
  const n = bigintOf(value);
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError(`${n} is beyond a safe JS number`);
  return Number(n);
}

// Times are stored as epoch milliseconds.
export function dateOf(value: unknown): Date {
  return new Date(numberOf(value));
}

export function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : dateOf(value);
}

export function jsonOrNull(value: unknown): Record<string, unknown> | null {
  return typeof value === 'string' ? (JSON.parse(value) as Record<string, unknown>) : null;
}

// ---- the read budget ----

// The time one graph read may take in all. Its statements run in one read transaction whose
// server-side timeout is the budget; once the time is spent (before a statement, or the server
// ends the transaction) the read stops where it is and says so (`exhausted`), so a query over a
// dense graph answers partially instead of running away. As the PostgreSQL adapter's ReadBudget.
export class ReadBudget {
  exhausted = false;

  constructor(
    private readonly runner: QueryRunner,
    private readonly deadline: number,
  ) {}

  // The rows, or undefined when the budget ran out before or during the statement.
  async run(statement: Statement, params: Record<string, unknown>): Promise<Row[] | undefined> {
    if (this.exhausted) return undefined;
    if (this.deadline - performance.now() <= 0) {
      this.exhausted = true;
      return undefined;
    }
    try {
      return await run(this.runner, statement, params);
    } catch (error) {
      if (!isTimeout(error)) throw error;
      this.exhausted = true;
      return undefined;
    }
  }
}

// Neo4j's codes for a transaction ended by its timeout (the client's, or the server's default).
export function isTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('Neo.ClientError.Transaction.TransactionTimedOut');
}

export async function withReadBudget<T>(driver: Driver, database: string, budgetMs: number, work: (budget: ReadBudget) => Promise<T>): Promise<T> {
  const deadline = performance.now() + budgetMs;
  const session: Session = driver.session({ database, defaultAccessMode: neo4j.session.READ });
  try {
    const tx = await session.beginTransaction({ timeout: Math.max(1, Math.ceil(budgetMs)) });
    try {
      return await work(new ReadBudget(tx, deadline));
    } finally {
      await tx.rollback().catch(() => undefined);
    }
  } finally {
    await session.close();
  }
}

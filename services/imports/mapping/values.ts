import { checkJsonBounds } from '../../../schemas/primitives/json-bounds.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import { JOINED_SOURCE_SEPARATOR, ROW_NUMBER_SOURCE, type FieldRule } from '../../../schemas/imports/mapping.ts';
import { parseDatetime } from './datetime.ts';

// One value of an import row, from its source to its typed form: reading the source (a CSV
// column or a dotted JSONL path), the string treatments (trim, case, map) and the conversion by
// type. Money (money.ts) and datetime (datetime.ts) have their own files; assemble.ts puts the
// steps together per target and builds the event.
//
// Reasons returned on failure name what was wrong, never the value itself: the value can be
// personal data or a card number and the reason ends up in the reject report.

// A row as a dialect reader hands it over. CSV: every value is text. JSONL: the parsed line.
// rowNo: the row's global number, the value of the pseudo-column @row_no.
export type SourceRow = ({ kind: 'csv'; get(column: string): string | undefined } | { kind: 'jsonl'; value: unknown }) & { rowNo?: number };

export type Failure = { ok: false; code: ErrorCode; reason: string };
export type Result<T> = { ok: true; value: T } | Failure;

// What one target ends as: a value to set, nothing to set, or the reason the row is rejected.
export type FieldOutcome = { kind: 'value'; value: unknown } | { kind: 'unset' } | { kind: 'error'; code: ErrorCode; reason: string };

export const SCHEMA: ErrorCode = 'svc:validation/schema';

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail(code: ErrorCode, reason: string): Failure {
  return { ok: false, code, reason };
}

const INDEX = /^\d+$/;

// A dotted path into a parsed JSON value: numeric segments index arrays, other segments name
// own members of objects (never inherited ones: `constructor` finds nothing). A key that itself
// contains a dot cannot be reached. undefined when any step is missing.
export function lookupJsonPath(value: unknown, path: string): unknown {
  let node = value;
  for (const segment of path.split('.')) {
    if (Array.isArray(node)) {
      if (!INDEX.test(segment)) return undefined;
      node = node[Number(segment)];
    } else if (typeof node === 'object' && node !== null) {
      if (!Object.hasOwn(node, segment)) return undefined;
      node = (node as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return node;
}

// The source value behind `from`, or undefined when it is absent: missing, JSON null, or text
// listed in the format's null_values. CSV gives text; JSONL gives the JSON value as parsed.
export function readSource(row: SourceRow, from: string | readonly string[], nullValues: ReadonlySet<string>): unknown {
  if (typeof from !== 'string') {
    // Several sources: their texts joined; any one absent leaves the whole absent.
    const parts: string[] = [];
    for (const part of from) {
      const value = readSource(row, part, nullValues);
      if (value === undefined) return undefined;
      // Its text would be another number's: the part itself goes on, for sourceValue to refuse.
      if (isInexact(value)) return value;
      parts.push(typeof value === 'string' ? value : JSON.stringify(value));
    }
    return parts.join(JOINED_SOURCE_SEPARATOR);
  }
  if (from === ROW_NUMBER_SOURCE) return row.rowNo === undefined ? undefined : String(row.rowNo);
  const value = row.kind === 'csv' ? row.get(from) : lookupJsonPath(row.value, from);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && nullValues.has(value)) return undefined;
  return value;
}

// The source value as text for row_filter: no treatments; JSONL numbers and booleans as their
// JSON text, objects and arrays as JSON. undefined when absent (as readSource).
export function readSourceText(row: SourceRow, from: string, nullValues: ReadonlySet<string>): string | undefined {
  const value = readSource(row, from, nullValues);
  if (value === undefined || typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export type Treatments = Pick<FieldRule, 'trim' | 'case'> & {
  map?: Readonly<Record<string, unknown>> | undefined;
  map_default?: unknown;
};

// The key a value is looked up under in `map`: text as is, numbers and booleans as their text.
// Objects and arrays have no key (they are unmapped).
function mapKey(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

// trim, then case (both on text only), then map (exact value after trim and case; an unmapped
// value takes map_default, or fails). A value mapped to null comes back as undefined (absent).
// `value` is a present source value.
export function applyTreatments(value: unknown, t: Treatments): Result<unknown> {
  let v = value;
  if (typeof value === 'string') {
    let text = t.trim ? value.trim() : value;
    if (t.case === 'upper') text = text.toUpperCase();
    else if (t.case === 'lower') text = text.toLowerCase();
    v = text;
  }
  if (t.map !== undefined) {
    const key = mapKey(v);
    if (key !== undefined && Object.hasOwn(t.map, key)) {
      v = t.map[key];
    } else if (v !== '') {
      // Empty text that is not a key of the map stays "no value" (default and optional decide):
      // it neither takes map_default nor rejects the row.
      if (t.map_default === undefined) return fail(SCHEMA, 'value is not in map and there is no map_default');
      v = t.map_default;
    }
  }
  return ok(v === null ? undefined : v);
}

export type SourceSpec = Treatments & { from?: string | readonly string[] | undefined; const?: unknown };

// Source and treatments of a rule (or of a money part). undefined is "no value": the source is
// absent, the constant is null, the value was mapped to null, or it is empty text after the
// treatments (an empty CSV cell is the usual way to say "nothing here").
export function sourceValue(spec: SourceSpec, row: SourceRow, nullValues: ReadonlySet<string>): Result<unknown> {
  const raw = spec.from !== undefined ? readSource(row, spec.from, nullValues) : spec.const;
  if (raw === undefined || raw === null) return ok(undefined);
  if (isInexact(raw)) return fail(SCHEMA, 'a JSON number beyond ±9007199254740991 was not read exactly; write it as a string');
  const treated = applyTreatments(raw, spec);
  if (!treated.ok) return treated;
  return ok(treated.value === '' ? undefined : treated.value);
}

// A JSONL number too large for JSON.parse to keep: the double it became is another integer
// (…993 reads as …992), so as text, an id or a map key it would stand for a different value and
// two rows could merge into one.
function isInexact(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value);
}

const INTEGER = /^[+-]?\d+$/;
// A plain decimal number: digits with an optional point and exponent. No hex, no binary, no
// underscores, no Infinity or NaN, no surrounding spaces.
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export const DEFAULT_TRUE_VALUES = ['true', 't', 'yes', 'y', '1'] as const;
export const DEFAULT_FALSE_VALUES = ['false', 'f', 'no', 'n', '0'] as const;

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function noNegativeZero(n: number): number {
  return n === 0 ? 0 : n;
}

export function toInteger(value: unknown): Result<number> {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) ? ok(noNegativeZero(value)) : fail(SCHEMA, 'not an integer in the safe range');
  }
  if (typeof value !== 'string') return fail(SCHEMA, `expected an integer, got ${kindOf(value)}`);
  if (!INTEGER.test(value)) return fail(SCHEMA, 'not an integer');
  const n = Number(value);
  return Number.isSafeInteger(n) ? ok(noNegativeZero(n)) : fail(SCHEMA, 'integer outside the safe range (±9007199254740991)');
}

export function toNumber(value: unknown): Result<number> {
  if (typeof value === 'number') return Number.isFinite(value) ? ok(value) : fail(SCHEMA, 'not a finite number');
  if (typeof value !== 'string') return fail(SCHEMA, `expected a number, got ${kindOf(value)}`);
  if (!NUMBER.test(value)) return fail(SCHEMA, 'not a decimal number');
  const n = Number(value);
  return Number.isFinite(n) ? ok(n) : fail(SCHEMA, 'number out of range');
}

export function toBoolean(value: unknown, rule: Pick<FieldRule, 'true_values' | 'false_values'>): Result<boolean> {
  if (typeof value === 'boolean') return ok(value);
  if (typeof value !== 'string' && typeof value !== 'number') return fail(SCHEMA, `expected a boolean, got ${kindOf(value)}`);
  const text = String(value).toLowerCase();
  const matches = (list: readonly string[]) => list.some((candidate) => candidate.toLowerCase() === text);
  if (matches(rule.true_values ?? DEFAULT_TRUE_VALUES)) return ok(true);
  if (matches(rule.false_values ?? DEFAULT_FALSE_VALUES)) return ok(false);
  return fail(SCHEMA, 'not one of the true_values or false_values');
}

export function toText(value: unknown): Result<string> {
  if (typeof value === 'string') return ok(value);
  if (typeof value === 'number' || typeof value === 'boolean') return ok(String(value));
  return fail(SCHEMA, `expected text, got ${kindOf(value)}`);
}

// Text is parsed as JSON; anything else (a JSONL value, a constant) is taken as it is.
export function toJson(value: unknown): Result<unknown> {
  if (typeof value !== 'string') return ok(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value) as unknown;
  } catch {
    return fail(SCHEMA, 'not valid JSON');
  }
  const past = checkJsonBounds(parsed);
  return past ? fail(SCHEMA, `${past.path ? `${past.path}: ` : ''}${past.message}`) : ok(parsed);
}

export type ScalarType = 'string' | 'integer' | 'number' | 'boolean' | 'datetime' | 'json';

// The typed value of a present value (money is not a scalar: see money.ts).
export function convertValue(
  value: unknown,
  type: ScalarType,
  rule: Pick<FieldRule, 'true_values' | 'false_values' | 'format' | 'pattern' | 'tz'>,
): Result<unknown> {
  switch (type) {
    case 'string':
      return toText(value);
    case 'integer':
      return toInteger(value);
    case 'number':
      return toNumber(value);
    case 'boolean':
      return toBoolean(value, rule);
    case 'json':
      return toJson(value);
    case 'datetime':
      return parseDatetime(value, rule);
  }
}

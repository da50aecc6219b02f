import { SCHEMA_VERSION } from '../../../schemas/envelope.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import type { FieldRule, FieldType, RowFilter } from '../../../schemas/imports/mapping.ts';
import { evaluateMoney } from './money.ts';
import { SCHEMA, convertValue, readSourceText, sourceValue, type FieldOutcome, type SourceRow } from './values.ts';

export type { SourceRow } from './values.ts';

// One source row to one event of the mapping's family, or a skip, or a rejection.
//
// Per target: the source (from, or const), trim, case, map/map_default (values.ts); no value
// (absent, null, or empty text after the treatments) takes `default` (null: leave unset), else
// `optional` leaves it unset, else the row is rejected; then the conversion by type (values.ts,
// datetime.ts, money.ts). The external_id target runs first so that a rejection can carry it;
// the others run in the order given and the first failure rejects the row. Messages name the
// target and the reason, never the source value (it may be personal data or a card number).
//
// The event is only assembled here: the caller runs the normal item validation on it.

export interface AssemblyTarget {
  target: string; // as written in the mapping: 'data.amount'
  path: readonly string[]; // its segments: ['data', 'amount']
  rule: FieldRule;
  type: FieldType;
}

export interface AssemblyInput {
  targets: readonly AssemblyTarget[];
  // Objects the event must hold, made empty when no target under them has a value (data.debit).
  requiredObjects?: readonly (readonly string[])[];
  rowFilter?: RowFilter | undefined;
}

export interface AssemblyContext {
  nullValues: ReadonlySet<string>;
  scaleOf: (asset: string) => number | undefined;
}

export type RowOutcome =
  | { kind: 'event'; event: Record<string, unknown>; externalId?: string }
  | { kind: 'skipped' }
  | { kind: 'rejected'; code: ErrorCode; message: string; path: string; externalId?: string };

// row_filter on the raw source value (no treatments; JSONL numbers and booleans as their text).
// An absent value (missing, null, or in null_values) never matches in/eq and always matches
// not_in/ne. eq and ne compare with every listed value, like in and not_in (the same thing when
// there is one value).
export function rowMatchesFilter(filter: RowFilter, row: SourceRow, nullValues: ReadonlySet<string>): boolean {
  const text = readSourceText(row, filter.from, nullValues);
  const listed = text !== undefined && filter.values.includes(text);
  return filter.op === 'in' || filter.op === 'eq' ? listed : !listed;
}

// The value of one target for a row.
export function evaluateTarget(target: AssemblyTarget, row: SourceRow, ctx: AssemblyContext): FieldOutcome {
  const { rule, type } = target;
  if (type === 'money') return evaluateMoney(rule, row, ctx);
  const source = sourceValue(rule, row, ctx.nullValues);
  if (!source.ok) return { kind: 'error', code: source.code, reason: source.reason };
  let value = source.value;
  if (value === undefined) {
    // The default is a literal of the mapping: not treated, but converted like a source value.
    if (rule.default === null) return { kind: 'unset' };
    if (rule.default !== undefined) value = rule.default;
    else if (rule.optional) return { kind: 'unset' };
    else return { kind: 'error', code: SCHEMA, reason: 'no value' };
  }
  const converted = convertValue(value, type, rule);
  // The spec files only occurred_at under timestamp_out_of_range; any other date-time that cannot
  // be read is a value the mapping could not produce (schema), as live ingest answers it.
  if (!converted.ok) {
    const code = converted.code === 'svc:validation/timestamp_out_of_range' && target.target !== 'occurred_at' ? SCHEMA : converted.code;
    return { kind: 'error', code, reason: converted.reason };
  }
  return { kind: 'value', value: converted.value };
}

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);
const INDEX = /^\d+$/;
// Array indexes in target paths (data.identifiers.0.value) stay small: a mapping lists items.
const MAX_TARGET_INDEX = 999;

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

// Sets `value` at `path` under root, creating objects (or arrays, when the next segment is a
// number) on the way. Returns the reason when it cannot.
function setPath(root: Record<string, unknown>, path: readonly string[], value: unknown, created: Set<unknown[]>): string | undefined {
  if (path.length === 0) return 'empty target path';
  for (const segment of path) {
    if (FORBIDDEN_SEGMENTS.has(segment)) return `target path segment ${segment} is not allowed`;
    if (INDEX.test(segment) && Number(segment) > MAX_TARGET_INDEX) return `array index above ${MAX_TARGET_INDEX} in the target path`;
  }
  let node: Record<string, unknown> | unknown[] = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    if (Array.isArray(node) && !INDEX.test(segment)) return 'the target path names a member of an array';
    const slots = node as Record<string, unknown>;
    if (i === path.length - 1) {
      slots[segment] = value;
      return undefined;
    }
    const child = Object.hasOwn(slots, segment) ? slots[segment] : undefined;
    if (child === undefined) {
      const fresh: Record<string, unknown> | unknown[] = INDEX.test(path[i + 1]!) ? [] : {};
      if (Array.isArray(fresh)) created.add(fresh);
      slots[segment] = fresh;
      node = fresh;
    } else if (isContainer(child)) {
      node = child;
    } else {
      return 'the target path runs through a value another target set';
    }
  }
  return undefined;
}

function hasPath(root: Record<string, unknown>, path: readonly string[]): boolean {
  let node: unknown = root;
  for (const segment of path) {
    if (!isContainer(node) || !Object.hasOwn(node, segment)) return false;
    node = (node as Record<string, unknown>)[segment];
  }
  return true;
}

// Arrays made for indexed targets lose the holes left by items whose targets were all unset
// (data.identifiers.0.* absent, .1.* present gives one item, not a hole).
function compact(arrays: Set<unknown[]>): void {
  for (const array of arrays) {
    const dense = array.filter(() => true);
    array.length = 0;
    array.push(...dense);
  }
}

const ENVELOPE_ORDER = ['external_id', 'schema_version', 'occurred_at', 'recorded_at', 'sequence', 'data'];

// The envelope members in their usual order, then anything else a target set (validation refuses
// it as an unknown member). schema_version is SCHEMA_VERSION unless a target set it (kept as
// given); data is always there.
function envelope(root: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(root, 'schema_version')) root.schema_version = SCHEMA_VERSION;
  if (!Object.hasOwn(root, 'data')) root.data = {};
  const event: Record<string, unknown> = {};
  for (const key of ENVELOPE_ORDER) if (Object.hasOwn(root, key)) event[key] = root[key];
  for (const [key, value] of Object.entries(root)) if (!ENVELOPE_ORDER.includes(key)) event[key] = value;
  return event;
}

// The row's external id as the mapping reads it, when it can be read: for the reject of a row
// refused before it is assembled (more fields than the header).
export function externalIdOf(input: AssemblyInput, row: SourceRow, ctx: AssemblyContext): string | undefined {
  for (const target of input.targets) {
    if (target.target !== 'external_id') continue;
    const outcome = evaluateTarget(target, row, ctx);
    if (outcome.kind === 'value' && typeof outcome.value === 'string') return outcome.value;
  }
  return undefined;
}

export function assembleRow(input: AssemblyInput, row: SourceRow, ctx: AssemblyContext): RowOutcome {
  if (input.rowFilter && !rowMatchesFilter(input.rowFilter, row, ctx.nullValues)) return { kind: 'skipped' };
  const ordered = [
    ...input.targets.filter((t) => t.target === 'external_id'),
    ...input.targets.filter((t) => t.target !== 'external_id'),
  ];
  const root: Record<string, unknown> = {};
  const created = new Set<unknown[]>();
  let externalId: string | undefined;
  const reject = (code: ErrorCode, target: string, reason: string): RowOutcome => ({
    kind: 'rejected',
    code,
    message: reason === 'no value' ? `no value for ${target}` : `${target}: ${reason}`,
    path: target,
    ...(externalId !== undefined ? { externalId } : {}),
  });
  for (const target of ordered) {
    const outcome = evaluateTarget(target, row, ctx);
    if (outcome.kind === 'error') return reject(outcome.code, target.target, outcome.reason);
    if (outcome.kind === 'unset') continue;
    // A copy, so that a constant object or array is never shared between events.
    const value = isContainer(outcome.value) ? structuredClone(outcome.value) : outcome.value;
    const problem = setPath(root, target.path, value, created);
    if (problem !== undefined) return reject(SCHEMA, target.target, problem);
    if (target.target === 'external_id' && typeof value === 'string') externalId = value;
  }
  for (const path of input.requiredObjects ?? []) {
    if (!hasPath(root, path)) setPath(root, path, {}, created);
  }
  compact(created);
  const event = envelope(root);
  return externalId !== undefined ? { kind: 'event', event, externalId } : { kind: 'event', event };
}

// Helpers for the schema unit tests: build an ingest item from a valid fixture with one mutation,
// run the live validation on it, and assert the exact outcome (code and path). Pure; no database.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isoRegistry } from '../assets/registry.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { FAMILIES, type Family } from '../families/index.ts';
import { VALID_EVENTS } from '../../test/fixtures/events.ts';
import { validateItem, type ItemValidation, type ValidationContext } from './validate-item.ts';

const NOW_MS = Date.parse('2026-09-01T12:00:00Z');
const FUTURE_SKEW_MS = 300_000;
export const CTX: ValidationContext = { registry: isoRegistry, nowMs: NOW_MS, futureSkewMs: FUTURE_SKEW_MS };

export const SCHEMA: ErrorCode = 'svc:validation/schema';
export const UNSUPPORTED_VERSION: ErrorCode = 'svc:validation/unsupported_schema_version';
export const PAN: ErrorCode = 'svc:validation/pan_detected';
export const SCALE: ErrorCode = 'svc:validation/money_scale_mismatch';
export const OUT_OF_RANGE: ErrorCode = 'svc:validation/timestamp_out_of_range';

// An event as JSON, to change in place; arrays are walked by their numeric keys like objects.
type JsonObject = Record<string, unknown>;
type EventJson = JsonObject & { data: JsonObject };

// A mutation changes a fresh copy of a fixture event in place.
export type Mutation = (event: EventJson) => void;

// A marker value: setting a member to REMOVE deletes it.
export const REMOVE = Symbol('remove');

// Sets (or with REMOVE deletes) the member at a dotted path, creating missing parents (an array
// when the next key is numeric).
function setPath(root: JsonObject, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let current = root;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i]!;
    if (current[key] === undefined || current[key] === null || typeof current[key] !== 'object') {
      current[key] = /^\d+$/.test(keys[i + 1]!) ? [] : {};
    }
    current = current[key] as JsonObject;
  }
  const last = keys[keys.length - 1]!;
  if (value === REMOVE) delete current[last];
  else current[last] = value;
}

// Mutations of the envelope (paths relative to the event) and of its data.
export const onEvent = (path: string, value: unknown): Mutation => (event) => setPath(event, path, value);
export const onData = (path: string, value: unknown): Mutation => (event) => setPath(event.data, path, value);

// A fresh valid event of the family, with the mutations applied.
export function eventOf(family: Family, ...mutations: Mutation[]): EventJson {
  const event: EventJson = VALID_EVENTS[family]();
  for (const mutate of mutations) mutate(event);
  return event;
}

export function itemOf(family: Family, ...mutations: Mutation[]): { object: Family; event: EventJson } {
  return { object: family, event: eventOf(family, ...mutations) };
}

export function check(family: Family, ...mutations: Mutation[]): ItemValidation {
  return validateItem(itemOf(family, ...mutations), CTX);
}

export function checkWith(ctx: Partial<ValidationContext>, family: Family, ...mutations: Mutation[]): ItemValidation {
  return validateItem(itemOf(family, ...mutations), { ...CTX, ...ctx });
}

// The result is acceptance; on failure the errors are shown.
export function expectAccepted(result: ItemValidation): void {
  expect(result.ok ? [] : result.errors).toEqual([]);
  expect(result.ok).toBe(true);
}

// The result is a refusal with exactly one finding, of this code at this path.
export function expectRefused(result: ItemValidation, code: ErrorCode, path: string): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.errors).toEqual([{ path, code, message: expect.any(String) }]);
  expect(result.code).toBe(code);
}

export const chars = (n: number, c = 'x') => c.repeat(n);
export const items = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

// A short, readable label of a test value for test names.
export function label(value: unknown): string {
  if (value === REMOVE) return '(absent)';
  if (typeof value === 'string' && value.length > 24) return `"${value.slice(0, 6)}…" (${value.length} chars)`;
  if (Array.isArray(value)) return value.length > 2 ? `[${value.length} items]` : JSON.stringify(value);
  if (typeof value === 'symbol') return String(value);
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json.length > 40 ? `${json.slice(0, 37)}...` : json;
}

export interface FieldRule {
  // Whether the member must be present (tests both presence and absence).
  required?: boolean;
  // Values that must be accepted at the field.
  accept?: unknown[];
  // Values that must be refused at the field with `code` (default svc:validation/schema) at `path`
  // (default event.data.<field>).
  refuse?: unknown[];
  code?: ErrorCode;
  path?: string;
  // For an enum: the exact member list of the spec; the schema must allow these and no others.
  exactly?: readonly string[];
}

// The schema of a member of a family's data at a dotted path (numeric keys step into arrays).
function schemaAt(family: Family, dotted: string): z.core.$ZodType {
  const unwrap = (schema: z.core.$ZodType): z.core.$ZodType => (schema instanceof z.ZodOptional ? unwrap(schema.unwrap()) : schema);
  let current: z.core.$ZodType | undefined = FAMILIES[family].data;
  for (const key of dotted.split('.')) {
    const schema = unwrap(current);
    current = schema instanceof z.ZodArray && /^\d+$/.test(key) ? schema.element : schema instanceof z.ZodObject ? schema.shape[key] : undefined;
    if (current === undefined) throw new Error(`no member ${dotted} in ${family}`);
  }
  return unwrap(current);
}

// One describe block per field of a family's data: every accepted value accepted, every refused
// value refused with the exact code and path, and the required-ness of the member.
export function describeField(family: Family, field: string, rule: FieldRule): void {
  const path = rule.path ?? `event.data.${field}`;
  describe(`${family} data.${field}`, () => {
    if (rule.required !== undefined) {
      if (rule.required) {
        it('is required', () => {
          const result = check(family, onData(field, REMOVE));
          expectRefused(result, SCHEMA, `event.data.${field}`);
          if (!result.ok) expect(result.errors[0]!.message).toBe('required member is missing');
        });
      } else {
        it('is optional', () => expectAccepted(check(family, onData(field, REMOVE))));
      }
    }
    if (rule.exactly) {
      it('allows exactly the listed members', () => {
        const schema = schemaAt(family, field);
        expect(schema).toBeInstanceOf(z.ZodEnum);
        expect([...(schema as z.ZodEnum).options].sort()).toEqual([...rule.exactly!].sort());
      });
    }
    for (const value of rule.accept ?? []) {
      it(`accepts ${label(value)}`, () => expectAccepted(check(family, onData(field, value))));
    }
    for (const value of rule.refuse ?? []) {
      it(`refuses ${label(value)}`, () => expectRefused(check(family, onData(field, value)), rule.code ?? SCHEMA, path));
    }
  });
}

// Common value sets for the table's constraint kinds.
export const textRule = (min: number, max: number): Pick<FieldRule, 'accept' | 'refuse'> => ({
  accept: min === 0 ? ['', chars(max)] : [chars(min), chars(max)],
  refuse: min === 0 ? [chars(max + 1), 7] : [chars(min - 1), chars(max + 1), 7],
});
export const COUNTRY: Pick<FieldRule, 'accept' | 'refuse'> = {
  accept: ['GB', 'US'],
  refuse: ['gb', 'Gb', 'GBR', 'G', 'G1', '', 44],
};
export const DATE_TIME: Pick<FieldRule, 'accept' | 'refuse'> = {
  accept: ['2025-01-15T09:30:00Z', '2025-01-15T09:30:00.250-04:00', '2025-01-15T09:30:00+05:30'],
  refuse: ['2025-01-15T09:30:00-0400', '2025-01-15t09:30:00z', '2025-01-15', '2025-01-15T09:30:00', 1736933400, '2025-02-30T00:00:00Z'],
};
export const enumRule = (members: readonly string[]): Pick<FieldRule, 'accept' | 'refuse' | 'exactly'> => ({
  exactly: members,
  accept: [...members],
  refuse: ['not_a_member', members[0]!.toUpperCase(), '', 1, null],
});
export const IP: Pick<FieldRule, 'accept' | 'refuse'> = {
  accept: ['203.0.113.7', '0.0.0.0', '2001:db8::1', '::1', '::ffff:192.0.2.1', 'fe80::1'],
  refuse: ['not-an-ip', '256.1.1.1', '1.2.3', '2001:db8:::1', '203.0.113.7/24', 'fe80::1%eth0', '', 2130706433],
};

// it.each spreads array cases; wrap each value so an array value stays one argument.
export const one = (values: readonly unknown[]): [unknown][] => values.map((value) => [value]);

// Every finding of a result as [code, path], in order (empty on acceptance).
export const findings = (result: ItemValidation): [ErrorCode, string][] =>
  result.ok ? [] : result.errors.map((e) => [e.code, e.path] as [ErrorCode, string]);

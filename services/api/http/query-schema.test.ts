// The declared query parameters refuse and read exactly what QueryReader (the hand-read rules the
// routes used before, still the console's) refuses and reads: for any value a query string can
// give (absent, empty, repeated, long, U+0000, numbers past their bounds, odd instants), the same
// finding message, or the same value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QueryReader } from './query-params.ts';
import { dateTime, integer, list, minorUnits, optionalText, single, text } from './query-schema.ts';

// What the contracts hook does before validation: an empty value is no value.
const present = (value: unknown) => (value === '' ? {} : value === undefined ? {} : { p: value });

function zodOutcome(schema: z.ZodType, value: unknown): { value?: unknown; message?: string } {
  const parsed = z.object({ p: schema }).safeParse(present(value));
  if (parsed.success) return { value: (parsed.data).p };
  expect(parsed.error.issues).toHaveLength(1);
  return { message: parsed.error.issues[0]!.message };
}

function readerOutcome(read: (reader: QueryReader) => unknown, value: unknown): { value?: unknown; message?: string } {
  const reader = new QueryReader(value === undefined ? {} : { p: value });
  const result = read(reader);
  return reader.errors.length > 0 ? { message: reader.errors[0]!.message } : { value: result };
}

const word = fc.constantFrom('in', 'out', 'both', 'csv', 'json', 'x', '');
const queryValue = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('', '0', '1', '200', '201', '999999999', '1000000000', '-1', '1.5', ' 5', '0x10', '\u0000', 'a\u0000b', '007'),
  fc.constantFrom('2026-09-01T00:00:00Z', '2026-09-01T00:00:00+02:00', '2026-09-01', '2016-12-31T23:59:60Z', '2026-13-01T00:00:00Z'),
  fc.string({ maxLength: 20 }),
  fc.string({ minLength: 250, maxLength: 1100 }),
  fc.array(word, { minLength: 1, maxLength: 4 }).map((items) => items.join(',')),
  fc.array(fc.constantFrom('1', 'in', ''), { minLength: 2, maxLength: 3 }),
);

const same = (schema: z.ZodType, read: (reader: QueryReader) => unknown, normalise: (v: unknown) => unknown = (v) => v) =>
  fc.assert(
    fc.property(queryValue, (value) => {
      const fromZod = zodOutcome(schema, value);
      const fromReader = readerOutcome(read, value);
      expect({ ...fromZod, value: normalise(fromZod.value) }).toEqual({ ...fromReader, value: normalise(fromReader.value) });
    }),
    { numRuns: 400 },
  );

describe('declared query parameters read as QueryReader does', () => {
  it('text, optional and required, with its length cap', () => {
    same(optionalText(), (r) => r.text('p'));
    same(optionalText({ max: 4096 }), (r) => r.text('p', { max: 4096 }));
    same(text({ required: true }), (r) => r.text('p', { required: true }));
  });

  it('integers in range, with the fallback when absent', () => {
    same(integer({ min: 1, max: 200, fallback: 50 }), (r) => r.integer('p', { min: 1, max: 200, fallback: 50 }));
    same(integer({ min: 0, max: 8, fallback: 6 }), (r) => r.integer('p', { min: 0, max: 8, fallback: 6 }));
  });

  it('instants with an offset, and minor units', () => {
    same(dateTime(), (r) => r.dateTime('p'), (v) => (v instanceof Date ? v.toISOString() : v));
    same(minorUnits(), (r) => r.minorUnits('p'));
  });

  it('lists of allowed words, and one word of a set', () => {
    const allowed = ['in', 'out', 'both'] as const;
    same(list(allowed), (r) => r.list('p', allowed));
    same(single(allowed, 'must be in, out or both'), (r) => {
      const values = r.list('p', allowed);
      if (values && values.length !== 1) r.errors.push({ path: 'p', code: 'svc:request/invalid_parameter', message: 'must be in, out or both' });
      return values?.[0];
    });
  });
});

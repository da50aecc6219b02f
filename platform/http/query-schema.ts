import { z } from 'zod';
import { dateTimeMs, isDateTime } from '../../schemas/primitives/timestamp.ts';

// Query parameters as zod schemas, the one reader of both HTTP edges. An empty value counts as
// absent: the /v1 contracts drop it before validation (contracts.ts), strictQuery drops it itself.
// Every check aborts, so a parameter gets one error. Each finding becomes {path: name, code:
// svc:request/invalid_parameter} in the one error mapper (validation-problem.ts).
const DEFAULT_MAX = 256;

export function text(options: { max?: number; required?: boolean } = {}) {
  const max = options.max ?? DEFAULT_MAX;
  // A parameter given twice arrives as an array: refused rather than one of them picked.
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be given once') })
    .max(max, { error: `must be at most ${max} characters`, abort: true })
    .refine((value) => !value.includes('\0'), { error: 'must not contain the character U+0000', abort: true });
}

export const optionalText = (options: { max?: number } = {}) => text(options).optional();

export function integer(range: { min: number; max: number; fallback: number }) {
  const message = `must be an integer ${range.min}-${range.max}`;
  return text()
    .refine((value) => /^[0-9]{1,9}$/.test(value) && Number(value) >= range.min && Number(value) <= range.max, { error: message, abort: true })
    .transform(Number)
    .optional()
    .default(range.fallback)
    // Documented as what it reads: an integer in range (the text is checked as a query value).
    .meta({ type: 'integer', minimum: range.min, maximum: range.max, default: range.fallback, maxLength: undefined, description: `default ${range.fallback}` });
}

// RFC 3339 with an offset, as every instant of the API.
const dateTimeText = () =>
  text()
    .refine(isDateTime, { error: 'must be an RFC 3339 date-time with an offset', abort: true })
    .meta({ format: 'date-time' })
    .optional();

export const dateTime = () => dateTimeText().transform((value) => (value === undefined ? undefined : new Date(dateTimeMs(value))));

// Integer minor units, as in every money value of the API, at most `max`.
export const minorUnits = (max?: bigint) =>
  text()
    .regex(/^(0|[1-9][0-9]{0,37})$/, { error: 'must be a non-negative integer amount in minor units', abort: true })
    .refine((value) => max === undefined || value === undefined || BigInt(value) <= max, { error: `must be at most ${max}`, abort: true })
    .meta({ pattern: '^(0|[1-9][0-9]{0,37})$' })
    .transform((value) => BigInt(value))
    .optional();

// A comma-separated list of allowed words, without repeats.
export function list<const T extends string>(allowed: readonly T[]) {
  return text({ max: 1024 })
    .superRefine((value, ctx) => {
      const unknown = value.split(',').filter((item) => !allowed.includes(item as T));
      if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`, abort: true });
    })
    .transform((value) => [...new Set(value.split(','))] as T[])
    .optional()
    .meta({ description: `comma-separated, of: ${allowed.join(', ')}` });
}

// One value of a fixed set: the list's rules, held to a single item (message: how the route says it).
export function single<const T extends string>(allowed: readonly T[], message = `must be one of ${allowed.join(', ')}`) {
  return text({ max: 1024 })
    .superRefine((value, ctx) => {
      const items = value.split(',');
      const unknown = items.filter((item) => !allowed.includes(item as T));
      if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`, abort: true });
      else if (items.length !== 1) ctx.addIssue({ code: 'custom', message, abort: true });
    })
    .transform((value) => value.split(',')[0] as T)
    .optional()
    .meta({ enum: [...allowed], maxLength: undefined });
}

// Keyset pages of the list endpoints (paging.ts): limit and the cursor of the previous page.
export const pagingShape = (limit: { min: number; max: number; fallback: number } = { min: 1, max: 200, fallback: 50 }) => ({
  cursor: optionalText({ max: 4096 }).meta({ description: 'next_cursor of the previous page, with the same filters' }),
  limit: integer(limit),
});

// A kind alone filters nothing, so it is refused without the value it qualifies.
export function needs<A extends string, B extends string>(qualifier: A, subject: B) {
  const where = reads({ path: [qualifier], message: `needs ${subject}` }, [qualifier, subject]);
  return [(query: Partial<Record<A | B, unknown>>) => query[qualifier] === undefined || query[subject] !== undefined, where] as const;
}

// A window whose start must not be after its end; reported on the start. zod runs it only once
// every parameter is valid (strictQuery, once its two parameters are).
// Use: `.refine(...windowCheck('since', 'until'))`.
export function windowCheck<A extends string, B extends string>(since: A, until: B) {
  const instant = (v: unknown): number | undefined =>
    v instanceof Date ? v.getTime() : typeof v === 'string' && isDateTime(v) ? dateTimeMs(v) : undefined;
  const ordered = (query: Partial<Record<A | B, unknown>>) => {
    const from = instant(query[since]);
    const to = instant(query[until]);
    return from === undefined || to === undefined || from <= to;
  };
  return [ordered, reads({ path: [since], message: `must not be after ${until}` }, [since, until])] as const;
}

type CrossCheck = readonly [(query: never) => boolean, { path: PropertyKey[]; message: string }];

// The parameters each check across parameters reads, for strictQuery.
const READS = new WeakMap<object, readonly string[]>();
function reads<T extends object>(where: T, names: readonly string[]): T {
  READS.set(where, names);
  return where;
}

// A whole query read the console's way: an unknown parameter is refused, an empty value is
// absent, and every finding is answered at once: a check across parameters runs once the
// parameters it reads have no finding of their own, beside the other parameters' findings
// (an object's own refinements would wait for every parameter).
export function strictQuery<Shape extends z.core.$ZodLooseShape>(shape: Shape, ...checks: readonly CrossCheck[]) {
  const object = z.strictObject(shape);
  type Query = z.output<typeof object>;
  const schema = z.unknown().transform((raw, ctx): Query => {
    const query = withoutEmptyValues(raw);
    const parsed = object.safeParse(query);
    const issues: z.core.$ZodIssue[] = parsed.success ? [] : [...parsed.error.issues];
    for (const [check, where] of checks) {
      const names = READS.get(where) ?? [String(where.path[0])];
      if (issues.some((issue) => names.includes(String(issue.path[0])))) continue;
      // Each parameter it reads is valid here, so each parses to its value.
      const values = Object.fromEntries(names.map((name) => [name, (shape[name] as z.ZodType | undefined)?.safeParse(query[name]).data]));
      if (!(check as (query: unknown) => boolean)(values)) issues.push({ code: 'custom', path: where.path, message: where.message });
    }
    if (issues.length === 0) return parsed.data as Query;
    for (const issue of issues) ctx.addIssue({ ...issue, input: query } as z.core.$ZodRawIssue);
    return z.NEVER;
  });
  STRICT_QUERY_NAMES.set(schema, Object.keys(shape));
  return schema;
}

// The parameters each strict query takes, kept for the checks over the routes (as
// app.routeContracts keeps their contracts): a transform does not show them.
const STRICT_QUERY_NAMES = new WeakMap<object, readonly string[]>();
export const strictQueryNames = (schema: unknown): readonly string[] => (schema && typeof schema === 'object' ? (STRICT_QUERY_NAMES.get(schema) ?? []) : []);

function withoutEmptyValues(query: unknown): Record<string, unknown> {
  if (!query || typeof query !== 'object') return {};
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
}

// An integer in range that may be absent (no default).
export function optionalInteger(range: { min: number; max: number }) {
  const message = `must be an integer ${range.min}-${range.max}`;
  return text()
    .refine((value) => /^[0-9]{1,9}$/.test(value) && Number(value) >= range.min && Number(value) <= range.max, { error: message, abort: true })
    .transform(Number)
    .optional()
    .meta({ type: 'integer', minimum: range.min, maximum: range.max, maxLength: undefined });
}

// A deterministic generator of values valid under a zod schema, for the Avro round-trip tests:
// every optional member is produced both present and absent, every enum value and every literal
// is produced, arrays run from empty to several items, and strings and numbers come from pools of
// awkward but valid values (unicode, quotes, control characters, maximum lengths, -0, the largest
// safe integer), each leaf keeping only the pool values its own zod schema accepts. Counters per
// path make the choice cycle, so a few dozen values reach every branch; coverage() says which
// branches were reached and expectedCoverage() which exist, so a test can prove it reached all.

import { z } from 'zod';

export interface Coverage {
  // path → enum/literal values produced.
  enums: Map<string, Set<string>>;
  // path of an optional member → [seen absent, seen present].
  optionals: Map<string, [boolean, boolean]>;
}

export interface GeneratorOptions {
  // Values for particular schemas (by identity, e.g. moneySchema) or paths (e.g. "occurred_at"),
  // cycled like the pools; for rules beyond the zod schema (money scales from the asset registry).
  bySchema?: Map<Schema, unknown[]>;
  byPath?: Record<string, unknown[]>;
}

const STRINGS: string[] = [
  'x',
  'Ada Lovelace',
  'Zoë Ñandú 東京 عربى 😀 \u202e reversed',
  'line\nbreak\t"quoted" \\ back/slash',
  '\u0001\u001f control',
  '',
  ' ',
  'a'.repeat(256),
  'é'.repeat(64),
  '2026-09-01T12:00:00Z',
  '2026-02-28T23:59:60.123456789+05:30',
  '1970-01-01T00:00:00-00:00',
  '1990-12-10',
  '2024-02-29',
  'GB',
  'US',
  'USD',
  'X-USDC1',
  '203.0.113.7',
  '2001:db8::1',
  '::ffff:192.0.2.1',
  '12550',
  '-99999999999999999999999999999999999999',
  '0',
];

const NUMBERS: number[] = [0, -0, 1, -1, 0.5, 25, 100, 90, -90, 180, -180, 0.1, 1 / 3, 5e-324, 40.7128, -74.006, 17, 18, 2 ** 31, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];

const JSON_BLOBS: unknown[] = [
  {},
  { a: 1, nested: { b: [1, 'x', null, true, false, 1.5e300, -0.25] } },
  { 'ключ': 'значение', emoji: '😀', empty: '', quote: '"', list: [] },
  JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}'),
  { deep: { deeper: { deepest: [{ x: null }] } }, big: Number.MAX_SAFE_INTEGER, neg: -1e-300 },
];

// zod's own union of its schema classes, discriminated by `_zod.def.type`.
type Schema = z.core.$ZodType;
const defOf = (schema: Schema) => (schema as z.core.$ZodTypes)._zod.def;

export class ValueGenerator {
  private readonly counters = new Map<string, number>();
  private readonly accepted = new Map<Schema, unknown[]>();
  readonly coverage: Coverage = { enums: new Map(), optionals: new Map() };

  constructor(private readonly options: GeneratorOptions = {}) {}

  value(schema: Schema, path = ''): unknown {
    const fixed = this.options.bySchema?.get(schema) ?? (path in (this.options.byPath ?? {}) ? this.options.byPath![path] : undefined);
    if (fixed) return structuredClone(fixed[this.next(`fixed:${path}`) % fixed.length]);
    const def = defOf(schema);
    switch (def.type) {
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const [member, sub] of Object.entries(def.shape)) {
          const at = path ? `${path}.${member}` : member;
          if (defOf(sub).type === 'optional') {
            const present = this.next(`optional:${at}`) % 3 !== 2;
            const seen = this.coverage.optionals.get(at) ?? [false, false];
            seen[present ? 1 : 0] = true;
            this.coverage.optionals.set(at, seen);
            if (present) out[member] = this.value((sub as z.core.$ZodOptional)._zod.def.innerType, at);
          } else out[member] = this.value(sub, at);
        }
        return out;
      }
      case 'optional':
        return this.value(def.innerType, path);
      case 'nullable':
        return this.next(`nullable:${path}`) % 3 === 2 ? null : this.value(def.innerType, path);
      case 'array': {
        const max = maxItems(def) ?? 4;
        const length = [1, 2, 0, 3][this.next(`array:${path}`) % 4]! % (max + 1);
        return Array.from({ length }, () => this.value(def.element, `${path}[]`));
      }
      case 'enum':
      case 'literal': {
        const values: unknown[] = def.type === 'enum' ? Object.values(def.entries) : def.values;
        const chosen = values[this.next(`enum:${path}`) % values.length];
        const seen = this.coverage.enums.get(path) ?? new Set<string>();
        seen.add(String(chosen));
        this.coverage.enums.set(path, seen);
        return chosen;
      }
      case 'string':
        return this.fromPool(schema, STRINGS, path);
      case 'number':
        return this.fromPool(schema, NUMBERS, path);
      case 'boolean':
        return this.next(`boolean:${path}`) % 2 === 0;
      case 'record':
      case 'any':
      case 'unknown':
        return structuredClone(JSON_BLOBS[this.next(`json:${path}`) % JSON_BLOBS.length]);
      default:
        throw new Error(`${path}: no generator for zod type ${def.type}`);
    }
  }

  private fromPool(schema: Schema, pool: unknown[], path: string): unknown {
    let accepted = this.accepted.get(schema);
    if (!accepted) {
      // Integer -0 is left out: Avro integers have no negative zero (derive.ts; tested apart).
      const integer = pool === NUMBERS && !z.safeParse(schema, 0.5).success;
      accepted = pool.filter((candidate) => z.safeParse(schema, candidate).success && !(integer && Object.is(candidate, -0)));
      if (accepted.length === 0) throw new Error(`${path}: no pool value is valid here; give one in byPath or bySchema`);
      this.accepted.set(schema, accepted);
    }
    return accepted[this.next(`pool:${path}`) % accepted.length];
  }

  private next(key: string): number {
    const n = this.counters.get(key) ?? 0;
    this.counters.set(key, n + 1);
    return n;
  }
}

function maxItems(def: z.core.$ZodArrayDef): number | undefined {
  for (const check of def.checks ?? []) {
    const checkDef = (check as z.core.$ZodChecks)._zod.def;
    if (checkDef.check === 'max_length') return checkDef.maximum;
  }
  return undefined;
}

// Every enum/literal path with its values and every optional member path of a schema: what a
// generator's coverage must reach. Paths stop at options' fixed values (bySchema, byPath).
export function expectedCoverage(schema: Schema, options: GeneratorOptions = {}, path = '', out: Coverage = { enums: new Map(), optionals: new Map() }): Coverage {
  if (options.bySchema?.has(schema) || path in (options.byPath ?? {})) return out;
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      for (const [member, sub] of Object.entries(def.shape)) {
        const at = path ? `${path}.${member}` : member;
        if (defOf(sub).type === 'optional') {
          out.optionals.set(at, [true, true]);
          expectedCoverage((sub as z.core.$ZodOptional)._zod.def.innerType, options, at, out);
        } else expectedCoverage(sub, options, at, out);
      }
      break;
    case 'optional':
    case 'nullable':
      expectedCoverage(def.innerType, options, path, out);
      break;
    case 'array':
      expectedCoverage(def.element, options, `${path}[]`, out);
      break;
    case 'enum':
      out.enums.set(path, new Set(Object.values(def.entries).map(String)));
      break;
    case 'literal':
      out.enums.set(path, new Set(def.values.map(String)));
      break;
    default:
      // Any other schema has no enum or optional member below it to reach.
      break;
  }
  return out;
}

// The coverage as plain sorted data, for a readable equality assertion.
export function coverageSummary(coverage: Coverage): { enums: Record<string, string[]>; optionals: Record<string, [boolean, boolean]> } {
  const enums = Object.fromEntries([...coverage.enums].sort(([a], [b]) => a.localeCompare(b)).map(([path, values]) => [path, [...values].sort()]));
  const optionals = Object.fromEntries([...coverage.optionals].sort(([a], [b]) => a.localeCompare(b)));
  return { enums, optionals };
}

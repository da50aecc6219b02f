import { z } from 'zod';
import { FAMILIES, type Family } from '../../../schemas/families/index.ts';
import { moneySchema } from '../../../schemas/primitives/money.ts';

// The target paths a mapping may write, derived from the families' zod schemas (never a list kept
// by hand, so a field added to a family is mappable at once) and the nearest-name suggestions a
// refused path or column comes back with.

// Envelope members a row may fill; `data.<path>` covers the rest.
const ENVELOPE_TARGETS = ['external_id', 'occurred_at', 'recorded_at', 'sequence', 'schema_version'] as const;
export const REQUIRED_TARGETS = ['external_id', 'occurred_at'] as const;

export type TargetKind =
  | 'envelope' // external_id, occurred_at, recorded_at, sequence, schema_version
  | 'leaf' // an enum or primitive of data, including a part of a Money object (data.amount.value)
  | 'money' // a Money object itself (data.amount, data.fees.0): mapped with type money, or json whole
  | 'collection' // an array (data.identifiers): mapped whole
  | 'in_collection' // any sub-path under a collection (data.identifiers.0.value): the row's schema check judges it
  | 'object'; // an intermediate object (data.debit): its fields are the targets, or json maps it whole

interface Shape {
  kinds: Map<string, TargetKind>; // every path of data in schema order, objects included
  collections: string[];
  moneyCollections: Set<string>; // collections whose items are Money (data.fees)
  requiredObjects: string[]; // objects (not Money) an event must hold, as must every object above them (data.debit)
}

const shapes = new Map<Family, Shape>();

function shapeOf(family: Family): Shape {
  let shape = shapes.get(family);
  if (!shape) {
    shape = { kinds: new Map(), collections: [], moneyCollections: new Set(), requiredObjects: [] };
    walk(FAMILIES[family].data, 'data', shape, true);
    shapes.set(family, shape);
  }
  return shape;
}

// Optional, nullable and default only say whether a value must be there, not where it goes.
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  return s;
}

// Money is recognised by identity: every family builds its Money members from the one moneySchema.
function walk(schema: z.ZodType, path: string, shape: Shape, required: boolean): void {
  const s = unwrap(schema);
  if (s instanceof z.ZodObject) {
    shape.kinds.set(path, s === moneySchema ? 'money' : 'object');
    if (required && s !== moneySchema && path !== 'data') shape.requiredObjects.push(path);
    for (const [key, child] of Object.entries(s.shape)) {
      walk(child as z.ZodType, `${path}.${key}`, shape, required && !(child as z.ZodType).safeParse(undefined).success);
    }
  } else if (s instanceof z.ZodArray) {
    shape.kinds.set(path, 'collection');
    shape.collections.push(path);
    if (unwrap(s.element as z.ZodType) === moneySchema) shape.moneyCollections.add(path);
  } else {
    // Enums, primitives, and anything else (a refined string, a union) take one value.
    shape.kinds.set(path, 'leaf');
  }
}

const INDEX = /^(0|[1-9]\d*)$/;

// What a target path names in the family, or undefined when it names nothing.
export function classifyTarget(family: Family, target: string): TargetKind | undefined {
  if ((ENVELOPE_TARGETS as readonly string[]).includes(target)) return 'envelope';
  const shape = shapeOf(family);
  const kind = shape.kinds.get(target);
  if (kind) return kind;
  const collection = shape.collections.find((c) => target.startsWith(`${c}.`));
  if (collection === undefined) return undefined;
  const rest = target.slice(collection.length + 1);
  return shape.moneyCollections.has(collection) && INDEX.test(rest) ? 'money' : 'in_collection';
}

// Every real target path, envelope first, then data in schema order: leaves, Money objects and
// their parts, collections (as their root; items are `<root>.<i>...`). Objects are not targets.
// The family's required objects (see Shape) that `targets` map parts of. An event needs each even
// when no part of it has a value: a movement's debit side holds nothing for a cash deposit, and
// {} is what live ingest takes for it.
export function requiredObjectsUnder(family: Family, targets: readonly string[]): string[] {
  return shapeOf(family).requiredObjects.filter((object) => targets.some((target) => target.startsWith(`${object}.`)));
}

export function familyTargets(family: Family): string[] {
  const data = [...shapeOf(family).kinds].filter(([, kind]) => kind !== 'object').map(([path]) => path);
  return [...ENVELOPE_TARGETS, ...data];
}

// The mappable paths right under an intermediate object (data.debit -> data.debit.account_id, ...).
export function targetsUnder(family: Family, object: string): string[] {
  return familyTargets(family).filter((t) => t.startsWith(`${object}.`));
}

// The candidates nearest to `input` by edit distance (ties keep candidate order), up to `limit`.
export function nearest(input: string, candidates: readonly string[], limit = 5): string[] {
  return [...new Set(candidates)]
    .map((candidate, i) => ({ candidate, i, d: editDistance(input, candidate) }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, limit)
    .map((c) => c.candidate);
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions (amuont -> amount
// costs 1), the typos people make in hand-written mappings.
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const up = rows[i - 1]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

// The Money objects of a family as a mapping names them (data.amount, data.fees.<i>), for messages.
export function moneyTargets(family: Family): string[] {
  const shape = shapeOf(family);
  const objects = [...shape.kinds].filter(([, kind]) => kind === 'money').map(([path]) => path);
  return [...objects, ...[...shape.moneyCollections].map((c) => `${c}.<i>`)];
}

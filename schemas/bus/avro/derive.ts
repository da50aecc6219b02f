// Avro schemas derived from the project's zod schemas, never written by hand, so the bus contract
// cannot drift from the API's. The zod schema is first turned into JSON Schema by zod itself
// (z.toJSONSchema, a public API that keeps types, required members, enums and integer bounds) and
// that is mapped onto Avro:
//
//   object with fixed members  → record (one field per member, in declaration order; nested
//                                 records are named after their path: Envelope_data_debit)
//   member not required        → union ["null", T] with default null; absent ⇄ null
//   nullable (T | null)        → union ["null", T] with default null; null ⇄ null
//   optional AND nullable      → refused (Avro could not tell an absent member from a null one)
//   string, string enum, const → string (enum values are kept in the attribute "svc.enum": an
//                                 Avro enum would refuse a later value with a dot or a hyphen and
//                                 turn adding one into an incompatible change)
//   integer within int32       → int; any other integer (bounded by zod to the safe range) → long
//                                 (read and written as JS numbers over the whole safe range; an
//                                 integer given as -0 comes back as 0: Avro integers have no -0)
//   number                     → double (a JS number is an IEEE double: exact, -0 included)
//   boolean                    → boolean
//   array                      → array
//   record / unknown / any     → string holding the value as JSON (attribute "svc.json": true):
//                                 JSON.stringify → JSON.parse gives back the same JSON value
//
// Money values and other decimal strings stay strings. Converters map a JSON value to the Avro
// value avsc encodes and back; both refuse (throw AvroMappingError with the path) what they could
// not carry exactly: unknown members, wrong types, unsafe integers, non-finite numbers and strings
// holding a lone UTF-16 surrogate (Avro strings are UTF-8; such a string would come back altered).

import avro from 'avsc';
import { z } from 'zod';

type AvroSchema = string | { [key: string]: unknown } | AvroSchema[];

export class AvroMappingError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path || '(root)'}: ${message}`);
    this.name = 'AvroMappingError';
  }
}

type Primitive = 'string' | 'int' | 'long' | 'double' | 'boolean';

type Node =
  | { kind: 'record'; name: string; fields: Field[] }
  | { kind: 'array'; items: Node }
  | { kind: 'nullable'; inner: Node }
  | { kind: 'json' }
  | { kind: 'primitive'; type: Primitive; symbols?: string[] };

interface Field {
  name: string;
  node: Node;
  optional: boolean;
}

export interface DerivedAvro {
  // The record's full name (namespace.name).
  fullName: string;
  schema: { [key: string]: unknown };
  type: avro.Type;
  // The JSON value (as the API and the bus carry it) as the Avro value avsc encodes.
  toAvro: (value: unknown) => unknown;
  // An Avro value decoded with this schema as reader, back to the JSON value.
  fromAvro: (value: unknown) => unknown;
  encode: (value: unknown) => Buffer;
  decode: (bytes: Buffer) => unknown;
}

const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
// A lone surrogate: with the u flag, a well-formed pair is one code point and never matches.
const LONE_SURROGATE = /\p{Cs}/u;

// avsc's own long refuses integers beyond 2^52; the API's sequence goes up to 2^53 - 1. This long
// reads and writes every safe integer (as a JS number) and refuses the rest rather than round them.
const SAFE_LONG = avro.types.LongType.__with({
  fromBuffer: (buffer: Buffer) => {
    const n = buffer.readBigInt64LE(0);
    if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(-Number.MAX_SAFE_INTEGER)) throw new Error('a long beyond the safe integer range');
    return Number(n);
  },
  toBuffer: (n: number) => {
    const buffer = Buffer.alloc(8);
    buffer.writeBigInt64LE(BigInt(n));
    return buffer;
  },
  fromJSON: Number,
  toJSON: (n: number) => n,
  isValid: (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n),
  compare: (a: number, b: number) => (a === b ? 0 : a < b ? -1 : 1),
});

function safeLongHook(schema: unknown): avro.Type | undefined {
  if (schema === 'long') return SAFE_LONG;
  if (schema && typeof schema === 'object' && (schema as { type?: unknown }).type === 'long' && !(schema as { logicalType?: unknown }).logicalType) return SAFE_LONG;
  return undefined;
}

// The avsc options of every Type made from these schemas (here, and in the registry client, which
// builds its own Types from the registered schemas). A fresh object each time: avsc keeps its
// registry of named types in the options object it is given.
export function avscOptions(): Partial<avro.ForSchemaOptions> {
  return { wrapUnions: 'auto', typeHook: safeLongHook };
}

export function deriveAvro(schema: z.ZodType, options: { name: string; namespace: string; doc?: string }): DerivedAvro {
  if (!AVRO_NAME.test(options.name)) throw new AvroMappingError('', `${options.name} is not an Avro name`);
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as JsonSchema;
  const node = nodeOf(json, options.name, '');
  if (node.kind !== 'record') throw new AvroMappingError('', 'the top level must be an object with fixed members');
  const avroSchema = { ...(avroOf(node) as { [key: string]: unknown }), namespace: options.namespace, ...(options.doc ? { doc: options.doc } : {}) };
  const type = avro.Type.forSchema(avroSchema as avro.Schema, avscOptions());
  const toAvro = (value: unknown) => toAvroValue(node, value, '');
  const fromAvro = (value: unknown) => fromAvroValue(node, value);
  return {
    fullName: `${options.namespace}.${options.name}`,
    schema: avroSchema,
    type,
    toAvro,
    fromAvro,
    encode: (value) => type.toBuffer(toAvro(value)),
    decode: (bytes) => fromAvro(type.fromBuffer(bytes)),
  };
}

// ---- JSON Schema → node ------------------------------------------------------------------------

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  $ref?: string;
  [key: string]: unknown;
}

function nodeOf(schema: JsonSchema, name: string, path: string): Node {
  if (schema.$ref || schema.allOf || schema.oneOf) throw new AvroMappingError(path, 'references, allOf and oneOf have no Avro mapping here');
  if (schema.anyOf) {
    const others = schema.anyOf.filter((s) => s.type !== 'null');
    if (others.length !== 1 || schema.anyOf.length !== 2) throw new AvroMappingError(path, 'only T | null unions have an Avro mapping here');
    return nullable(nodeOf(others[0]!, name, path), path);
  }
  if (Array.isArray(schema.type)) {
    const others = schema.type.filter((t) => t !== 'null');
    if (others.length !== 1 || schema.type.length !== 2) throw new AvroMappingError(path, 'only T | null unions have an Avro mapping here');
    return nullable(nodeOf({ ...schema, type: others[0] }, name, path), path);
  }
  switch (schema.type) {
    case undefined:
      // unknown, any: no constraint at all.
      if (schema.enum || schema.const !== undefined) break;
      return { kind: 'json' };
    case 'object': {
      const fixed = schema.additionalProperties === false;
      if (!fixed) return { kind: 'json' };
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties ?? {}).map(([member, sub]): Field => {
        if (!AVRO_NAME.test(member)) throw new AvroMappingError(join(path, member), 'is not an Avro field name');
        const node = nodeOf(sub, `${name}_${member}`, join(path, member));
        const optional = !required.has(member);
        if (optional && node.kind === 'nullable') throw new AvroMappingError(join(path, member), 'is both optional and nullable: Avro cannot tell absent from null');
        return { name: member, node, optional };
      });
      return { kind: 'record', name, fields };
    }
    case 'array':
      if (!schema.items) throw new AvroMappingError(path, 'an array without an item schema');
      return { kind: 'array', items: nodeOf(schema.items, `${name}_item`, `${path}[]`) };
    case 'string': {
      const symbols = schema.enum ?? (schema.const !== undefined ? [schema.const] : undefined);
      return symbols ? { kind: 'primitive', type: 'string', symbols: symbols.map(String) } : { kind: 'primitive', type: 'string' };
    }
    case 'integer': {
      const min = schema.minimum ?? schema.exclusiveMinimum;
      const max = schema.maximum ?? schema.exclusiveMaximum;
      const fitsInt = min !== undefined && max !== undefined && min >= INT32_MIN && max <= INT32_MAX;
      return { kind: 'primitive', type: fitsInt ? 'int' : 'long' };
    }
    case 'number':
      return { kind: 'primitive', type: 'double' };
    case 'boolean':
      return { kind: 'primitive', type: 'boolean' };
    case 'null':
      throw new AvroMappingError(path, 'a member that can only be null');
  }
  throw new AvroMappingError(path, `no Avro mapping for ${JSON.stringify(schema).slice(0, 120)}`);
}

function nullable(inner: Node, path: string): Node {
  if (inner.kind === 'nullable') throw new AvroMappingError(path, 'nested nullable');
  return { kind: 'nullable', inner };
}

function join(path: string, member: string): string {
  return path ? `${path}.${member}` : member;
}

// ---- node → Avro schema ------------------------------------------------------------------------

function avroOf(node: Node): AvroSchema {
  switch (node.kind) {
    case 'record':
      return {
        type: 'record',
        name: node.name,
        fields: node.fields.map((field) =>
          field.optional || field.node.kind === 'nullable'
            ? { name: field.name, type: ['null', avroOf(field.node.kind === 'nullable' ? field.node.inner : field.node)], default: null }
            : { name: field.name, type: avroOf(field.node) },
        ),
      };
    case 'array':
      return { type: 'array', items: avroOf(node.items) };
    case 'nullable':
      return ['null', avroOf(node.inner)];
    case 'json':
      return { type: 'string', 'svc.json': true };
    case 'primitive':
      return node.symbols ? { type: node.type, 'svc.enum': node.symbols } : node.type;
  }
}

// ---- values ------------------------------------------------------------------------------------

function toAvroValue(node: Node, value: unknown, path: string): unknown {
  switch (node.kind) {
    case 'record': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AvroMappingError(path, 'must be an object');
      const source = value as Record<string, unknown>;
      const known = new Set(node.fields.map((f) => f.name));
      for (const key of Object.keys(source)) {
        if (!known.has(key) && source[key] !== undefined) throw new AvroMappingError(join(path, key), 'is not a member of the schema');
      }
      const out: Record<string, unknown> = {};
      for (const field of node.fields) {
        const member = Object.hasOwn(source, field.name) ? source[field.name] : undefined;
        const at = join(path, field.name);
        if (member === undefined) {
          if (!field.optional) throw new AvroMappingError(at, 'is required');
          out[field.name] = null;
        } else {
          if (field.optional && member === null) throw new AvroMappingError(at, 'is optional, not nullable: null is not a value');
          out[field.name] = toAvroValue(field.node, member, at);
        }
      }
      return out;
    }
    case 'array':
      if (!Array.isArray(value)) throw new AvroMappingError(path, 'must be an array');
      return value.map((item, i) => toAvroValue(node.items, item, `${path}[${i}]`));
    case 'nullable':
      return value === null ? null : toAvroValue(node.inner, value, path);
    case 'json': {
      const text = JSON.stringify(value);
      if (text === undefined) throw new AvroMappingError(path, 'has no JSON form');
      return text;
    }
    case 'primitive':
      switch (node.type) {
        case 'string':
          if (typeof value !== 'string') throw new AvroMappingError(path, 'must be a string');
          if (LONE_SURROGATE.test(value)) throw new AvroMappingError(path, 'holds a lone UTF-16 surrogate, which an Avro (UTF-8) string cannot carry');
          return value;
        case 'int':
        case 'long':
          if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new AvroMappingError(path, 'must be a safe integer');
          if (node.type === 'int' && (value < INT32_MIN || value > INT32_MAX)) throw new AvroMappingError(path, 'is outside int32');
          return value;
        case 'double':
          if (typeof value !== 'number' || !Number.isFinite(value)) throw new AvroMappingError(path, 'must be a finite number');
          return value;
        case 'boolean':
          if (typeof value !== 'boolean') throw new AvroMappingError(path, 'must be a boolean');
          return value;
      }
  }
}

function fromAvroValue(node: Node, value: unknown): unknown {
  switch (node.kind) {
    case 'record': {
      const source = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const field of node.fields) {
        const member = source[field.name];
        if (member === null || member === undefined) {
          if (field.optional) continue;
          out[field.name] = null;
        } else out[field.name] = fromAvroValue(field.node, member);
      }
      return out;
    }
    case 'array':
      return (value as unknown[]).map((item) => fromAvroValue(node.items, item));
    case 'nullable':
      return value === null ? null : fromAvroValue(node.inner, value);
    case 'json':
      return JSON.parse(value as string);
    case 'primitive':
      return value;
  }
}

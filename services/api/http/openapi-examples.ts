// An example for each operation's JSON answers, built from the published schema itself, so it
// cannot disagree with it (contracts.test.ts parses every one with the route's zod schema).
// Values are plain and deterministic: the first of an enum, one item per list, every member.
import type { z } from 'zod';
import { objectOf } from './json-object.ts';

// The published schemas are the type provider's output: zod's JSON Schema.
type JsonSchema = z.core.JSONSchema.JSONSchema;
const schemaOf = (value: unknown): JsonSchema | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : undefined);

const PREFIX = '#/components/schemas/';
const UUID = '01a05cd7-2a00-7262-9e2e-d21aeabced42';
const INSTANT = '2026-09-01T12:00:00Z';

// What a patterned string looks like; the pattern is checked on the value chosen.
function patterned(pattern: string): string {
  const prefixed = /^\^([a-z0-9]+_)/.exec(pattern);
  const candidates = [
    prefixed ? `${prefixed[1]}${UUID}` : undefined,
    'sha256:' + 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    INSTANT,
    'USD',
    'GB',
    '125000',
  ];
  const chosen = candidates.find((c) => c !== undefined && new RegExp(pattern).test(c));
  if (chosen === undefined) throw new Error(`no example for the pattern ${pattern}`);
  return chosen;
}

function text(schema: JsonSchema, name: string): string {
  if (schema.format === 'date-time') return INSTANT;
  if (typeof schema.pattern === 'string') return patterned(schema.pattern);
  const word = name === 'external_id' || name.endsWith('_id') ? 'cust-1001' : name || 'text';
  const min = schema.minLength ?? 0;
  const padded = word.length >= min ? word : word.padEnd(min, 'x');
  return schema.maxLength !== undefined ? padded.slice(0, Math.max(schema.maxLength, min)) : padded;
}

function exampleOf(value: unknown, components: Record<string, unknown>, name = '', depth = 0): unknown {
  const schema = schemaOf(value);
  if (!schema || depth > 12) return null;
  if (typeof schema.$ref === 'string') return exampleOf(components[schema.$ref.slice(PREFIX.length)], components, name, depth + 1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return exampleOf(union.find((branch) => branch.type !== 'null') ?? union[0], components, name, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return text(schema, name);
    case 'integer':
    case 'number': {
      // 1 where the range allows it (zod bounds every integer to the safe range).
      const low = schema.minimum ?? (typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : -Infinity);
      return Math.min(Math.max(1, low), schema.maximum ?? Infinity);
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const item = exampleOf(schema.items, components, name, depth + 1);
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, member]) => [key, exampleOf(member, components, key, depth + 1)]));
    default:
      return null;
  }
}

// Each operation's JSON success answers get an example of their schema.
export function withExamples<D extends { paths?: unknown; components?: { schemas?: Record<string, unknown> } }>(document: D): D {
  const components = document.components?.schemas ?? {};
  for (const operations of Object.values(objectOf(document.paths))) {
    for (const operation of Object.values(objectOf(operations))) {
      for (const [status, response] of Object.entries(objectOf(objectOf(operation).responses))) {
        const media = objectOf(objectOf(objectOf(response).content)['application/json']);
        if (status.startsWith('2') && media.schema && media.example === undefined) media.example = exampleOf(media.schema, components);
      }
    }
  }
  return document;
}

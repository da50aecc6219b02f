import { z } from 'zod';
import { FAMILY_NAMES } from '../families/index.ts';
import { MAX_SCALE } from '../primitives/money.ts';

// The import mapping document, exactly as the spec's tables give it (one per family per file).
// Strict everywhere: an unknown key is refused. Which target paths a family accepts, and the
// rules between keys that zod cannot express alone (from XOR const, map_default only with map,
// keys that apply to one type only), are checked when the mapping is compiled
// (services/imports/mapping/compile.ts), each finding with its path.
const MAPPING_VERSION = 1;

const oneCharacter = z.string().length(1);
const nullValues = z.array(z.string()).max(50);
const skipLeadingRows = z.number().int().min(0).max(1_000_000);
const commentPrefix = z.string().min(1).max(8);

const csvFormatSchema = z.strictObject({
  kind: z.literal('csv'),
  delimiter: oneCharacter.optional(),
  quote: oneCharacter.optional(),
  // The first record of chunk 0 is the header; when false, columns is required.
  has_header: z.boolean().optional(),
  // Every chunk starts with the header again (checked against the first).
  header_per_chunk: z.boolean().optional(),
  // Explicit column names; override a present header.
  columns: z.array(z.string().min(1).max(256)).min(1).max(1000).optional(),
  skip_leading_rows: skipLeadingRows.optional(),
  comment_prefix: commentPrefix.optional(),
  null_values: nullValues.optional(),
});

const jsonlFormatSchema = z.strictObject({
  kind: z.literal('jsonl'),
  comment_prefix: commentPrefix.optional(),
  skip_leading_rows: skipLeadingRows.optional(),
  null_values: nullValues.optional(),
});

const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'datetime', 'money', 'json'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const source = z.string().min(1).max(512);
// Ours, beyond the spec's table: `from` may list 2-10 sources whose values are joined with '|'
// (files without an id column need an external_id made of several columns), and the pseudo-
// column `@row_no` is the row's number in the file (global, from 1). A row missing any part has
// no value for the target.
export const ROW_NUMBER_SOURCE = '@row_no';
export const JOINED_SOURCE_SEPARATOR = '|';
const sources = z.union([source, z.array(source).min(2).max(10)]);
const literal = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);

// A money part (value or asset): a column or a constant, with the string treatments.
const moneyPartSchema = z.strictObject({
  from: source.optional(),
  const: z.union([z.string(), z.number()]).optional(),
  trim: z.boolean().optional(),
  case: z.enum(['upper', 'lower']).optional(),
  map: z.record(z.string(), z.string()).optional(),
  map_default: z.string().optional(),
});

export const fieldRuleSchema = z.strictObject({
  from: sources.optional(),
  const: literal.optional(),
  type: z.enum(FIELD_TYPES).optional(),
  optional: z.boolean().optional(),
  default: literal.optional(),
  trim: z.boolean().optional(),
  case: z.enum(['upper', 'lower']).optional(),
  map: z.record(z.string(), literal).optional(),
  map_default: literal.optional(),
  // datetime
  format: z.enum(['rfc3339', 'epoch_s', 'epoch_ms', 'pattern']).optional(),
  pattern: z.string().min(1).max(64).optional(),
  tz: z.string().min(1).max(64).optional(),
  // boolean
  true_values: z.array(z.string()).min(1).max(20).optional(),
  false_values: z.array(z.string()).min(1).max(20).optional(),
  // money
  value: moneyPartSchema.optional(),
  asset: moneyPartSchema.optional(),
  scale: z.number().int().min(0).max(MAX_SCALE).optional(),
  units: z.enum(['decimal', 'minor']).optional(),
  decimal_separator: oneCharacter.optional(),
  group_separator: oneCharacter.optional(),
});

export const rowFilterSchema = z.strictObject({
  from: source,
  op: z.enum(['in', 'not_in', 'eq', 'ne']),
  values: z.array(z.string()).min(1).max(1000),
});

export const mappingDocumentSchema = z.strictObject({
  mapping_version: z.literal(MAPPING_VERSION),
  family: z.enum(FAMILY_NAMES),
  format: z.discriminatedUnion('kind', [csvFormatSchema, jsonlFormatSchema]),
  fields: z.record(z.string().min(1).max(256), fieldRuleSchema),
  row_filter: rowFilterSchema.optional(),
});

export type MappingDocument = z.infer<typeof mappingDocumentSchema>;
export type CsvFormat = z.infer<typeof csvFormatSchema>;
export type JsonlFormat = z.infer<typeof jsonlFormatSchema>;
export type FieldRule = z.infer<typeof fieldRuleSchema>;
export type MoneyPart = z.infer<typeof moneyPartSchema>;
export type RowFilter = z.infer<typeof rowFilterSchema>;

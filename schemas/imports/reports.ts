import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors/catalog.ts';
import { FAMILY_NAMES } from '../families/index.ts';
import { isDateTime } from '../primitives/timestamp.ts';

// The import reject record (spec: row_no global to the file, chunk_no, code, object_type,
// external_id, message, raw) and the dry-run report built from them.
export const importRejectSchema = z.strictObject({
  // null when the chunk failed before its first data row (in the header, for one).
  row_no: z.number().int().nullable(),
  chunk_no: z.number().int(),
  code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
  object_type: z.enum(FAMILY_NAMES),
  external_id: z.string().nullable(),
  message: z.string(),
  // The source row; withheld when it holds a full card number; null for a chunk-level reject.
  raw: z.string().nullable(),
});

// POST /v1/imports/dry-run: the mapping and a sample of the file (its text, from the start).
export const importDryRunRequestSchema = z.strictObject({
  mapping: z.unknown(),
  sample: z.string(),
});

export const importDryRunReportSchema = z.strictObject({
  family: z.enum(FAMILY_NAMES),
  warnings: z.array(z.string()),
  rows_read: z.number().int(),
  valid: z.number().int(),
  rejected: z.number().int(),
  skipped: z.number().int(),
  rejects: z.array(importRejectSchema),
  // More rejects than the report lists.
  rejects_truncated: z.boolean(),
  // The first valid events as they would be ingested.
  preview: z.array(z.record(z.string(), z.unknown())),
});

export type ImportDryRunReport = z.infer<typeof importDryRunReportSchema>;

// POST /v1/imports: the mapping, the go-live watermark (rows at or after it are live ingest's) and
// optionally the start of the backfill window (default: a configured number of days before it).
export const importCreateRequestSchema = z.strictObject({
  mapping: z.unknown(),
  go_live_at: z.string().meta({ format: 'date-time' }).refine((v) => isDateTime(v), 'must be an RFC 3339 date-time with an offset'),
  backfill_from: z.string().meta({ format: 'date-time' }).refine((v) => isDateTime(v), 'must be an RFC 3339 date-time with an offset').optional(),
});

// POST /v1/imports/{id}/submit: how many chunks the file has (0 .. chunk_count-1).
// The answer to staging a chunk: what the service holds for that chunk number.
export const stagedChunkSchema = z.strictObject({
  chunk_no: z.number().int().nonnegative(),
  bytes: z.number().int().positive(),
  sha256: z.string(),
});
export type StagedChunk = z.infer<typeof stagedChunkSchema>;

export const importSubmitRequestSchema = z.strictObject({
  chunk_count: z.number().int().min(1).max(100_000),
});

const IMPORT_STATES = ['created', 'submitted', 'processing', 'completed', 'failed', 'cancelled'] as const;

export const importViewSchema = z.strictObject({
  import_id: z.string().regex(/^imp_[0-9a-f-]{36}$/),
  family: z.enum(FAMILY_NAMES),
  state: z.enum(IMPORT_STATES),
  go_live_at: z.string(),
  backfill_from: z.string(),
  chunk_count: z.number().int().nullable(),
  chunks_landed: z.number().int(),
  rows_read: z.number().int(),
  accepted: z.number().int(),
  duplicates: z.number().int(),
  rejected: z.number().int(),
  skipped: z.number().int(),
  failure: z.string().nullable(),
  warnings: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  submitted_at: z.string().nullable(),
  completed_at: z.string().nullable(),
});
export type ImportView = z.infer<typeof importViewSchema>;

export const importRejectPageSchema = z.strictObject({
  data: z.array(importRejectSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

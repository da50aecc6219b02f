import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors/catalog.ts';
import { FAMILY_NAMES } from '../families/index.ts';

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

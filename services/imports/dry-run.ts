// POST /v1/imports/dry-run: a mapping and a sample run through exactly what an import does to a
// chunk (dialect, assembly, live validation), with nothing stored and no import created. A mapping
// that does not compile is refused whole, every finding with its path (a bad target path lists the
// nearest real fields).
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { importDryRunRequestSchema, type ImportDryRunReport } from '../../schemas/imports/reports.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import type { ValidationContext } from '../../schemas/validation/validate-item.ts';
import { mapChunk, type MappedRow } from './map-chunk.ts';
import { compileMapping, type CompiledMapping } from './mapping/compile.ts';

const MAX_REJECTS_LISTED = 1000;
const PREVIEW_EVENTS = 5;

export type DryRunOutcome = { ok: true; report: ImportDryRunReport } | { ok: false; code: ErrorCode; detail: string; errors: FieldError[] };

export async function dryRunImport(body: unknown, validation: ValidationContext): Promise<DryRunOutcome> {
  const request = importDryRunRequestSchema.safeParse(body);
  if (!request.success) return { ok: false, code: 'svc:validation/schema', detail: 'the dry-run request is not valid', errors: requestSchemaErrors(request.error) };
  const compiled = compileMapping(request.data.mapping);
  if (!compiled.ok) {
    const errors = compiled.errors.map((e) => ({ ...e, path: `mapping.${e.path}`.replace(/\.$/, '') }));
    return { ok: false, code: 'svc:validation/schema', detail: 'the mapping document is not valid', errors };
  }
  const sample = Buffer.from(request.data.sample, 'utf8');
  const { rows } = mapChunk(compiled.mapping, (async function* () {
    yield sample;
  })(), { chunkNo: 0, firstRowNo: 1 }, { validation });
  const report = emptyReport(compiled.mapping);
  for await (const row of rows) addToReport(report, row);
  return { ok: true, report };
}

export function emptyReport(mapping: CompiledMapping): ImportDryRunReport {
  return { family: mapping.family, warnings: mapping.warnings, rows_read: 0, valid: 0, rejected: 0, skipped: 0, rejects: [], rejects_truncated: false, preview: [] };
}

export function addToReport(report: ImportDryRunReport, row: MappedRow): void {
  if (row.kind === 'rejected') {
    report.rejected += 1;
    if (row.reject.row_no !== null) report.rows_read += 1;
    if (report.rejects.length < MAX_REJECTS_LISTED) report.rejects.push(row.reject);
    else report.rejects_truncated = true;
    return;
  }
  report.rows_read += 1;
  if (row.kind === 'skipped') report.skipped += 1;
  else {
    report.valid += 1;
    if (report.preview.length < PREVIEW_EVENTS) report.preview.push(row.event);
  }
}

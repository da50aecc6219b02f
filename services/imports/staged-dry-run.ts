// The whole-file dry-run of an import: every staged chunk, in order, through exactly what landing
// does (dialect, assembly, live validation, the import's window), with nothing stored. A chunk
// number missing before the last staged one is reported as landing would report it.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { ImportDryRunReport } from '../../schemas/imports/reports.ts';
import type { ValidationContext } from '../../schemas/validation/validate-item.ts';
import { addToReport, emptyReport } from './dry-run.ts';
import type { ImportRow } from './imports.ts';
import { mapChunk } from './map-chunk.ts';
import { compileMapping } from './mapping/compile.ts';
import { outsideWindow } from './window.ts';

export async function dryRunStagedFile(pool: Pool, row: ImportRow & { tenant_id: string }, validation: ValidationContext): Promise<ImportDryRunReport> {
  const compiled = compileMapping(row.mapping);
  if (!compiled.ok) throw new Error(`import ${row.import_id}: its stored mapping no longer compiles`);
  const report = emptyReport(compiled.mapping);
  const { rows: staged } = await pool.query<{ chunk_no: number }>(
    `SELECT chunk_no FROM import_chunks WHERE tenant_id = $1 AND import_id = $2 ORDER BY chunk_no`,
    [row.tenant_id, row.import_id],
  );
  const last = staged.at(-1)?.chunk_no ?? -1;
  const present = new Set(staged.map((s) => s.chunk_no));
  let header: string[] | undefined;
  let nextRowNo = 1;
  for (let chunkNo = 0; chunkNo <= last; chunkNo++) {
    if (!present.has(chunkNo)) {
      addToReport(report, { kind: 'rejected', reject: { row_no: null, chunk_no: chunkNo, code: 'svc:import/invalid_chunk', object_type: row.family, external_id: null, message: 'missing staged object: this chunk was never uploaded', raw: null } });
      continue;
    }
    // One chunk's bytes at a time (each at most the payload cap).
    const { rows } = await pool.query<{ body: Buffer }>(
      `SELECT body FROM import_chunks WHERE tenant_id = $1 AND import_id = $2 AND chunk_no = $3`,
      [row.tenant_id, row.import_id, chunkNo],
    );
    const body = rows[0]?.body;
    if (!body) continue;
    const reading = mapChunk(compiled.mapping, (async function* () {
      yield body;
    })(), { chunkNo, firstRowNo: nextRowNo, more: chunkNo < last, ...(header ? { header } : {}) }, { validation });
    for await (const mapped of reading.rows) {
      const rowNo = mapped.kind === 'rejected' ? mapped.reject.row_no : mapped.rowNo;
      if (rowNo !== null) nextRowNo = Math.max(nextRowNo, rowNo + 1);
      const late = mapped.kind === 'valid' ? outsideWindow(row, mapped.event, mapped) : undefined;
      if (late) {
        addToReport(report, { kind: 'rejected', reject: late });
        continue;
      }
      addToReport(report, mapped);
    }
    if (chunkNo === 0) header = reading.fileHeader();
    // Past a chunk-level problem the chunk's later records may have been counted, unread (as landing does).
    nextRowNo = Math.max(nextRowNo, reading.nextRowNo() ?? 0);
  }
  return report;
}

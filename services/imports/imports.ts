// Imports of a tenant: creation (the mapping compiled and stored with its window), chunk
// staging, submission and the reads of state and rejects. Every statement filters on the tenant.
// The worker (worker.ts) lands submitted imports.
import { createHash } from 'node:crypto';
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Family } from '../../schemas/families/index.ts';
import { importCreateRequestSchema, type ImportView } from '../../schemas/imports/reports.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { compileMapping } from './mapping/compile.ts';
import { dateTimeMs } from '../../schemas/primitives/timestamp.ts';

const DAY_MS = 86_400_000;

export interface ImportRow {
  tenant_id: string;
  import_id: string;
  family: Family;
  mapping: unknown;
  state: ImportView['state'];
  go_live_at: Date;
  backfill_from: Date;
  chunk_count: number | null;
  next_chunk: number;
  next_row_no: bigint;
  file_header: string[] | null;
  rows_read: bigint;
  accepted: bigint;
  duplicates: bigint;
  rejected: bigint;
  skipped: bigint;
  failure: string | null;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
  completed_at: Date | null;
}

const COLUMNS = `tenant_id, import_id, family, mapping, state, go_live_at, backfill_from, chunk_count, next_chunk, next_row_no, file_header,
                 rows_read, accepted, duplicates, rejected, skipped, failure, created_at, updated_at, submitted_at, completed_at`;

export function importView(row: ImportRow, warnings: string[] = []): ImportView {
  return {
    import_id: `${ID_PREFIXES.import}${row.import_id}`,
    family: row.family,
    state: row.state,
    go_live_at: row.go_live_at.toISOString(),
    backfill_from: row.backfill_from.toISOString(),
    chunk_count: row.chunk_count,
    chunks_landed: row.next_chunk,
    rows_read: Number(row.rows_read),
    accepted: Number(row.accepted),
    duplicates: Number(row.duplicates),
    rejected: Number(row.rejected),
    skipped: Number(row.skipped),
    failure: row.failure,
    warnings,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    submitted_at: row.submitted_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

export type CreateOutcome = { kind: 'created'; row: ImportRow; warnings: string[] } | { kind: 'invalid'; errors: FieldError[] };
export type StageOutcome = { kind: 'staged'; chunkNo: number; bytes: number; sha256: string } | { kind: 'not_found' } | { kind: 'not_open' };
export type SubmitOutcome = { kind: 'submitted'; row: ImportRow } | { kind: 'not_found' } | { kind: 'not_open' } | { kind: 'invalid'; errors: FieldError[] };

export class Imports {
  constructor(
    private readonly pool: Pool,
    private readonly settings: { defaultBackfillDays: number },
  ) {}

  async create(tenantId: string, body: unknown, now: Date): Promise<CreateOutcome> {
    const parsed = importCreateRequestSchema.safeParse(body);
    if (!parsed.success) return { kind: 'invalid', errors: requestSchemaErrors(parsed.error) };
    const compiled = compileMapping(parsed.data.mapping);
    if (!compiled.ok) return { kind: 'invalid', errors: compiled.errors.map((e) => ({ ...e, path: `mapping.${e.path}` })) };
    const goLive = new Date(dateTimeMs(parsed.data.go_live_at));
    const backfillFrom = parsed.data.backfill_from ? new Date(dateTimeMs(parsed.data.backfill_from)) : new Date(goLive.getTime() - this.settings.defaultBackfillDays * DAY_MS);
    if (backfillFrom >= goLive) {
      return { kind: 'invalid', errors: [{ path: 'backfill_from', code: 'svc:validation/schema', message: 'must be before go_live_at' }] };
    }
    const { rows } = await this.pool.query<ImportRow>(
      `INSERT INTO imports (tenant_id, import_id, family, mapping, state, go_live_at, backfill_from, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'created', $5, $6, $7, $7) RETURNING ${COLUMNS}`,
      [tenantId, uuidv7(now.getTime()), compiled.mapping.family, JSON.stringify(parsed.data.mapping), goLive, backfillFrom, now],
    );
    return { kind: 'created', row: rows[0]!, warnings: compiled.mapping.warnings };
  }

  async find(tenantId: string, importId: string): Promise<ImportRow | undefined> {
    const { rows } = await this.pool.query<ImportRow>(`SELECT ${COLUMNS} FROM imports WHERE tenant_id = $1 AND import_id = $2`, [tenantId, importId]);
    return rows[0];
  }

  // Stages (or, before submission, replaces) one chunk's bytes.
  async stageChunk(tenantId: string, importId: string, chunkNo: number, body: Buffer, now: Date): Promise<StageOutcome> {
    const sha256 = createHash('sha256').update(body).digest();
    const { rows } = await this.pool.query<{ state: string; staged: boolean | null }>(
      `WITH target AS (SELECT tenant_id, import_id, state FROM imports WHERE tenant_id = $1 AND import_id = $2 FOR UPDATE),
            staged AS (
              INSERT INTO import_chunks (tenant_id, import_id, chunk_no, body, sha256, uploaded_at)
              SELECT tenant_id, import_id, $3, $4, $5, $6 FROM target WHERE state = 'created'
              ON CONFLICT (tenant_id, import_id, chunk_no) DO UPDATE SET body = EXCLUDED.body, sha256 = EXCLUDED.sha256, uploaded_at = EXCLUDED.uploaded_at
              RETURNING 1
            )
       SELECT state, EXISTS (SELECT 1 FROM staged) AS staged FROM target`,
      [tenantId, importId, chunkNo, body, sha256, now],
    );
    const row = rows[0];
    if (!row) return { kind: 'not_found' };
    if (!row.staged) return { kind: 'not_open' };
    return { kind: 'staged', chunkNo, bytes: body.length, sha256: sha256.toString('hex') };
  }

  // Closes the upload: the file is chunks 0 .. chunkCount-1. A chunk not staged is reported by the
  // worker when it reaches it (svc:import/invalid_chunk, missing staged object). A chunk staged at
  // or past chunkCount refuses the submission: landing would drop it without a word (a count
  // given as the last chunk's number, one short).
  async submit(tenantId: string, importId: string, chunkCount: number, now: Date): Promise<SubmitOutcome> {
    const { rows } = await this.pool.query<ImportRow & { submitted: boolean; beyond: number | null }>(
      `WITH beyond AS (
         SELECT min(chunk_no) AS first FROM import_chunks WHERE tenant_id = $1 AND import_id = $2 AND chunk_no >= $3
       ), submitted AS (
         UPDATE imports SET state = 'submitted', chunk_count = $3, submitted_at = $4, updated_at = $4
          WHERE tenant_id = $1 AND import_id = $2 AND state = 'created' AND (SELECT first FROM beyond) IS NULL
          RETURNING ${COLUMNS}
       )
       SELECT ${COLUMNS}, true AS submitted, NULL::int AS beyond FROM submitted
       UNION ALL
       SELECT ${COLUMNS}, false, (SELECT first FROM beyond) FROM imports
        WHERE tenant_id = $1 AND import_id = $2 AND NOT EXISTS (SELECT 1 FROM submitted)`,
      [tenantId, importId, chunkCount, now],
    );
    const found = rows[0];
    if (!found) return { kind: 'not_found' };
    const { submitted, beyond, ...row } = found;
    if (submitted) return { kind: 'submitted', row };
    if (row.state !== 'created') return { kind: 'not_open' };
    return { kind: 'invalid', errors: [{ path: 'chunk_count', code: 'svc:validation/schema', message: `chunk ${beyond} is staged, so the file has more than ${chunkCount} chunks` }] };
  }

  // The staged chunks go in the same statement: a cancelled import keeps none of the file, and a
  // cancel that fails leaves the import as it was, to be cancelled again.
  async cancel(tenantId: string, importId: string, now: Date): Promise<ImportRow | 'not_found' | 'not_open'> {
    const { rows } = await this.pool.query<ImportRow>(
      `WITH cancelled AS (
         UPDATE imports SET state = 'cancelled', updated_at = $3, completed_at = $3
          WHERE tenant_id = $1 AND import_id = $2 AND state IN ('created', 'submitted')
          RETURNING ${COLUMNS}
       ), dropped AS (
         DELETE FROM import_chunks c USING cancelled x WHERE c.tenant_id = x.tenant_id AND c.import_id = x.import_id
       )
       SELECT * FROM cancelled`,
      [tenantId, importId, now],
    );
    if (rows[0]) return rows[0];
    return (await this.find(tenantId, importId)) ? 'not_open' : 'not_found';
  }

  // Rejects in row order, after a position (seq); `limit` rows.
  async rejects(tenantId: string, importId: string, afterSeq: bigint, limit: number) {
    const { rows } = await this.pool.query<{ seq: bigint; row_no: bigint | null; chunk_no: number; code: string; external_id: string | null; message: string; raw: string | null }>(
      `SELECT seq, row_no, chunk_no, code, external_id, message, raw FROM import_rejects
        WHERE tenant_id = $1 AND import_id = $2 AND seq > $3
        ORDER BY seq LIMIT $4`,
      [tenantId, importId, afterSeq, limit],
    );
    return rows;
  }
}

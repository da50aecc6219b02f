// pipelines/imports: lands submitted imports, one chunk per transaction, in chunk order. A chunk's
// rows are read in the mapping's dialect, assembled, validated like live ingest, held to the
// import's window, and committed by the same acceptance statement as ingest (import_id set,
// historical true); rows already landed come back as duplicates. The chunk's rejects, the counts
// after it, the import's position and its import.progress event commit with its events, so a
// worker that stops mid-chunk leaves nothing of it behind and the next one starts it again.
import type { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../platform/clock.ts';
import { WakeablePause } from '../../platform/wakeable-pause.ts';
import { isTransient } from '../../platform/bus/parking/transient.ts';
import { acceptEvents, type PreparedEvent } from '../../platform/inbox/accept-events.ts';
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { contentHash } from '../../platform/json/canonical-json.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { FAMILIES } from '../../schemas/families/index.ts';
import { instantOf } from '../../schemas/primitives/timestamp.ts';
import { enqueueEvents } from '../../services/webhooks/outgoing-events.ts';
import type { ImportRow } from '../../services/imports/imports.ts';
import { mapChunk, readsRowNumber, type ImportReject } from '../../services/imports/map-chunk.ts';
import { compileMapping } from '../../services/imports/mapping/compile.ts';
import { outsideWindow } from '../../services/imports/window.ts';

const LAND_BATCH = 1000;
// Failures of one chunk, other than passing ones, after which its import fails.
const MAX_LANDING_FAILURES = 3;
// Rejects are written as they pile up, so a chunk of bad rows holds at most this many in memory.
const REJECT_BATCH = 1000;

export interface ImportWorkerOptions {
  pool: Pool;
  clock: Clock;
  assets: TenantAssetRegistry;
  futureSkewMs: number;
  pollMs?: number;
  onError?: (error: unknown) => void;
}

interface Counts {
  rowsRead: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  skipped: number;
}

export class ImportWorker {
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly pause = new WakeablePause();

  constructor(private readonly options: ImportWorkerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
  }

  // Lands the next chunk of the oldest waiting import (or completes it). False when none waits, or
  // when landing failed and the worker should pause before trying again.
  async step(): Promise<boolean> {
    return withTransaction(this.options.pool, async (db) => {
      const { rows } = await db.query<ImportRow & { tenant_id: string }>(
        `SELECT tenant_id, import_id, family, mapping, state, go_live_at, backfill_from, chunk_count, next_chunk, next_row_no, file_header,
                rows_read, accepted, duplicates, rejected, skipped, failure, created_at, updated_at, submitted_at, completed_at
           FROM imports WHERE state IN ('submitted', 'processing')
          ORDER BY submitted_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      const job = rows[0];
      if (!job) return false;
      if (job.next_chunk >= (job.chunk_count ?? 0)) {
        await this.finish(db, job, 'completed');
        return true;
      }
      // An unexpected failure (not a row's or a chunk's problem: those are rejects) undoes the
      // chunk. One that passes (a deadlock, a lock or a resource briefly lacking) is only tried
      // again; any other is counted against the chunk, and past a few the import fails, so it
      // never blocks the ones behind it. Either way the worker pauses before trying again.
      await db.query('SAVEPOINT chunk');
      try {
        await this.landChunk(db, job);
      } catch (error) {
        await db.query('ROLLBACK TO SAVEPOINT chunk');
        this.options.onError?.(error);
        if (isTransient(error)) return false;
        const { rows: failed } = await db.query<{ landing_failures: number }>(
          `UPDATE imports SET landing_failures = landing_failures + 1, updated_at = $3 WHERE tenant_id = $1 AND import_id = $2 RETURNING landing_failures`,
          [job.tenant_id, job.import_id, this.options.clock.now()],
        );
        if (failed[0]!.landing_failures < MAX_LANDING_FAILURES) return false;
        await this.finish(db, job, 'failed', `chunk ${job.next_chunk} could not be landed`);
      }
      return true;
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      let worked = false;
      try {
        worked = await this.step();
      } catch (error) {
        this.options.onError?.(error);
      }
      if (!worked && this.running) await this.pause.for(this.options.pollMs ?? 500);
    }
  }

  private async landChunk(db: PoolClient, job: ImportRow & { tenant_id: string }): Promise<void> {
    const now = this.options.clock.now();
    const chunkNo = job.next_chunk;
    const compiled = compileMapping(job.mapping);
    if (!compiled.ok) throw new Error(`import ${job.import_id}: its stored mapping no longer compiles`);
    const counts: Counts = { rowsRead: 0, accepted: 0, duplicates: 0, rejected: 0, skipped: 0 };
    let rejects: ImportReject[] = [];
    // The chunk-level problem that stopped this chunk, if one did.
    let chunkProblem: string | undefined;
    let rejectSeq = Number(job.rejected);
    const flushRejects = async () => {
      if (rejects.length === 0) return;
      const batch = rejects;
      rejects = [];
      counts.rejected += batch.length;
      await this.recordRejects(db, job, rejectSeq, batch);
      rejectSeq += batch.length;
    };
    let nextRowNo = Number(job.next_row_no);
    // Whether the rows after a chunk-level problem were counted all the same.
    let numbered = false;
    let fileHeader = job.file_header ?? undefined;

    const { rows: chunks } = await db.query<{ body: Buffer }>(`SELECT body FROM import_chunks WHERE tenant_id = $1 AND import_id = $2 AND chunk_no = $3`, [job.tenant_id, job.import_id, chunkNo]);
    const body = chunks[0]?.body;
    if (!body) {
      chunkProblem = 'missing staged object: this chunk was never uploaded';
      rejects.push({ row_no: null, chunk_no: chunkNo, code: 'svc:import/invalid_chunk', object_type: job.family, external_id: null, message: chunkProblem, raw: null });
    } else {
      const reading = mapChunk(
        compiled.mapping,
        (async function* () {
          yield body;
        })(),
        { chunkNo, firstRowNo: nextRowNo, more: chunkNo < (job.chunk_count ?? 0) - 1, ...(fileHeader ? { header: fileHeader } : {}) },
        { validation: { registry: await this.options.assets.forTenant(job.tenant_id), nowMs: now.getTime(), futureSkewMs: this.options.futureSkewMs } },
      );
      let batch: Array<{ rowNo: number; source: string; raw: PreparedEvent }> = [];
      // One insert in flight while the next batch is mapped: the worker's CPU and PostgreSQL's
      // overlap on the chunk's one connection, and at most two batches are held.
      let inFlight: Promise<void> = Promise.resolve();
      const record = (landing: typeof batch, outcomes: Awaited<ReturnType<typeof acceptEvents>>) => {
        landing.forEach(({ rowNo, source, raw }, i) => {
          const outcome = outcomes[i]!;
          if (outcome.kind === 'accepted') counts.accepted += 1;
          else if (outcome.kind === 'duplicate') counts.duplicates += 1;
          else {
            const entity = FAMILIES[raw.object].kind === 'entity';
            rejects.push({
              row_no: rowNo,
              chunk_no: chunkNo,
              code: 'svc:sequence/conflict',
              object_type: raw.object,
              external_id: raw.externalId,
              message: entity
                ? 'sequence: this entity version was already received with different content'
                : 'external_id: this fact was already received with different content',
              raw: source,
            });
          }
        });
      };
      const land = async () => {
        await inFlight;
        if (batch.length === 0) return;
        const landing = batch;
        batch = [];
        inFlight = acceptEvents(db, landing.map((b) => b.raw)).then((outcomes) => record(landing, outcomes));
        // Awaited before the next batch or at the end; meanwhile a failure must not go unhandled.
        inFlight.catch(() => undefined);
      };
      for await (const row of reading.rows) {
        if (rejects.length >= REJECT_BATCH) {
          // The rows read before these rejects land first: a landing conflict among them is found
          // by their landing, and must be written before the rejects of later rows (row order).
          await land();
          await inFlight;
          await flushRejects();
        }
        if (row.kind === 'rejected') {
          rejects.push(row.reject);
          if (row.reject.code === 'svc:import/invalid_chunk') chunkProblem = row.reject.message;
          if (row.reject.row_no !== null) {
            counts.rowsRead += 1;
            nextRowNo = Math.max(nextRowNo, row.reject.row_no + 1);
          }
          continue;
        }
        counts.rowsRead += 1;
        nextRowNo = Math.max(nextRowNo, row.rowNo + 1);
        if (row.kind === 'skipped') {
          counts.skipped += 1;
          continue;
        }
        const late = outsideWindow(job, row.event, row);
        if (late) {
          rejects.push(late);
          continue;
        }
        batch.push({
          rowNo: row.rowNo,
          source: row.raw,
          raw: {
            tenantId: job.tenant_id,
            eventId: uuidv7(now.getTime()),
            object: row.object,
            externalId: row.event.external_id,
            sequence: row.event.sequence ?? null,
            rawEvent: Buffer.from(JSON.stringify(row.event), 'utf8'),
            contentHash: contentHash(row.event),
            occurredAt: instantOf(row.event.occurred_at),
            receivedAt: now,
            correlationId: `${ID_PREFIXES.import}${job.import_id}`,
            importId: job.import_id,
            historical: true,
          },
        });
        if (batch.length >= LAND_BATCH) await land();
      }
      await land();
      await inFlight;
      if (chunkNo === 0) fileHeader = reading.fileHeader() ?? fileHeader;
      // Past a chunk-level problem the chunk's later records may have been counted, unread: the
      // next chunk's rows keep their numbers in the file.
      const counted = reading.nextRowNo();
      if (counted !== undefined) {
        nextRowNo = Math.max(nextRowNo, counted);
        numbered = true;
      }
    }
    await flushRejects();
    const { rows: after } = await db.query<ImportRow>(
      `UPDATE imports
          SET state = 'processing', next_chunk = next_chunk + 1, next_row_no = $2, file_header = $3, landing_failures = 0,
              rows_read = rows_read + $4, accepted = accepted + $5, duplicates = duplicates + $6, rejected = rejected + $7, skipped = skipped + $8,
              updated_at = $9
        WHERE tenant_id = $10 AND import_id = $1
        RETURNING import_id, family, rows_read, accepted, duplicates, rejected, skipped, next_chunk, chunk_count`,
      [job.import_id, nextRowNo, fileHeader ?? null, counts.rowsRead, counts.accepted, counts.duplicates, counts.rejected, counts.skipped, now, job.tenant_id],
    );
    await db.query(`DELETE FROM import_chunks WHERE tenant_id = $1 AND import_id = $2 AND chunk_no = $3`, [job.tenant_id, job.import_id, chunkNo]);
    const state = after[0]!;
    await enqueueEvents(db, [{ tenantId: job.tenant_id, type: 'import.progress', data: { ...progressData(state), chunk_no: chunkNo } }], now);
    // A first chunk that yields no row at all (its header or dialect does not fit the mapping)
    // leaves nothing the later chunks could be read against: the import fails.
    const unreadable = chunkProblem;
    const needsHeader = compiled.mapping.csv !== undefined && compiled.mapping.csv.hasHeader && compiled.mapping.csv.columns === undefined;
    if (chunkNo === 0 && counts.rowsRead === 0 && unreadable && needsHeader) await this.finish(db, job, 'failed', `chunk 0: ${unreadable}`);
    // Past a chunk-level problem the rest of the chunk (or a missing chunk) is never read, and,
    // unless its records could still be counted (dialects/types.ts ChunkError), the later chunks'
    // rows are numbered as if it held none. A mapping whose ids take @row_no would then give each later row
    // another id than a clean re-import of the file gives it, and that re-import would land them
    // twice: such an import stops here, to be run again on a fixed file.
    else if (unreadable && !numbered && chunkNo < (job.chunk_count ?? 0) - 1 && readsRowNumber(compiled.mapping)) {
      await this.finish(db, job, 'failed', `chunk ${chunkNo}: ${unreadable}; the rows after it cannot be numbered, and the mapping reads @row_no: fix the file and import it again`);
    }
  }

  private async recordRejects(db: PoolClient, job: { tenant_id: string; import_id: string }, afterSeq: number, rejects: ImportReject[]): Promise<void> {
    // Rows of a batch come in order, and landing conflicts are found a batch later: sorted here so
    // the report reads in row order within each batch (chunk-level rejects without a row go last).
    rejects.sort((a, b) => (a.row_no ?? Number.MAX_SAFE_INTEGER) - (b.row_no ?? Number.MAX_SAFE_INTEGER));
    await db.query(
      `INSERT INTO import_rejects (tenant_id, import_id, seq, row_no, chunk_no, code, external_id, message, raw)
       SELECT $1, $2, $3 + r.i, r.row_no, r.chunk_no, r.code, r.external_id, r.message, r.raw
         FROM json_to_recordset($4::json) AS r(i bigint, row_no bigint, chunk_no int, code text, external_id text, message text, raw text)`,
      [job.tenant_id, job.import_id, afterSeq + 1, JSON.stringify(rejects.map((r, i) => ({ ...r, i })))],
    );
  }

  private async finish(db: PoolClient, job: ImportRow & { tenant_id: string }, ...[state, failure]: ['completed'] | ['failed', string]): Promise<void> {
    const now = this.options.clock.now();
    const { rows } = await db.query<ImportRow>(
      `UPDATE imports SET state = $2, failure = $3, completed_at = $4, updated_at = $4 WHERE tenant_id = $5 AND import_id = $1
        RETURNING import_id, family, rows_read, accepted, duplicates, rejected, skipped, next_chunk, chunk_count`,
      [job.import_id, state, failure ?? null, now, job.tenant_id],
    );
    await db.query(`DELETE FROM import_chunks WHERE tenant_id = $1 AND import_id = $2`, [job.tenant_id, job.import_id]);
    const data = progressData(rows[0]!);
    await enqueueEvents(
      db,
      [state === 'completed' ? { tenantId: job.tenant_id, type: 'import.completed', data } : { tenantId: job.tenant_id, type: 'import.failed', data: { ...data, failure } }],
      now,
    );
  }
}

// The operational payload of import.progress / completed / failed: ids and counts, nothing else.
function progressData(row: Pick<ImportRow, 'import_id' | 'family' | 'rows_read' | 'accepted' | 'duplicates' | 'rejected' | 'skipped' | 'next_chunk' | 'chunk_count'>) {
  return {
    import_id: `${ID_PREFIXES.import}${row.import_id}`,
    family: row.family,
    chunks_landed: row.next_chunk,
    chunk_count: row.chunk_count,
    rows_read: Number(row.rows_read),
    accepted: Number(row.accepted),
    duplicates: Number(row.duplicates),
    rejected: Number(row.rejected),
    skipped: Number(row.skipped),
  };
}

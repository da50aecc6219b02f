import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { parseId } from '../../../platform/ids.ts';
import { dryRunImport } from '../../imports/dry-run.ts';
import { dryRunStagedFile } from '../../imports/staged-dry-run.ts';
import { importView, type Imports } from '../../imports/imports.ts';
import { importCreateRequestContract, importDryRunRequestContract } from '../../../schemas/api-components.ts';
import {
  importDryRunReportSchema,
  importRejectPageSchema,
  importSubmitRequestSchema,
  importViewSchema,
  stagedChunkSchema,
  type StagedChunk,
} from '../../../schemas/imports/reports.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { rawBody, bodyRefusal, readJsonBody } from '../../../platform/http/json-body.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { integer, optionalText, single } from '../../../platform/http/query-schema.ts';
import { csvStream, idParam, invalidQuery, json, notFound as unknownId, problem } from '../http/route-schema.ts';
import { refuseIdempotencyKey } from '../http/no-idempotency-key.ts';
import { NO_BODY_RESPONSES, refuseBody } from '../http/no-body.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';

export interface ImportRouteDeps {
  pool: Pool;
  clock: Clock;
  assets: TenantAssetRegistry;
  cursors: CursorCodec;
  imports: Imports;
  occurredAtFutureSkewS: number;
}

const params = z.object({ id: idParam('imp_') });
// The chunk number is checked by the route after the id, so an unknown import is a 404 first.
const chunkParams = params.extend({ chunk: z.string().meta({ description: 'the chunk number, an integer 0-99999 (0 starts the file)' }) });
const rejectsQuery = z.strictObject({
  format: single(['csv', 'json'] as const, 'must be csv or json').meta({ description: 'csv (the default) or json' }),
  limit: integer({ min: 1, max: 1000, fallback: 100 }).meta({ description: 'json only' }),
  cursor: optionalText({ max: 4096 }).meta({ description: 'json only' }),
});
const unknownImport = unknownId('no such import in this tenant');
const notOpen = problem('svc:import/not_open: the import no longer takes this action');
const REJECT_COLUMNS = ['row_no', 'chunk_no', 'code', 'object_type', 'external_id', 'message', 'raw'] as const;
const CSV_PAGE = 1000;
const MAX_CHUNK_NO = 99_999;

// Historical imports (scope ingest: an import lands events exactly as ingest does, so the same
// credential runs one). The file is uploaded as numbered chunks of whole records (PUT
// /v1/imports/{id}/chunks/{n}, the raw bytes), then submitted; the import worker lands it.
// The dry-runs store nothing; their work is bounded by the payload cap (the sample) or the staged
// chunks, so they are not charged to the rate limit. No import route honours an Idempotency-Key
// (the spec: only the ingest endpoints do), so one is refused: ignored, it let a client retry a
// creation it believed safe and get a second import.
export function registerImportRoutes(app: FastifyInstance, deps: ImportRouteDeps): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const scoped = { config: { scopes: ['ingest'] as const }, preHandler: refuseIdempotencyKey('historical imports') };
  const tags = ['imports'];
  const summary = (what: string) => `${what} (scope ingest)`;
  const notFound = (request: FastifyRequest, reply: FastifyReply) => sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no import with this id in this tenant' });
  const validation = async (tenantId: string) => ({
    registry: await deps.assets.forTenant(tenantId),
    nowMs: deps.clock.now().getTime(),
    futureSkewMs: deps.occurredAtFutureSkewS * 1000,
  });

  // Bodies are read after authentication from the signed bytes (contracts.ts).
  const sampleDryRun = {
    tags,
    summary: summary('Run a mapping over a sample of a file: the reject report, nothing stored, no import created'),
    body: importDryRunRequestContract,
    response: {
      200: json(importDryRunReportSchema, 'counts, rejects (row_no, chunk_no, code, object_type, external_id, message, raw) and the first valid events'),
      400: problem('svc:validation/schema: the request, or the mapping (paths under mapping.; a bad target lists the nearest real fields)'),
      415: problem('the body is not application/json'),
    },
  };
  routes.post('/v1/imports/dry-run', { ...scoped, schema: sampleDryRun }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const outcome = await dryRunImport(body.value, await validation(request.apiKey!.tenantId));
    if (!outcome.ok) return sendProblem(request, reply, outcome.code, { detail: outcome.detail, errors: outcome.errors });
    return outcome.report;
  });

  const create = {
    tags,
    summary: summary('Create an import: its mapping (compiled now), go-live watermark and backfill window'),
    body: importCreateRequestContract,
    response: { 201: json(importViewSchema, 'created; upload its chunks next'), 400: problem('svc:validation/schema (mapping findings under mapping.), or an Idempotency-Key (svc:request/bad_request)') },
  };
  routes.post('/v1/imports', { ...scoped, schema: create }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const outcome = await deps.imports.create(request.apiKey!.tenantId, body.value, deps.clock.now());
    if (outcome.kind === 'invalid') return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the import is not valid', errors: outcome.errors });
    return reply.code(201).send(importView(outcome.row, outcome.warnings));
  });

  const read = {
    tags,
    summary: summary('State and counts: rows read, accepted, duplicates, rejected, skipped by the filter'),
    params,
    response: { 200: json(importViewSchema, 'found'), 404: unknownImport },
  };
  routes.get('/v1/imports/:id', { ...scoped, schema: read }, async (request, reply) => {
    const id = parseId('import', request.params.id);
    const row = id && (await deps.imports.find(request.apiKey!.tenantId, id));
    return row ? importView(row) : notFound(request, reply);
  });

  // The body is the raw bytes of whole records (no JSON): declared for the document only.
  const stage = {
    tags,
    summary: summary('Stage chunk n of the file (the raw bytes of whole records; chunk 0 starts the file); replaces it before submission'),
    params: chunkParams,
    consumes: ['application/octet-stream'],
    body: z.string().meta({ format: 'binary' }),
    response: {
      201: json(stagedChunkSchema, 'staged'),
      400: problem('an empty chunk (svc:import/invalid_chunk) or a bad chunk number'),
      404: unknownImport,
      409: notOpen,
    },
  };
  routes.put('/v1/imports/:id/chunks/:chunk', { ...scoped, schema: stage }, async (request, reply) => {
    const id = parseId('import', request.params.id);
    if (!id) return notFound(request, reply);
    if (!/^(0|[1-9][0-9]{0,4})$/.test(request.params.chunk) || Number(request.params.chunk) > MAX_CHUNK_NO) {
      return sendProblem(request, reply, 'svc:request/invalid_parameter', {
        detail: 'the chunk number is not valid',
        errors: [{ path: 'chunk', code: 'svc:request/invalid_parameter', message: `must be an integer 0-${MAX_CHUNK_NO}` }],
      });
    }
    const body = rawBody(request);
    if (body.length === 0) return sendProblem(request, reply, 'svc:import/invalid_chunk', { detail: 'the chunk is empty' });
    const outcome = await deps.imports.stageChunk(request.apiKey!.tenantId, id, Number(request.params.chunk), body, deps.clock.now());
    switch (outcome.kind) {
      case 'not_found':
        return notFound(request, reply);
      case 'not_open':
        return sendProblem(request, reply, 'svc:import/not_open', { detail: 'chunks are accepted only before the import is submitted' });
      case 'staged':
        return reply.code(201).send({ chunk_no: outcome.chunkNo, bytes: outcome.bytes, sha256: outcome.sha256 } satisfies StagedChunk);
    }
  });

  const fileDryRun = {
    tags,
    summary: summary('Whole-file dry-run over the staged chunks: the reject report, nothing stored'),
    params,
    response: { 200: json(importDryRunReportSchema, 'the report'), 404: unknownImport, 409: notOpen },
  };
  routes.post('/v1/imports/:id/dry-run', { ...scoped, schema: fileDryRun }, async (request, reply) => {
    const id = parseId('import', request.params.id);
    const row = id && (await deps.imports.find(request.apiKey!.tenantId, id));
    if (!row) return notFound(request, reply);
    // Only while the file is still being staged: once landing starts, chunks are consumed.
    if (row.state !== 'created') return sendProblem(request, reply, 'svc:import/not_open', { detail: 'the whole-file dry-run runs before the import is submitted' });
    return dryRunStagedFile(deps.pool, row, await validation(request.apiKey!.tenantId));
  });

  const submit = {
    tags,
    summary: summary('Close the upload (chunks 0 .. chunk_count-1) and queue the import for landing'),
    params,
    body: importSubmitRequestSchema,
    response: { 202: json(importViewSchema, 'submitted'), 400: problem('svc:validation/schema'), 404: unknownImport, 409: notOpen },
  };
  routes.post('/v1/imports/:id/submit', { ...scoped, schema: submit }, async (request, reply) => {
    const id = parseId('import', request.params.id);
    if (!id) return notFound(request, reply);
    const body = readJsonBody(request);
    if (!body.ok) return sendProblem(request, reply, body.code, bodyRefusal(body));
    const parsed = importSubmitRequestSchema.safeParse(body.value);
    if (!parsed.success) return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the submission is not valid', errors: requestSchemaErrors(parsed.error) });
    const outcome = await deps.imports.submit(request.apiKey!.tenantId, id, parsed.data.chunk_count, deps.clock.now());
    switch (outcome.kind) {
      case 'not_found':
        return notFound(request, reply);
      case 'not_open':
        return sendProblem(request, reply, 'svc:import/not_open', { detail: 'the import was already submitted or cancelled' });
      case 'invalid':
        return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the submission is not valid', errors: outcome.errors });
      case 'submitted':
        return reply.code(202).send(importView(outcome.row));
    }
  });

  const cancel = {
    tags,
    summary: summary('Cancel an import not yet landing'),
    params,
    response: { 200: json(importViewSchema, 'cancelled'), ...NO_BODY_RESPONSES, 404: unknownImport, 409: notOpen },
  };
  // Cancelling takes no body, or {}: anything else is refused, not ignored (http/no-body.ts).
  routes.post('/v1/imports/:id/cancel', { ...scoped, schema: cancel }, async (request, reply) => {
    const id = parseId('import', request.params.id);
    if (!id) return notFound(request, reply);
    const refused = refuseBody(request, 'cancel');
    if (refused) return sendProblem(request, reply, refused.code, refused);
    const outcome = await deps.imports.cancel(request.apiKey!.tenantId, id, deps.clock.now());
    if (outcome === 'not_found') return notFound(request, reply);
    if (outcome === 'not_open') return sendProblem(request, reply, 'svc:import/not_open', { detail: 'the import is already being landed or has ended' });
    return importView(outcome);
  });

  // The reject report: CSV streamed page by page (the header the spec gives), or with
  // format=json a page of records and a cursor.
  const rejects = {
    tags,
    summary: summary('The reject report: CSV (row_no,chunk_no,code,object_type,external_id,message,raw), or with format=json a page'),
    params,
    querystring: rejectsQuery,
    response: {
      200: {
        description: 'the rejects in row order',
        content: { 'text/csv': { schema: csvStream }, 'application/json': { schema: importRejectPageSchema } },
      },
      400: invalidQuery,
      404: unknownImport,
    },
  };
  routes.get('/v1/imports/:id/rejects', { ...scoped, schema: rejects }, async (request, reply) => {
    const tenantId = request.apiKey!.tenantId;
    const id = parseId('import', request.params.id);
    const row = id && (await deps.imports.find(tenantId, id));
    if (!row) return notFound(request, reply);
    const { format, limit, cursor: cursorText } = request.query;
    const view = (r: Awaited<ReturnType<Imports['rejects']>>[number]) => ({
      row_no: r.row_no === null ? null : Number(r.row_no),
      chunk_no: r.chunk_no,
      // Written only from the error catalog (services/imports).
      code: r.code as ErrorCode,
      object_type: row.family,
      external_id: r.external_id,
      message: r.message,
      raw: r.raw,
    });

    if (format === 'json') {
      let after = 0n;
      if (cursorText !== undefined) {
        const payload = deps.cursors.decode(cursorText);
        if (!payload || payload.r !== 'import-rejects' || payload.i !== row.import_id || typeof payload.s !== 'string') {
          return sendProblem(request, reply, 'svc:request/invalid_parameter', {
            detail: 'the cursor is not one this service issued for this report',
            errors: [{ path: 'cursor', code: 'svc:request/invalid_parameter', message: 'malformed or altered cursor' }],
          });
        }
        after = BigInt(payload.s);
      }
      const rows = await deps.imports.rejects(tenantId, row.import_id, after, limit + 1);
      const data = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      const last = data.at(-1);
      return { data: data.map(view), has_more: hasMore, ...(hasMore && last ? { next_cursor: deps.cursors.encode({ r: 'import-rejects', i: row.import_id, s: last.seq.toString() }) } : {}) };
    }

    const imports = deps.imports;
    const importId = row.import_id;
    async function* lines() {
      yield `${REJECT_COLUMNS.join(',')}\n`;
      let after = 0n;
      for (;;) {
        const rows = await imports.rejects(tenantId, importId, after, CSV_PAGE);
        for (const r of rows) {
          const record = view(r);
          yield `${REJECT_COLUMNS.map((c) => csvField(record[c])).join(',')}\n`;
        }
        if (rows.length < CSV_PAGE) return;
        after = rows.at(-1)!.seq;
      }
    }
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="rejects-imp_${row.import_id}.csv"`).send(Readable.from(lines()));
  });
}

// RFC 4180 with quotes doubled. A field starting with = + - @ is prefixed with ' so a
// spreadsheet never runs it as a formula.
function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  // Text is always quoted (a spreadsheet splitting on ';' or tab then keeps it one cell).
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${text.replaceAll('"', '""')}"`;
}

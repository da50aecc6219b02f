import { AUTH_FAILURES, idParam, json, jsonSchema, problemResponse, ref, signedRequest } from './openapi-parts.ts';
import { mappingDocumentSchema } from './imports/mapping.ts';
import {
  importCreateRequestSchema,
  importDryRunReportSchema,
  importDryRunRequestSchema,
  importRejectPageSchema,
  importRejectSchema,
  stagedChunkSchema,
  importSubmitRequestSchema,
  importViewSchema,
} from './imports/reports.ts';

// Historical imports in the OpenAPI document (scope ingest).
export function importSchemas() {
  return {
    ImportMapping: jsonSchema(mappingDocumentSchema),
    ImportDryRunRequest: { ...jsonSchema(importDryRunRequestSchema), properties: { mapping: ref('ImportMapping'), sample: { type: 'string' } } },
    ImportReject: jsonSchema(importRejectSchema),
    ImportDryRunReport: jsonSchema(importDryRunReportSchema),
    ImportCreateRequest: { ...jsonSchema(importCreateRequestSchema), properties: { ...(jsonSchema(importCreateRequestSchema).properties as object), mapping: ref('ImportMapping') } },
    ImportSubmitRequest: jsonSchema(importSubmitRequestSchema),
    ImportChunk: jsonSchema(stagedChunkSchema),
    Import: jsonSchema(importViewSchema),
    ImportRejectPage: jsonSchema(importRejectPageSchema),
  };
}

const importId = idParam('id', 'imp_');
const NOT_FOUND = { '404': problemResponse('no such import in this tenant') };
const NOT_OPEN = { '409': problemResponse('svc:import/not_open: the import no longer takes this action') };
const operation = (summary: string, parameters: unknown[], responses: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  summary: `${summary} (scope ingest)`,
  security: signedRequest,
  parameters,
  ...extra,
  responses: { ...responses, ...AUTH_FAILURES },
});

export const IMPORT_PATHS = {
  '/v1/imports': {
    post: operation('Create an import: its mapping (compiled now), go-live watermark and backfill window', [], {
      '201': json(ref('Import'), 'created; upload its chunks next'),
      '400': problemResponse('svc:validation/schema (mapping findings under mapping.)'),
    }, { requestBody: { required: true, content: { 'application/json': { schema: ref('ImportCreateRequest') } } } }),
  },
  '/v1/imports/{id}': {
    get: operation('State and counts: rows read, accepted, duplicates, rejected, skipped by the filter', [importId], { '200': json(ref('Import'), 'found'), ...NOT_FOUND }),
  },
  '/v1/imports/{id}/chunks/{chunk}': {
    put: operation('Stage chunk n of the file (the raw bytes of whole records; chunk 0 starts the file); replaces it before submission', [importId, { name: 'chunk', in: 'path', required: true, schema: { type: 'integer', minimum: 0, maximum: 99999 } }], {
      '201': json(ref('ImportChunk'), 'staged'),
      '400': problemResponse('an empty chunk (svc:import/invalid_chunk) or a bad chunk number'),
      ...NOT_FOUND,
      ...NOT_OPEN,
    }, { requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } } }),
  },
  '/v1/imports/{id}/dry-run': {
    post: operation('Whole-file dry-run over the staged chunks: the reject report, nothing stored', [importId], { '200': json(ref('ImportDryRunReport'), 'the report'), ...NOT_FOUND }),
  },
  '/v1/imports/{id}/submit': {
    post: operation('Close the upload (chunks 0 .. chunk_count-1) and queue the import for landing', [importId], {
      '202': json(ref('Import'), 'submitted'),
      '400': problemResponse('svc:validation/schema'),
      ...NOT_FOUND,
      ...NOT_OPEN,
    }, { requestBody: { required: true, content: { 'application/json': { schema: ref('ImportSubmitRequest') } } } }),
  },
  '/v1/imports/{id}/cancel': {
    post: operation('Cancel an import not yet landing', [importId], { '200': json(ref('Import'), 'cancelled'), ...NOT_FOUND, ...NOT_OPEN }),
  },
  '/v1/imports/{id}/rejects': {
    get: operation('The reject report: CSV (row_no,chunk_no,code,object_type,external_id,message,raw), or with format=json a page', [
      importId,
      { name: 'format', in: 'query', schema: { type: 'string', enum: ['csv', 'json'], default: 'csv' } },
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, description: 'json only' },
      { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'json only' },
    ], {
      '200': { description: 'the rejects in row order', content: { 'text/csv': { schema: { type: 'string' } }, 'application/json': { schema: ref('ImportRejectPage') } } },
      '400': problemResponse('invalid query parameters'),
      ...NOT_FOUND,
    }),
  },
  '/v1/imports/dry-run': {
    post: {
      summary: 'Run a mapping over a sample of a file: the reject report, nothing stored, no import created (scope ingest)',
      security: signedRequest,
      requestBody: { required: true, content: { 'application/json': { schema: ref('ImportDryRunRequest') } } },
      responses: {
        '200': json(ref('ImportDryRunReport'), 'counts, rejects (row_no, chunk_no, code, object_type, external_id, message, raw) and the first valid events'),
        '400': problemResponse('svc:validation/schema: the request, or the mapping (paths under mapping.; a bad target lists the nearest real fields)'),
        ...AUTH_FAILURES,
        '415': problemResponse('the body is not application/json'),
      },
    },
  },
};

import { AUTH_FAILURES, json, jsonSchema, problemResponse, ref, signedRequest } from './openapi-parts.ts';
import { mappingDocumentSchema } from './imports/mapping.ts';
import { importDryRunReportSchema, importDryRunRequestSchema, importRejectSchema } from './imports/reports.ts';

// Historical imports in the OpenAPI document (scope ingest).
export function importSchemas() {
  return {
    ImportMapping: jsonSchema(mappingDocumentSchema),
    ImportDryRunRequest: { ...jsonSchema(importDryRunRequestSchema), properties: { mapping: ref('ImportMapping'), sample: { type: 'string' } } },
    ImportReject: jsonSchema(importRejectSchema),
    ImportDryRunReport: jsonSchema(importDryRunReportSchema),
  };
}

export const IMPORT_PATHS = {
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

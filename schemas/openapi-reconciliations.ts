import { AUTH_FAILURES, idParam, json, jsonSchema, problemResponse, ref, signedRequest } from './openapi-parts.ts';
import { RECONCILIATION_STATUSES, reconciliationPageSchema, reconciliationRequestSchema, reconciliationSchema } from './reconciliations.ts';

// Reconciliations in the OpenAPI document: declared with an ingest key, read with ingest or read.
// No Idempotency-Key (refused with 400).
export function reconciliationSchemas() {
  return {
    ReconciliationRequest: jsonSchema(reconciliationRequestSchema),
    Reconciliation: jsonSchema(reconciliationSchema),
    ReconciliationPage: jsonSchema(reconciliationPageSchema),
  };
}

export const RECONCILIATION_PATHS = {
  '/v1/reconciliations': {
    post: {
      summary: 'Declare a control total and get its first comparison (scope ingest)',
      security: signedRequest,
      requestBody: { required: true, content: { 'application/json': { schema: ref('ReconciliationRequest') } } },
      responses: {
        '201': json(ref('Reconciliation'), 'declared; result and history included'),
        '400': problemResponse('svc:validation/schema, svc:validation/money_scale_mismatch, svc:reconciliation/asset_not_held, or an Idempotency-Key (svc:request/bad_request)'),
        ...AUTH_FAILURES,
        '404': problemResponse('the scope\'s account or party (or the corrected reconciliation) is unknown in this tenant'),
      },
    },
    get: {
      summary: 'Reconciliations, newest first, by opaque cursor (scope ingest or read)',
      security: signedRequest,
      parameters: [
        { name: 'status', in: 'query', schema: { type: 'string', enum: RECONCILIATION_STATUSES } },
        { name: 'from', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'periods ending at or after' },
        { name: 'to', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'periods starting at or before' },
        { name: 'subject', in: 'query', schema: { type: 'string' }, description: 'external_id of the scope\'s account or party' },
        { name: 'subject_kind', in: 'query', schema: { type: 'string', enum: ['tenant', 'account', 'party'] } },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: { '200': json(ref('ReconciliationPage'), 'a page (latest result each)'), '400': problemResponse('invalid query parameters'), ...AUTH_FAILURES },
    },
  },
  '/v1/reconciliations/{id}': {
    get: {
      summary: 'A reconciliation with every distinct result (scope ingest or read)',
      security: signedRequest,
      parameters: [idParam('id', 'rcn_')],
      responses: { '200': json(ref('Reconciliation'), 'found'), ...AUTH_FAILURES, '404': problemResponse('no such reconciliation in this tenant') },
    },
  },
};

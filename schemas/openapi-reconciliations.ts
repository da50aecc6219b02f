import { AUTH_FAILURES, idParam, json, jsonSchema, problemResponse, ref, signedRequest } from './openapi-parts.ts';
import {
  acknowledgeRequestSchema,
  BREAK_STATES,
  breakPageSchema,
  breakSchema,
  commentRequestSchema,
  differenceItemPageSchema,
  resolveRequestSchema,
} from './reconciliation-breaks.ts';
import { expectationListSchema, expectationRequestSchema, expectationSchema } from './reconciliation-expectations.ts';
import { RECONCILIATION_STATUSES, reconciliationPageSchema, reconciliationRequestSchema, reconciliationSchema } from './reconciliations.ts';

// Reconciliations in the OpenAPI document: declared with an ingest key, read with ingest or read.
// No Idempotency-Key (refused with 400).
export function reconciliationSchemas() {
  return {
    ReconciliationRequest: jsonSchema(reconciliationRequestSchema),
    Reconciliation: jsonSchema(reconciliationSchema),
    ReconciliationPage: jsonSchema(reconciliationPageSchema),
    ReconciliationItemPage: jsonSchema(differenceItemPageSchema),
    ReconciliationBreak: jsonSchema(breakSchema),
    ReconciliationBreakPage: jsonSchema(breakPageSchema),
    BreakAcknowledgeRequest: jsonSchema(acknowledgeRequestSchema),
    BreakCommentRequest: jsonSchema(commentRequestSchema),
    BreakResolveRequest: jsonSchema(resolveRequestSchema),
    ReconciliationExpectationRequest: jsonSchema(expectationRequestSchema),
    ReconciliationExpectation: jsonSchema(expectationSchema),
    ReconciliationExpectationList: jsonSchema(expectationListSchema),
  };
}

export const RECONCILIATION_PATHS = {
  '/v1/reconciliations': {
    post: {
      summary: 'Declare a control total and get its first comparison (scope ingest)',
      security: signedRequest,
      requestBody: { required: true, content: { 'application/json': { schema: ref('ReconciliationRequest') } } },
      responses: {
        '200': json(ref('Reconciliation'), 'the declaration already made with this customer_reference and the same content'),
        '201': json(ref('Reconciliation'), 'declared; result and history included'),
        '400': problemResponse('svc:validation/schema, svc:validation/money_scale_mismatch, svc:reconciliation/asset_not_held, or an Idempotency-Key (svc:request/bad_request)'),
        ...AUTH_FAILURES,
        '404': problemResponse('the scope\'s account or party (or the corrected reconciliation, or the import) is unknown in this tenant'),
        '409': problemResponse('svc:reconciliation/reference_conflict: the customer_reference names a declaration of other content'),
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
  '/v1/reconciliations/{id}/items': {
    get: {
      summary: 'Every difference item of a reconciliation, paged, or all as CSV (scope ingest or read)',
      security: signedRequest,
      parameters: [
        idParam('id', 'rcn_'),
        { name: 'format', in: 'query', schema: { type: 'string', enum: ['json', 'csv'], default: 'json' }, description: 'csv: every item, RFC 4180, with a header row' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'a page of items, or the CSV', content: { 'application/json': { schema: ref('ReconciliationItemPage') }, 'text/csv': { schema: { type: 'string' } } } },
        '400': problemResponse('invalid query parameters'),
        ...AUTH_FAILURES,
        '404': problemResponse('no such reconciliation in this tenant'),
      },
    },
  },
  '/v1/reconciliation-breaks': {
    get: {
      summary: 'Breaks, newest first, by opaque cursor (scope ingest or read)',
      security: signedRequest,
      parameters: [
        { name: 'state', in: 'query', schema: { type: 'string', enum: BREAK_STATES } },
        { name: 'reconciliation_id', in: 'query', schema: { type: 'string' }, description: 'rcn_<uuid>' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: { '200': json(ref('ReconciliationBreakPage'), 'a page'), '400': problemResponse('invalid query parameters'), ...AUTH_FAILURES },
    },
  },
  '/v1/reconciliation-breaks/{id}': {
    get: {
      summary: 'A break with who acknowledged, commented on and resolved it, and when (scope ingest or read)',
      security: signedRequest,
      parameters: [idParam('id', 'rbk_')],
      responses: { '200': json(ref('ReconciliationBreak'), 'found'), ...AUTH_FAILURES, '404': problemResponse('no such break in this tenant') },
    },
  },
  '/v1/reconciliation-expectations': {
    post: {
      summary: 'Expect a declaration every UTC day for a scope and asset, due minutes after the day ends (scope ingest)',
      security: signedRequest,
      requestBody: { required: true, content: { 'application/json': { schema: ref('ReconciliationExpectationRequest') } } },
      responses: {
        '201': json(ref('ReconciliationExpectation'), 'expected from the day in progress on'),
        '400': problemResponse('svc:validation/schema, or an Idempotency-Key (svc:request/bad_request)'),
        ...AUTH_FAILURES,
        '409': problemResponse('svc:reconciliation/expectation_exists: this scope and asset are already expected'),
      },
    },
    get: {
      summary: 'The expected declarations (scope ingest or read)',
      security: signedRequest,
      responses: { '200': json(ref('ReconciliationExpectationList'), 'every expectation of the tenant'), ...AUTH_FAILURES },
    },
  },
  '/v1/reconciliation-expectations/{id}': {
    delete: {
      summary: 'Stop expecting a declaration (scope ingest)',
      security: signedRequest,
      parameters: [idParam('id', 'rce_')],
      responses: { '204': { description: 'no longer expected' }, ...AUTH_FAILURES, '404': problemResponse('no such expectation in this tenant') },
    },
  },
  ...breakAction('acknowledge', 'Acknowledge an open break, with an optional note kept as a comment (scope ingest)', 'BreakAcknowledgeRequest'),
  ...breakAction('comments', 'Comment on a break in any state (scope ingest)', 'BreakCommentRequest'),
  ...breakAction('resolve', 'Resolve an open or acknowledged break, saying how (scope ingest)', 'BreakResolveRequest'),
};

function breakAction(action: string, summary: string, request: string) {
  return {
    [`/v1/reconciliation-breaks/{id}/${action}`]: {
      post: {
        summary,
        security: signedRequest,
        parameters: [idParam('id', 'rbk_')],
        requestBody: { required: true, content: { 'application/json': { schema: ref(request) } } },
        responses: {
          '200': json(ref('ReconciliationBreak'), 'the break after the action'),
          '400': problemResponse('svc:validation/schema, or an Idempotency-Key (svc:request/bad_request)'),
          ...AUTH_FAILURES,
          '404': problemResponse('no such break in this tenant'),
          '409': problemResponse('svc:reconciliation/break_state: the break\'s state does not take this action'),
        },
      },
    },
  };
}

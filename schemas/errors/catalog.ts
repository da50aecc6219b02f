// The governed error codes: each defined once, with its HTTP status and title. Clients branch on
// the code, never on detail. Codes are never repurposed; new ones are only ever added.
// The first block is the codes the interface spec shows; the second block is codes of ours for
// situations the spec leaves open (see docs/decisions/0003-error-codes.md).
export const ERROR_CATALOG = {
  'svc:validation/schema': { status: 400, title: 'The payload does not match the schema' },
  'svc:validation/unsupported_schema_version': { status: 400, title: 'Unsupported schema version' },
  'svc:validation/timestamp_out_of_range': { status: 400, title: 'Timestamp out of range' },
  'svc:validation/money_scale_mismatch': { status: 400, title: 'Money scale does not match the asset registry' },
  'svc:validation/pan_detected': { status: 400, title: 'A full card number was found in the payload' },
  'svc:auth/unauthenticated': { status: 401, title: 'Authentication required' },
  'svc:auth/timestamp_skew': { status: 401, title: 'Request timestamp malformed or outside the allowed skew' },
  'svc:auth/invalid_signature': { status: 401, title: 'Invalid signature' },
  'svc:auth/nonce_replayed': { status: 401, title: 'Nonce already used' },
  'svc:auth/insufficient_scope': { status: 403, title: 'The credential lacks the required scope' },
  'svc:sequence/conflict': { status: 409, title: 'Conflicting resubmission' },
  'svc:idempotency/key_conflict': { status: 409, title: 'Idempotency-Key reused with a different body' },
  'svc:request/payload_too_large': { status: 413, title: 'Request body too large' },
  'svc:batch/too_large': { status: 413, title: 'Too many events in the batch' },
  'svc:rate_limit/exceeded': { status: 429, title: 'Rate limit exceeded' },
  'svc:import/invalid_chunk': { status: 400, title: 'Invalid import chunk' },
  'svc:webhook/test_timeout': { status: 504, title: 'Webhook test result not observed in time' },

  'svc:auth/unsupported_scheme': { status: 401, title: 'Signature scheme not supported' },
  'svc:request/malformed_json': { status: 400, title: 'The body is not valid JSON' },
  'svc:request/unsupported_media_type': { status: 415, title: 'Unsupported media type' },
  'svc:request/bad_request': { status: 400, title: 'The request could not be understood' },
  'svc:request/invalid_parameter': { status: 400, title: 'Invalid query parameter' },
  'svc:request/not_found': { status: 404, title: 'No such route' },
  'svc:resource/not_found': { status: 404, title: 'No such resource in this tenant' },
  'svc:internal/error': { status: 500, title: 'Internal error' },
  'svc:webhook/destination_refused': { status: 400, title: 'The webhook destination is not allowed' },
  'svc:webhook/event_not_deliverable': { status: 400, title: 'An event type cannot be delivered on this channel' },
  'svc:webhook/endpoint_inactive': { status: 409, title: 'The webhook endpoint is disabled or deleted' },
  'svc:reconciliation/asset_not_held': { status: 400, title: 'The reconciliation\'s scope holds no such asset' },
  'svc:import/not_open': { status: 409, title: 'The import no longer takes this action' },
  'svc:webhook/endpoint_failed': { status: 502, title: 'The webhook endpoint did not accept the test delivery' },
  'svc:console/invalid_credentials': { status: 401, title: 'Unknown tenant, email or password' },
  'svc:console/unauthenticated': { status: 401, title: 'No valid console session' },
  'svc:console/csrf_failed': { status: 403, title: 'Missing or wrong CSRF token' },
  'svc:console/password_change_required': { status: 403, title: 'The password must be changed first' },
  'svc:console/locked': { status: 423, title: 'The console user is locked out after repeated failed logins' },
  'svc:reconciliation/reference_conflict': { status: 409, title: 'The customer reference already names a different declaration' },
  'svc:reconciliation/break_state': { status: 409, title: 'The break is not in a state that takes this action' },
  'svc:reconciliation/expectation_exists': { status: 409, title: 'Declarations of this scope and asset are already expected' },
  'svc:service/unavailable': { status: 503, title: 'A store the service depends on does not answer; retry later' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

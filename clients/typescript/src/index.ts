// The TypeScript SDK of the financial-crime control service.
export { SvcClient } from './client.ts';
export type { ClientOptions, IngestOptions, RequestOptions, RetryNotice, ResponseMeta, RateLimitState, WithResponse } from './http.ts';
export { SvcError, SvcApiError, SvcConnectionError, SvcResponseError, type ProblemCode, type FieldError, type ConnectionFailure } from './errors.ts';
export { PageIterator, type Page, type Filters } from './pagination.ts';
export { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES, type RetryPolicy } from './retry.ts';
export { signRequest, canonicalString, isKeySecret, SIGNING_SCHEME } from './signing.ts';
export * from './webhooks.ts';
export type { ValidateRequest } from './resources/ingest.ts';
export type { CanonicalView, EntityView, MovementView } from './resources/canonical.ts';
export type * from './generated/api-types.ts';

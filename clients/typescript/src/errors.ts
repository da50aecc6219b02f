import type { ProblemDetails } from './generated/api-types.ts';

/** A governed error code, as the service's problem documents carry it. */
export type ProblemCode = ProblemDetails['code'];
export type FieldError = ProblemDetails['errors'][number];

/** Every error the SDK throws is one of these; branch on the class, then on `code`. */
export abstract class SvcError extends Error {
  abstract readonly code: string;
}

/**
 * The service answered with a status the call does not expect. When the body is a governed
 * problem document (application/problem+json) `problem` holds it and `code` is its governed code;
 * otherwise (a proxy's error page, say) `problem` is undefined and `code` is `http_<status>`.
 */
export class SvcApiError extends SvcError {
  readonly code: ProblemCode | `http_${number}`;
  readonly status: number;
  readonly problem: ProblemDetails | undefined;
  /** Field-level problems with their paths (`event.data.amount.value`); empty when none. */
  readonly errors: FieldError[];
  /** The start of the body when it is not a problem document (a proxy's error page, say). */
  readonly bodyExcerpt: string | undefined;
  /** The Retry-After the service sent, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  /** How many attempts the call made, retries included. */
  readonly attempts: number;
  /** The Idempotency-Key sent (the SDK's own when the caller gave none): send it again to retry the same request. */
  readonly idempotencyKey: string | undefined;
  readonly headers: Headers;

  constructor(init: {
    status: number;
    problem: ProblemDetails | undefined;
    bodyExcerpt: string;
    headers: Headers;
    retryAfterMs: number | undefined;
    attempts: number;
    idempotencyKey: string | undefined;
    method: string;
    path: string;
  }) {
    const code = init.problem?.code ?? (`http_${init.status}` as const);
    const detail = init.problem?.detail ?? init.bodyExcerpt;
    super(`${init.method} ${init.path}: ${init.status} ${code}${detail ? `: ${detail}` : ''}`);
    this.name = 'SvcApiError';
    this.code = code;
    this.status = init.status;
    this.problem = init.problem;
    this.errors = init.problem?.errors ?? [];
    this.bodyExcerpt = init.problem ? undefined : init.bodyExcerpt;
    this.retryAfterMs = init.retryAfterMs;
    this.attempts = init.attempts;
    this.idempotencyKey = init.idempotencyKey;
    this.headers = init.headers;
  }
}

export type ConnectionFailure = 'timeout' | 'refused' | 'reset' | 'dns' | 'other';

/** No HTTP answer at all: the connection was refused or reset, or the attempt timed out. */
export class SvcConnectionError extends SvcError {
  readonly code: `connection_${ConnectionFailure}`;
  readonly failure: ConnectionFailure;
  readonly attempts: number;
  /**
   * The Idempotency-Key sent (the SDK's own when the caller gave none). The request may have been
   * accepted before the connection failed: retry it with this key, and the service answers with
   * the first response instead of taking it twice.
   */
  readonly idempotencyKey: string | undefined;

  constructor(init: { failure: ConnectionFailure; message: string; attempts: number; idempotencyKey: string | undefined; cause: unknown }) {
    super(init.message, { cause: init.cause });
    this.name = 'SvcConnectionError';
    this.failure = init.failure;
    this.code = `connection_${init.failure}`;
    this.attempts = init.attempts;
    this.idempotencyKey = init.idempotencyKey;
  }
}

/** A success status whose body is not what the call expects (not JSON, say). */
export class SvcResponseError extends SvcError {
  readonly code = 'unexpected_response';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SvcResponseError';
  }
}

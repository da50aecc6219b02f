// `svc import` talks to the public API through the project's TypeScript SDK
// (clients/typescript): this file holds only what the CLI adds to it, namely its retry policy,
// its retry notices and how problems are worded for the operator.
//
// Retrying follows the SDK, which follows the spec's retry guidance: a request is tried again
// (429, 500, 502, 503, 504, transport failures) only when repeating it is harmless. The CLI marks
// reads (retryReads: status polls, the reject report), chunk uploads (the same bytes replace the
// same chunk) and the whole-file dry-run (nothing is stored) as such; the keyless writes (create,
// submit, cancel) are never retried, not even on 429.
import { SvcApiError, SvcClient, type ClientOptions, type RetryNotice, type RetryPolicy } from '../../../clients/typescript/src/index.ts';

export interface ImportCredentials {
  url: string;
  keyId: string;
  keySecret: string;
}

/** Up to five attempts, full-jitter backoff from 0.5 s, never sooner than Retry-After (up to 2 min). */
const CLI_RETRY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 120_000 };

/** Per attempt (a 3 MiB chunk over a slow link); the dry-run has none, the reject download bounds its headers only. */
const ATTEMPT_TIMEOUT_MS = 120_000;

/** For tests: the fetch, sleep and randomness the SDK uses. */
export type ClientTestHooks = Pick<ClientOptions, 'fetch' | 'sleep' | 'random'>;

/** The SDK client `svc import` uses; `note` gets one line per retry. */
export function importClient(credentials: ImportCredentials, note: (line: string) => void, hooks: ClientTestHooks = {}): SvcClient {
  return new SvcClient({
    baseUrl: credentials.url,
    keyId: credentials.keyId,
    secret: credentials.keySecret,
    appInfo: 'svc-cli import',
    retry: CLI_RETRY,
    retryReads: true,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    onRetry: (notice) => note(retryNotice(notice)),
    ...hooks,
  });
}

/** `PUT /v1/imports/imp_1/chunks/3: HTTP 503, retrying in 1.2 s (attempt 2)`. */
export function retryNotice(notice: RetryNotice): string {
  // A transport failure's reason already starts with the method and path.
  const prefix = `${notice.method} ${notice.path}: `;
  const reason = notice.reason.startsWith(prefix) ? notice.reason.slice(prefix.length) : notice.reason;
  return `${prefix}${reason}, retrying in ${(notice.delayMs / 1000).toFixed(1)} s (attempt ${notice.attempt + 1})`;
}

/**
 * An error as lines for the operator: for a problem document `code: detail`, then one line per
 * field error with its path; for anything else (a proxy's error page, a connection failure) its
 * message, which names the request.
 */
export function describeError(error: Error): string[] {
  if (error instanceof SvcApiError && error.problem) {
    const head = `${error.code}: ${error.problem.detail || error.problem.title || `HTTP ${error.status}`}`;
    return [head, ...error.errors.map((e) => `  ${e.path || '(body)'}: ${e.message}${e.code && e.code !== error.code ? ` (${e.code})` : ''}`)];
  }
  return [error.message];
}

// The spec's retry guidance, as pure functions:
// - retry 429, 500, 502, 503, 504 and transport failures, and only when the request carried an
//   Idempotency-Key (the service then answers a repeat with the stored result, so nothing is done
//   twice);
// - never 400, 403, 409 or 413 (nor anything else), and never a keyless write;
// - exponential backoff with full jitter, never sooner than the service's Retry-After.

export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. */
  maxRetries: number;
  /** The first retry waits a random time up to this; each further retry doubles the ceiling. */
  baseDelayMs: number;
  /** The ceiling never grows past this. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is returned to the caller. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 };

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

export interface RetryableRequest {
  method: string;
  idempotencyKey: string | undefined;
  /** The caller's own statement that repeating this request is harmless (see RequestOptions). */
  safeToRepeat: boolean;
}

/** Whether a failed attempt of this request may be tried again at all. */
export function mayRepeat(request: RetryableRequest): boolean {
  return request.idempotencyKey !== undefined || request.safeToRepeat;
}

/** Whether an HTTP answer is worth another attempt (given the request may be repeated). */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110: IMF-fixdate, or the
 * obsolete RFC 850 and asctime forms); undefined when absent or unreadable. Only those forms are
 * read: Date.parse alone would take "abc 2030" for a date years away.
 */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = httpDateMs(text);
  return at === undefined ? undefined : Math.max(0, at - nowMs);
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

function httpDateMs(text: string): number | undefined {
  let at: number;
  if (IMF_FIXDATE.test(text) || RFC_850.test(text)) at = Date.parse(text);
  // asctime carries no zone; HTTP dates are always GMT.
  else if (ASCTIME.test(text)) at = Date.parse(`${text} GMT`);
  else return undefined;
  return Number.isNaN(at) ? undefined : at;
}

/**
 * How long to wait before retry number `retry` (1 for the first retry): a uniformly random time
 * up to min(maxDelayMs, baseDelayMs·2^(retry−1)) (full jitter), but never less than the service's
 * Retry-After. undefined when the Retry-After is longer than the policy will wait.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number, retryAfter: number | undefined, random: () => number): number | undefined {
  if (retryAfter !== undefined && retryAfter > policy.maxRetryAfterMs) return undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jitter = Math.floor(random() * ceiling);
  return retryAfter === undefined ? jitter : Math.max(retryAfter, jitter);
}

// When a failed delivery is tried again: exponential backoff with full jitter (a random delay
// between nothing and min(cap, base * 2^(attempt - 1)), so endpoints coming back up are not hit
// by every worker at once), never earlier than the endpoint's Retry-After, never sooner than a
// second. Retries continue until the delivery's deadline (created + the retry horizon, at least
// 24 h): the last retry is placed at the deadline itself, and a failure at or after the deadline
// dead-letters the delivery. So every delivery is tried for the whole horizon.
export interface RetryPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 10_000, capMs: 60 * 60_000 };
const MIN_DELAY_MS = 1000;

export function nextAttemptAt(input: {
  // The attempt that just failed, from 1.
  attempt: number;
  now: Date;
  deadline: Date;
  retryAfterMs?: number;
  random: () => number;
  policy?: RetryPolicy;
}): Date | 'dead_letter' {
  const { attempt, now, deadline } = input;
  if (now.getTime() >= deadline.getTime()) return 'dead_letter';
  const policy = input.policy ?? DEFAULT_RETRY_POLICY;
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = Math.floor(input.random() * ceiling);
  const delay = Math.max(jittered, input.retryAfterMs ?? 0, MIN_DELAY_MS);
  return new Date(Math.min(now.getTime() + delay, deadline.getTime()));
}

// Retry-After as delay-seconds or an HTTP-date; undefined when absent or unreadable.
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^[0-9]{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP-date names its day and month; bare numbers of other shapes are not dates.
  if (!/^[A-Za-z]{3}, /.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

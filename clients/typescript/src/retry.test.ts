// The retry guidance as pure functions: which requests may be repeated, which answers are worth
// another attempt, how long to wait. The end-to-end behaviour is in test/retry.test.ts.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, isRetryableStatus, mayRepeat, RETRYABLE_STATUSES, retryAfterMs, retryDelayMs, type RetryPolicy } from './retry.ts';

const policy: RetryPolicy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 10_000 };
const NOW = Date.parse('2026-09-01T12:00:00Z');
// Just below 1: the top of the jitter range. Math.random never returns 1.
const TOP = () => 0.999_999;
const BOTTOM = () => 0;

describe('isRetryableStatus', () => {
  it.each([429, 500, 502, 503, 504])('retries %i', (status) => {
    expect(isRetryableStatus(status)).toBe(true);
  });

  // 400, 403, 409 and 413 are named by the guidance; the others because a repeat cannot change
  // the answer (401: the same signature fails again; 404, 422: the same request, the same verdict).
  it.each([200, 201, 202, 204, 301, 400, 401, 403, 404, 409, 413, 415, 422, 501, 505, 599])('never retries %i', (status) => {
    expect(isRetryableStatus(status)).toBe(false);
  });

  it('exports exactly the statuses of the guidance', () => {
    expect([...RETRYABLE_STATUSES].sort()).toEqual([429, 500, 502, 503, 504]);
  });
});

describe('mayRepeat', () => {
  it('repeats a request that carries an Idempotency-Key, whatever its method', () => {
    for (const method of ['POST', 'PUT', 'GET']) expect(mayRepeat({ method, idempotencyKey: 'k-1', safeToRepeat: false })).toBe(true);
  });

  it('never repeats a keyless write', () => {
    for (const method of ['POST', 'PUT', 'DELETE']) expect(mayRepeat({ method, idempotencyKey: undefined, safeToRepeat: false })).toBe(false);
  });

  // GETs are keyless too: the SDK retries them only on the client's retryReads, which it passes
  // as safeToRepeat.
  it('does not repeat a keyless GET unless told it is safe', () => {
    expect(mayRepeat({ method: 'GET', idempotencyKey: undefined, safeToRepeat: false })).toBe(false);
    expect(mayRepeat({ method: 'GET', idempotencyKey: undefined, safeToRepeat: true })).toBe(true);
  });

  it("repeats a keyless write when the caller states it is harmless (safeToRepeat)", () => {
    expect(mayRepeat({ method: 'PUT', idempotencyKey: undefined, safeToRepeat: true })).toBe(true);
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds', () => {
    expect(retryAfterMs('0', NOW)).toBe(0);
    expect(retryAfterMs('1', NOW)).toBe(1_000);
    expect(retryAfterMs('120', NOW)).toBe(120_000);
    expect(retryAfterMs(' 7 ', NOW)).toBe(7_000);
  });

  it('reads an HTTP date (IMF-fixdate) as the time left until then', () => {
    expect(retryAfterMs('Tue, 01 Sep 2026 12:00:05 GMT', NOW)).toBe(5_000);
    expect(retryAfterMs(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
  });

  it('reads the obsolete RFC 850 date form recipients must still accept (RFC 9110 5.6.7)', () => {
    expect(retryAfterMs('Tuesday, 01-Sep-26 12:00:05 GMT', NOW)).toBe(5_000);
  });

  // asctime carries no zone, but HTTP dates are always GMT: the client's own time zone must not
  // shift it (Date.parse alone reads it as local time). Node applies a TZ change at once.
  it("reads the obsolete asctime date form as GMT whatever the client's time zone", () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect(retryAfterMs('Tue Sep  1 12:00:05 2026', NOW)).toBe(5_000);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('reads a date already past as no wait at all', () => {
    expect(retryAfterMs('Tue, 01 Sep 2026 11:59:00 GMT', NOW)).toBe(0);
  });

  it('is undefined when there is no header', () => {
    expect(retryAfterMs(null, NOW)).toBeUndefined();
  });

  // Neither delay-seconds nor an HTTP date: ignored, so the retry falls back to plain backoff.
  // Date.parse alone is not a parser for this: it reads "abc 2030" as 1 January 2030 (years
  // away, so the SDK would give up instead of retrying) and "1.5" or "-5" as dates in 2001.
  it.each(['', 'soon', '5s', '1e3', 'Infinity', '1.5', '-5', 'abc 2030'])('is undefined for the unreadable value %j', (value) => {
    expect(retryAfterMs(value, NOW)).toBeUndefined();
  });
});

describe('retryDelayMs (full jitter: uniform in [0, min(maxDelayMs, baseDelayMs·2^(retry−1))))', () => {
  it('stays just under the ceiling for a random value just under 1, doubling per retry up to maxDelayMs', () => {
    const delays = [1, 2, 3, 4, 5, 6].map((retry) => retryDelayMs(policy, retry, undefined, TOP));
    expect(delays).toEqual([99, 199, 399, 799, 999, 999]);
  });

  it('is 0 for a random value of 0', () => {
    for (const retry of [1, 2, 5, 30]) expect(retryDelayMs(policy, retry, undefined, BOTTOM)).toBe(0);
  });

  it('scales the ceiling by the random value', () => {
    expect(retryDelayMs(policy, 3, undefined, () => 0.5)).toBe(200);
    expect(retryDelayMs(policy, 1, undefined, () => 0.25)).toBe(25);
  });

  it('keeps every delay within [0, ceiling) over many random values', () => {
    for (let retry = 1; retry <= 8; retry++) {
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
      for (let i = 0; i < 200; i++) {
        const delay = retryDelayMs(policy, retry, undefined, Math.random)!;
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });

  it('does not overflow the cap however many retries', () => {
    expect(retryDelayMs(policy, 2_000, undefined, TOP)).toBe(999);
  });

  it('follows the default policy: 500 ms doubling to 20 s', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((retry) => retryDelayMs(DEFAULT_RETRY_POLICY, retry, undefined, TOP));
    expect(delays).toEqual([499, 999, 1_999, 3_999, 7_999, 15_999, 19_999, 19_999]);
  });

  it('never waits less than Retry-After', () => {
    expect(retryDelayMs(policy, 1, 3_000, BOTTOM)).toBe(3_000);
    expect(retryDelayMs(policy, 1, 3_000, TOP)).toBe(3_000);
    expect(retryDelayMs(policy, 1, 0, BOTTOM)).toBe(0);
  });

  it('waits the jitter when it is longer than a short Retry-After', () => {
    expect(retryDelayMs(policy, 4, 50, TOP)).toBe(799);
  });

  it('waits up to maxRetryAfterMs, and not at all beyond it (undefined: the error goes to the caller)', () => {
    expect(retryDelayMs(policy, 1, 10_000, BOTTOM)).toBe(10_000);
    expect(retryDelayMs(policy, 1, 10_001, BOTTOM)).toBeUndefined();
  });
});

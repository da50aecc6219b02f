import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, nextAttemptAt, parseRetryAfter } from './retry-schedule.ts';

const now = new Date('2026-09-01T12:00:00Z');
const deadline = new Date('2026-09-02T12:00:00Z');
const after = (at: Date | 'dead_letter') => (at === 'dead_letter' ? at : at.getTime() - now.getTime());

describe('retry schedule', () => {
  it('draws a full-jitter delay below an exponential ceiling that stops at the cap', () => {
    // random() just below 1 shows the ceiling; 0.5 half of it.
    expect(after(nextAttemptAt({ attempt: 1, now, deadline, random: () => 0.999999 }))).toBe(9_999);
    expect(after(nextAttemptAt({ attempt: 3, now, deadline, random: () => 0.5 }))).toBe(20_000);
    expect(after(nextAttemptAt({ attempt: 12, now, deadline, random: () => 0.5 }))).toBe(DEFAULT_RETRY_POLICY.capMs / 2);
    expect(after(nextAttemptAt({ attempt: 400, now, deadline, random: () => 0.5 }))).toBe(DEFAULT_RETRY_POLICY.capMs / 2);
  });

  it('never retries sooner than a second, however the draw falls', () => {
    expect(after(nextAttemptAt({ attempt: 1, now, deadline, random: () => 0 }))).toBe(1000);
  });

  it('honours Retry-After when it asks for longer than the draw', () => {
    expect(after(nextAttemptAt({ attempt: 1, now, deadline, random: () => 0.5, retryAfterMs: 120_000 }))).toBe(120_000);
    expect(after(nextAttemptAt({ attempt: 1, now, deadline, random: () => 0.5, retryAfterMs: 1_000 }))).toBe(5_000);
  });

  it('places the last retry at the deadline and dead-letters a failure at or after it', () => {
    const late = new Date(deadline.getTime() - 60_000);
    expect(nextAttemptAt({ attempt: 30, now: late, deadline, random: () => 0.9 })).toEqual(deadline);
    expect(nextAttemptAt({ attempt: 31, now: deadline, deadline, random: () => 0.9 })).toBe('dead_letter');
    expect(nextAttemptAt({ attempt: 31, now: new Date(deadline.getTime() + 1), deadline, random: () => 0.9 })).toBe('dead_letter');
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Tue, 01 Sep 2026 12:05:00 GMT', now)).toBe(300_000);
    expect(parseRetryAfter('Tue, 01 Sep 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

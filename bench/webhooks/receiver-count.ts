import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookReceiver } from '../../test/support/webhook-receiver.ts';
import type { Child } from '../lib/processes.ts';
import { mb } from '../lib/rss.ts';
import { DELIVERIES, DRAIN_TIMEOUT_MS, log, POLL_MS, PROGRESS_EVERY_MS, STALL_MS } from './settings.ts';

// Either side's deliveries as the receiver counts them: its rate is the receiver's count over the
// seconds from the first delivery to the last, the same measure for the baseline and the worker.

// Deliveries the receiver recorded since tracking began, and when the first and the last arrived.
export interface Tracker {
  delivered: number;
  verified: number;
  failed: number;
  firstAt: number;
  lastAt: number;
  // A reading that failed in onMark: rethrown by waitForDeliveries, not thrown in the receiver.
  failure?: unknown;
}

// The predicate of receiver.waitFor runs on every delivery the receiver records: used here as a
// hook, to time the first and the last delivery exactly (no polling interval in the rate) and to
// call onMark(0) at the first and onMark(1..10) as each tenth of `expected` is reached.
export function trackDeliveries(receiver: WebhookReceiver, expected: number, onMark: (mark: number) => void = () => undefined): Tracker {
  const base = receiver.counts();
  const tracker: Tracker = { delivered: 0, verified: 0, failed: 0, firstAt: NaN, lastAt: NaN };
  let nextMark = 0;
  const hook = receiver.waitFor((_, counts) => {
    const delivered = counts.total - base.total;
    if (delivered > tracker.delivered) {
      const now = performance.now();
      if (tracker.delivered === 0) tracker.firstAt = now;
      tracker.lastAt = now;
      tracker.delivered = delivered;
      tracker.verified = counts.verified - base.verified;
      tracker.failed = counts.failed - base.failed;
      try {
        while (nextMark <= 10 && delivered >= Math.ceil((expected * nextMark) / 10)) onMark(nextMark++);
      } catch (error) {
        tracker.failure ??= error;
      }
    }
    return delivered >= expected;
  }, DRAIN_TIMEOUT_MS);
  // Completion is polled (waitForDeliveries); the hook just ends with the receiver or its timeout.
  hook.catch(() => undefined);
  return tracker;
}

// Until `expected` deliveries are in; fails when the sender exits first, stalls, or runs out of time.
export async function waitForDeliveries(tracker: Tracker, expected: number, sender: Child): Promise<void> {
  const started = performance.now();
  let seen = -1;
  let movedAt = started;
  while (tracker.delivered < expected) {
    if (tracker.failure !== undefined) throw tracker.failure;
    const now = performance.now();
    const where = `${tracker.delivered} of ${expected} deliveries`;
    if (sender.hasExited()) throw new Error(`${sender.name} exited after ${where}:\n${sender.output()}`);
    if (tracker.delivered !== seen) [seen, movedAt] = [tracker.delivered, now];
    else if (now - movedAt > STALL_MS) throw new Error(`no delivery for ${STALL_MS / 1000} s at ${where}`);
    if (now - started > DRAIN_TIMEOUT_MS) throw new Error(`not done within ${DRAIN_TIMEOUT_MS / 1000} s: ${where}`);
    await sleep(POLL_MS);
  }
}

const perSecond = (count: number, ms: number): number => count / (ms / 1000);

export interface SideResult {
  deliveries: number;
  verified: number;
  failed: number;
  seconds: number;
  perSecond: number;
}

export function sideResult(tracker: Tracker): SideResult {
  const ms = tracker.lastAt - tracker.firstAt;
  return { deliveries: tracker.delivered, verified: tracker.verified, failed: tracker.failed, seconds: ms / 1000, perSecond: perSecond(tracker.delivered, ms) };
}

// For the worker's RSS sampler: a progress line every PROGRESS_EVERY_MS, with the rate since the last.
export function progressLog(tracker: Tracker): (rssKiB: number) => void {
  let logged = { at: performance.now(), delivered: 0 };
  return (rssKiB) => {
    const reading = { at: performance.now(), delivered: tracker.delivered };
    if (reading.at - logged.at < PROGRESS_EVERY_MS) return;
    const rate = perSecond(reading.delivered - logged.delivered, reading.at - logged.at);
    log(`worker: ${reading.delivered} of ${DELIVERIES} delivered (${rate.toFixed(0)}/s over the last ${((reading.at - logged.at) / 1000).toFixed(0)} s), RSS ${mb(rssKiB * 1024)} MB`);
    logged = reading;
  };
}

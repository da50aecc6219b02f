import { elapsedLog } from '../lib/log.ts';
import { nodeArgs, positiveInteger, positiveNumber } from '../lib/options.ts';

// The knobs and the fixed shape of bench/webhooks (see its header), read once from the
// environment. A module of their own because the baseline child (bench/webhooks.ts started again,
// with this environment) needs the same numbers as the bench that started it.

export const EVENTS = positiveInteger('WEBHOOK_EVENTS', 10_000);
export const BASELINE_DELIVERIES = positiveInteger('WEBHOOK_BASELINE_DELIVERIES', 20_000);
export const CONCURRENCY = positiveInteger('SVC_WEBHOOK_CONCURRENCY', 256);
export const ENDPOINT_CONCURRENCY = positiveInteger('SVC_WEBHOOK_ENDPOINT_CONCURRENCY', 32);
export const DRAIN_TIMEOUT_MS = positiveNumber('WEBHOOK_DRAIN_TIMEOUT_S', 900) * 1000;
// Node options for the worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where its time goes.
export const WORKER_NODE_ARGS = nodeArgs('WEBHOOK_WORKER_NODE_ARGS');
export const ENDPOINTS = 10;
export const DELIVERIES = EVENTS * ENDPOINTS;
export const ANSWER_DELAY_MS = 50;
// What the worker can have in flight: its own limit, or every endpoint at its per-endpoint limit.
export const IN_FLIGHT = Math.min(CONCURRENCY, ENDPOINTS * ENDPOINT_CONCURRENCY);
export const CEILING_PER_S = IN_FLIGHT / (ANSWER_DELAY_MS / 1000);
export const TENANT = 'bench';
export const CHANNEL = 'compliance';
export const POLL_MS = 250;
export const RSS_INTERVAL_MS = 250;
export const PROGRESS_EVERY_MS = 5000;
// No delivery for this long (start-up included) means the worker is stuck: fail rather than wait.
export const STALL_MS = 120_000;
export const FLAT_GROWTH = 1.25;

export const log = elapsedLog();

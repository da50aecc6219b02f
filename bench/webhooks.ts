// bench/webhooks: webhook delivery throughput of the delivery worker, and whether its memory stays
// flat, against the best a sender could do in the same run.
//
//   Setup: a fresh embedded PostgreSQL in a temp dir (started and migrated here), tenant `bench`,
//   and a real HTTPS receiver in this process (test/support/webhook-receiver.ts, counters only)
//   that answers every request after 50 ms and checks every delivery with the independent spec
//   verifier. 10 endpoints (channel compliance, event type alert.opened) at 10 paths of it, each
//   path told its endpoint's secret and channel. WEBHOOK_EVENTS (default 10,000) alert.opened
//   events are put in the outbox (enqueueEvents) before the worker starts: one delivery per event
//   and endpoint (default 100,000).
//   (1) Baseline: WEBHOOK_BASELINE_DELIVERIES (default 20,000) signed envelopes of the same shape
//       and size to an 11th path of the same receiver, from a plain https.request loop in a child
//       process (this file again, WEBHOOK_BENCH_ROLE=baseline): a keep-alive agent trusting the
//       same CAs (one TLS context, built once), C requests in flight, no database. C is the
//       worker's effective limit, min(SVC_WEBHOOK_CONCURRENCY, endpoints × SVC_WEBHOOK_ENDPOINT_CONCURRENCY).
//   (2) Worker: `node bin/svc.js run webhooks` (DATABASE_URL of the bench database, SVC_MASTER_KEY,
//       private networks allowed, the receiver's CA in SVC_WEBHOOK_CA_FILE) fans the outbox out
//       and delivers; it is stopped with SIGTERM once every delivery row has settled.
//   deliveries/s of either side = deliveries the receiver counted / seconds from its first to its
//   last. The 50 ms answer bounds both at C / 0.05 s (the ceiling, printed too).
//   Memory of the worker: VmRSS read at every tenth of the deliveries and every 250 ms, VmHWM (reset
//   once the worker is ready, so start-up is reported apart). Flat: RSS at 100 % ÷ RSS at 10 % <
//   1.25. Also checked: no delivery failed verification, every delivery row ended `succeeded`, and
//   the worker exited 0 on SIGTERM.
//
//   npm run bench:webhooks          (WEBHOOK_EVENTS=1000 npm run bench:webhooks for a quick run)
//
// SVC_WEBHOOK_CONCURRENCY and SVC_WEBHOOK_ENDPOINT_CONCURRENCY (defaults 256 and 32, as the
// service's) are passed to the worker and set C. WEBHOOK_DRAIN_TIMEOUT_S (default 900) bounds the
// wait for the deliveries; WEBHOOK_WORKER_NODE_ARGS adds node options to the worker (--cpu-prof).
// The last line printed is the ratio worker/baseline deliveries/s with the memory verdict. The
// worker's CPU, PostgreSQL's and this process's (the receiver) over the run are printed as well,
// with what the worker's database connections were doing (pg_stat_activity, every 250 ms), to
// show where the time goes when the worker falls short of the baseline. Everything started here is
// stopped and the temp dir removed, also on error and Ctrl-C.
//
// The pieces: bench/webhooks/ (settings, setup, events, receiver count, baseline sender, worker,
// report) and, shared with the other benches, bench/lib/ (teardown, processes, rss, proc-cpu,
// pg-activity).
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { newWebhookSecret } from '../clients/typescript/src/webhook-signing.ts';
import type { WebhookReceiver } from '../test/support/webhook-receiver.ts';
import { ROOT } from './lib/bench-service.ts';
import { sampleActivity, type Activity } from './lib/pg-activity.ts';
import { cpuBetween, cpuSnapshot, ownCpuSeconds, type CpuSnapshot } from './lib/proc-cpu.ts';
import { startChild, stopChild } from './lib/processes.ts';
import { sampleRss, statusKiB, type RssPeak, type RssSampler } from './lib/rss.ts';
import { runBench, type Teardown } from './lib/teardown.ts';
import { baselineChildEnv, baselineReport, baselineSender, isBaselineChild } from './webhooks/baseline-sender.ts';
import { fillOutbox } from './webhooks/events.ts';
import { progressLog, sideResult, trackDeliveries, waitForDeliveries } from './webhooks/receiver-count.ts';
import { report, type Baseline, type Memory, type WorkerRun } from './webhooks/report.ts';
import { BASELINE_DELIVERIES, CHANNEL, CONCURRENCY, DELIVERIES, ENDPOINT_CONCURRENCY, ENDPOINTS, EVENTS, IN_FLIGHT, log, POLL_MS, RSS_INTERVAL_MS } from './webhooks/settings.ts';
import { registerEndpoints, setUp, type Bench } from './webhooks/setup.ts';
import { attemptsLogged, confirmWorkerPid, startWorker, STATEMENT_KIND, waitForSettled, WORKER_APPLICATION } from './webhooks/worker.ts';

// The Teardown (runBench) stops the children first (the worker is connected to the receiver and
// the database), then closes what setUp opened here, newest first, and removes the temp dir; also
// on error and Ctrl-C.
async function main(teardown: Teardown): Promise<void> {
  // runBench stops everything on the first SIGINT or SIGTERM with a `once` handler. Under `npm run`
  // a Ctrl-C reaches this process more than once (the terminal's, then npm's and tsx's relays), and
  // with no handler left a later one would end it on the spot, leaving the PostgreSQL this process
  // started running. These keep later signals from doing that while the cleanup runs.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
  const bench = await setUp(teardown);
  await registerEndpoints(bench);
  log(`filling the outbox with ${EVENTS} alert.opened events (${DELIVERIES} deliveries to ${ENDPOINTS} endpoints)...`);
  await fillOutbox(bench.pool);
  const baseline = await runBaseline(teardown, bench.receiver, bench.caFile);
  const worker = await runWorker(teardown, bench);
  report(baseline, worker);
}

// ---- (1) the baseline --------------------------------------------------------------------------

// A child process and not a loop in this process: here it would share one event loop (and one
// core) with the receiver, which the worker, a process of its own, does not; the comparison
// would then be unfair to the baseline.
async function runBaseline(teardown: Teardown, receiver: WebhookReceiver, caFile: string): Promise<Baseline> {
  const path = '/baseline';
  const secret = newWebhookSecret();
  // Signed and shaped like the worker's deliveries, so the receiver verifies them just the same.
  receiver.setSecrets(path, [secret]);
  receiver.setChannel(path, CHANNEL);
  log(`(1) baseline: ${BASELINE_DELIVERIES} signed deliveries from a plain https.request loop, ${IN_FLIGHT} in flight...`);
  const tracker = trackDeliveries(receiver, BASELINE_DELIVERIES);
  const cpuBefore = ownCpuSeconds();
  const child = startChild('baseline sender', process.execPath, ['--import', 'tsx', 'bench/webhooks.ts'], {
    cwd: ROOT,
    env: baselineChildEnv(receiver.url(path), secret, caFile),
  });
  teardown.children.push(child);
  await waitForDeliveries(tracker, BASELINE_DELIVERIES, child);
  const code = await child.exited;
  const receiverCpuSeconds = ownCpuSeconds() - cpuBefore;
  const sent = code === 0 ? baselineReport(child.output()) : undefined;
  if (!sent) throw new Error(`baseline sender failed (exit ${code}):\n${child.output()}`);
  if (sent.ok !== BASELINE_DELIVERIES) throw new Error(`baseline: ${sent.ok} of ${BASELINE_DELIVERIES} answered 2xx: ${JSON.stringify(sent.failures)}`);
  const side = sideResult(tracker);
  log(`(1) baseline: ${side.deliveries} in ${side.seconds.toFixed(2)} s = ${side.perSecond.toFixed(0)}/s (${side.failed} failed verification)`);
  return { side, senderCpuSeconds: sent.cpuSeconds, receiverCpuSeconds };
}

// ---- (2) the worker --------------------------------------------------------------------------

async function runWorker(teardown: Teardown, bench: Bench): Promise<WorkerRun> {
  log(`(2) worker: ${DELIVERIES} deliveries, \`svc run webhooks\` with ${CONCURRENCY} in flight, ${ENDPOINT_CONCURRENCY} per endpoint...`);
  const pgDir = join(bench.dataDir, 'pg');
  const atMark: Memory['atMark'] = [];
  const cpuMarks: CpuSnapshot[] = [];
  let workerPid = 0;
  let rss: RssSampler | undefined;
  const spawned = performance.now();
  // Installed before the worker starts: it could deliver before it says it is running.
  const tracker = trackDeliveries(bench.receiver, DELIVERIES, (mark) => {
    if (rss === undefined) return;
    atMark[mark] = { seconds: (performance.now() - spawned) / 1000, rssKiB: rss.sample() ?? NaN };
    if (mark === 0 || mark === 10) cpuMarks.push(cpuSnapshot(workerPid, pgDir));
  });
  const worker = await startWorker(teardown, bench);
  const startupSeconds = (performance.now() - spawned) / 1000;
  confirmWorkerPid(worker);
  workerPid = worker.pid;
  // The start-up peak, read before the sampler resets VmHWM, so that the peak read later covers
  // the deliveries and not the start-up (loading and compiling the code).
  const startupHwmKiB = statusKiB(worker.pid, 'VmHWM') ?? NaN;
  if (tracker.delivered > 0) throw new Error(`${tracker.delivered} deliveries arrived before the worker said it was running; no readings for them`);

  rss = sampleRss(worker.pid, RSS_INTERVAL_MS, progressLog(tracker));
  const activity = sampleActivity(bench.pool, WORKER_APPLICATION, STATEMENT_KIND, POLL_MS);
  let peak: RssPeak;
  let activitySeen: Activity;
  try {
    await waitForDeliveries(tracker, DELIVERIES, worker);
  } finally {
    peak = rss.stop();
    activitySeen = await activity.stop();
  }
  log(`(2) all ${DELIVERIES} received; waiting for every outcome to be recorded...`);
  const statuses = await waitForSettled(bench.pool, worker);
  const settledAt = performance.now();
  const settledKiB = statusKiB(worker.pid, 'VmRSS') ?? NaN;
  // Read here rather than when the sampler stopped: the peak covers recording the outcomes too.
  const runHwmKiB = statusKiB(worker.pid, 'VmHWM') ?? NaN;
  const attempts = await attemptsLogged(bench.pool);

  log('(2) stopping the worker (SIGTERM)...');
  await stopChild(worker, 'SIGTERM');
  const exit = worker.process.signalCode ? `signal ${worker.process.signalCode}` : `exit ${worker.process.exitCode}`;
  const side = { ...sideResult(tracker), wallSeconds: (settledAt - spawned) / 1000, startupSeconds };
  log(`(2) worker: ${side.deliveries} in ${side.seconds.toFixed(2)} s = ${side.perSecond.toFixed(0)}/s (${side.failed} failed verification)`);
  // No reading at all gives -Infinity, so that the peak printed is the VmHWM's.
  const sampledMaxKiB = (peak.sampledMaxBytes ?? -Infinity) / 1024;
  const memory = { atMark, startupHwmKiB, runHwmKiB, hwmReset: peak.hwmReset, sampledMaxKiB, settledKiB, samples: peak.samples };
  return { side, memory, cpu: cpuBetween(cpuMarks[0]!, cpuMarks[1]!), activity: activitySeen, statuses, attempts, exit };
}

if (isBaselineChild()) await baselineSender();
else await runBench('webhooks', log, main);

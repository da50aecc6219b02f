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
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSecureContext, rootCertificates } from 'node:tls';
import { enqueueEvents, type OutgoingEvent } from '../pipelines/detect/outgoing-events.ts';
import { SecretBox } from '../platform/crypto/secret-box.ts';
import { ID_PREFIXES, uuidv7 } from '../platform/ids.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from '../platform/postgres/embedded.ts';
import { migrate } from '../platform/postgres/migrate.ts';
import { createPool, type Pool } from '../platform/postgres/pool.ts';
import { createTenant } from '../platform/tenants/tenants.ts';
import { WebhookEndpoints } from '../services/webhooks/endpoints.ts';
import { buildEnvelope } from '../services/webhooks/envelope.ts';
import { newWebhookSecret, signatureHeader } from '../services/webhooks/signature.ts';
import { ANY_PATH, startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver.ts';
import { ROOT, startNode } from './lib/bench-service.ts';
import { positiveInteger, positiveNumber } from './lib/options.ts';
import { startChild, stopChild, type Child } from './lib/processes.ts';
import { mb } from './lib/rss.ts';
import { table } from './lib/stats.ts';
import { runBench, type Teardown } from './lib/teardown.ts';

const EVENTS = positiveInteger('WEBHOOK_EVENTS', 10_000);
const BASELINE_DELIVERIES = positiveInteger('WEBHOOK_BASELINE_DELIVERIES', 20_000);
const CONCURRENCY = positiveInteger('SVC_WEBHOOK_CONCURRENCY', 256);
const ENDPOINT_CONCURRENCY = positiveInteger('SVC_WEBHOOK_ENDPOINT_CONCURRENCY', 32);
const DRAIN_TIMEOUT_MS = positiveNumber('WEBHOOK_DRAIN_TIMEOUT_S', 900) * 1000;
// Node options for the worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where its time goes.
const WORKER_NODE_ARGS = (process.env.WEBHOOK_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ENDPOINTS = 10;
const DELIVERIES = EVENTS * ENDPOINTS;
const ANSWER_DELAY_MS = 50;
// What the worker can have in flight: its own limit, or every endpoint at its per-endpoint limit.
const IN_FLIGHT = Math.min(CONCURRENCY, ENDPOINTS * ENDPOINT_CONCURRENCY);
const CEILING_PER_S = IN_FLIGHT / (ANSWER_DELAY_MS / 1000);
const TENANT = 'bench';
const CHANNEL = 'compliance';
const ENQUEUE_CHUNK = 1000;
const POLL_MS = 250;
const RSS_INTERVAL_MS = 250;
const PROGRESS_EVERY_MS = 5000;
// No delivery for this long (start-up included) means the worker is stuck: fail rather than wait.
const STALL_MS = 120_000;
const FLAT_GROWTH = 1.25;
// Set on the worker's connections, so that pg_stat_activity can tell them from ours.
const WORKER_APPLICATION = 'bench-webhooks-worker';
// The baseline child: this file, started again with these variables.
const ROLE_VARIABLE = 'WEBHOOK_BENCH_ROLE';
const BASELINE_RESULT = 'BASELINE_RESULT';
// Linux clock ticks per second (USER_HZ) of /proc/<pid>/stat and /proc/stat.
const TICKS_PER_S = 100;

const benchStarted = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - benchStarted) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const perSecond = (count: number, ms: number): number => count / (ms / 1000);

// ---- the events ------------------------------------------------------------------------------

// The data of an alert.opened event, shaped like the detect pipeline's (pipelines/detect/alerts.ts).
function alertData(index: number, at: Date): Record<string, unknown> {
  const account = `A-${String(100_000 + index)}`;
  return {
    alert_id: `${ID_PREFIXES.alert}${uuidv7(at.getTime())}`,
    detector: 'fan_in',
    typology: 'fan_in',
    severity: index % 5 === 0 ? 'high' : 'medium',
    score: ((index * 7919) % 1000) / 1000,
    subject: { kind: 'account', external_id: account },
    window: { from: new Date(at.getTime() - 600_000).toISOString(), to: at.toISOString() },
    summary: `10 accounts paid 10000.00 USD into ${account} within 10 minutes`,
  };
}

async function fillOutbox(pool: Pool): Promise<void> {
  for (let first = 0; first < EVENTS; first += ENQUEUE_CHUNK) {
    const now = new Date();
    const events: OutgoingEvent[] = [];
    for (let i = first; i < Math.min(EVENTS, first + ENQUEUE_CHUNK); i++) events.push({ tenantId: TENANT, type: 'alert.opened', data: alertData(i, now) });
    await enqueueEvents(pool, events, now);
  }
}

// ---- the receiver's count --------------------------------------------------------------------

// Deliveries the receiver recorded since tracking began, and when the first and the last arrived.
interface Tracker {
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
function trackDeliveries(receiver: WebhookReceiver, expected: number, onMark: (mark: number) => void = () => undefined): Tracker {
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
async function waitForDeliveries(tracker: Tracker, expected: number, sender: Child): Promise<void> {
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

// ---- /proc readings --------------------------------------------------------------------------

// Readings of processes that may have gone meanwhile give NaN or nothing rather than throw: they
// run in timers and in the receiver's request handler, where an exception would end the bench
// before its cleanup.
function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = readOrUndefined(`/proc/${pid}/status`)?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) : NaN;
}

const mbOfKiB = (kib: number): string => mb(kib * 1024);

// Direct children of pid, from every thread's children list (a thread other than the main one
// may have started a child).
function childPids(pid: number): number[] {
  const pids: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return pids;
  }
  for (const task of tasks) {
    const text = readOrUndefined(`/proc/${pid}/task/${task}/children`)?.trim();
    if (text) pids.push(...text.split(/\s+/).map(Number));
  }
  return pids;
}

// utime + stime of a process, in seconds; undefined once it is gone.
function cpuSecondsOf(pid: number): number | undefined {
  const text = readOrUndefined(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // The fields after the command name (which may hold spaces), from field 3 (state) on.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

// Busy seconds of the whole machine, all cores together (everything but idle and iowait).
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return (total - ticks[3]! - ticks[4]!) / TICKS_PER_S;
}

// The postmaster and its children (the backends, the background workers), each with its CPU seconds.
function postgresCpu(pgDir: string): Map<number, number> {
  const postmaster = Number(readOrUndefined(join(pgDir, 'postmaster.pid'))?.split('\n')[0]);
  const cpu = new Map<number, number>();
  if (!Number.isInteger(postmaster)) return cpu;
  for (const pid of [postmaster, ...childPids(postmaster)]) {
    const seconds = cpuSecondsOf(pid);
    if (seconds !== undefined) cpu.set(pid, seconds);
  }
  return cpu;
}

interface CpuSnapshot {
  at: number;
  worker: number;
  postgres: Map<number, number>;
  bench: number;
  machine: number;
}

function cpuSnapshot(workerPid: number, pgDir: string): CpuSnapshot {
  const { user, system } = process.cpuUsage();
  return { at: performance.now(), worker: cpuSecondsOf(workerPid) ?? NaN, postgres: postgresCpu(pgDir), bench: (user + system) / 1e6, machine: machineBusySeconds() };
}

interface CpuUse {
  wallSeconds: number;
  worker: number;
  postgres: number;
  bench: number;
  machine: number;
}

// A backend started in between counts from zero; one that ended in between is missed (the
// worker's connections live through the run).
function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  let postgres = 0;
  for (const [pid, seconds] of b.postgres) postgres += seconds - (a.postgres.get(pid) ?? 0);
  return { wallSeconds: (b.at - a.at) / 1000, worker: b.worker - a.worker, postgres, bench: b.bench - a.bench, machine: b.machine - a.machine };
}

// ---- the worker's memory ---------------------------------------------------------------------

interface RssReading {
  at: number;
  delivered: number;
  rssKiB: number;
}

// VmRSS every RSS_INTERVAL_MS, with a progress line every PROGRESS_EVERY_MS.
function sampleRss(pid: number, tracker: Tracker): { samples: RssReading[]; stop: () => void } {
  const samples: RssReading[] = [];
  let logged = { at: performance.now(), delivered: 0 };
  const timer = setInterval(() => {
    const reading = { at: performance.now(), delivered: tracker.delivered, rssKiB: statusKiB(pid, 'VmRSS') };
    if (Number.isNaN(reading.rssKiB)) return;
    samples.push(reading);
    if (reading.at - logged.at >= PROGRESS_EVERY_MS) {
      const rate = perSecond(reading.delivered - logged.delivered, reading.at - logged.at);
      log(`worker: ${reading.delivered} of ${DELIVERIES} delivered (${rate.toFixed(0)}/s over the last ${((reading.at - logged.at) / 1000).toFixed(0)} s), RSS ${mbOfKiB(reading.rssKiB)} MB`);
      logged = reading;
    }
  }, RSS_INTERVAL_MS);
  return { samples, stop: () => clearInterval(timer) };
}

// Writing 5 to clear_refs resets VmHWM to the current RSS (same user or root), so the peak read
// later covers the deliveries and not the start-up (loading and compiling the code).
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

// ---- what the worker's connections do --------------------------------------------------------

// The worker's three statements, told apart by how their text begins (services/webhooks/delivery-store.ts).
const STATEMENT_KIND = `CASE WHEN query LIKE 'WITH batch AS%' THEN 'fan-out' WHEN query LIKE 'WITH due AS%' THEN 'claim'
                             WHEN query LIKE 'WITH o AS%' THEN 'record' ELSE 'other' END`;

interface Activity {
  samples: number;
  // What a connection was doing ("idle", "active claim (waiting on IO:WalSync)") → mean count.
  mean: Map<string, number>;
}

// pg_stat_activity of the worker's connections every POLL_MS: how many were in each state (active
// in which statement, waiting on what), summed over the samples. stop() gives the means.
function sampleActivity(pool: Pool): { stop: () => Promise<Activity> } {
  const totals = new Map<string, number>();
  let samples = 0;
  let stopping = false;
  let failure: unknown;
  const loop = (async () => {
    while (!stopping) {
      const { rows } = await pool.query<{ what: string; n: number }>(
        `SELECT CASE WHEN state = 'active' THEN 'active ' || ${STATEMENT_KIND} || coalesce(' (waiting on ' || wait_event_type || ':' || wait_event || ')', '')
                     ELSE state END AS what, count(*)::int AS n
           FROM pg_stat_activity WHERE application_name = $1 GROUP BY 1`,
        [WORKER_APPLICATION],
      );
      samples++;
      for (const row of rows) totals.set(row.what, (totals.get(row.what) ?? 0) + row.n);
      await sleep(POLL_MS);
    }
  })().catch((error: unknown) => {
    // Kept for stop(): a rejection nobody awaits yet would end the process before the cleanup.
    failure = error;
  });
  return {
    stop: async () => {
      stopping = true;
      await loop;
      if (failure !== undefined) throw failure;
      return { samples, mean: new Map([...totals].map(([what, n]) => [what, n / Math.max(1, samples)])) };
    },
  };
}

// ---- (1) the baseline --------------------------------------------------------------------------

interface SideResult {
  deliveries: number;
  verified: number;
  failed: number;
  seconds: number;
  perSecond: number;
}

function sideResult(tracker: Tracker): SideResult {
  const ms = tracker.lastAt - tracker.firstAt;
  return { deliveries: tracker.delivered, verified: tracker.verified, failed: tracker.failed, seconds: ms / 1000, perSecond: perSecond(tracker.delivered, ms) };
}

// What the baseline child prints as its last line.
interface BaselineReport {
  ok: number;
  failures: Record<string, number>;
  cpuSeconds: number;
}

interface Baseline {
  side: SideResult;
  senderCpuSeconds: number;
  receiverCpuSeconds: number;
}

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
  const cpuBefore = process.cpuUsage();
  const child = startChild('baseline sender', process.execPath, ['--import', 'tsx', 'bench/webhooks.ts'], {
    cwd: ROOT,
    env: { ...process.env, [ROLE_VARIABLE]: 'baseline', WEBHOOK_BASELINE_URL: receiver.url(path), WEBHOOK_BASELINE_SECRET: secret, WEBHOOK_BASELINE_CA_FILE: caFile },
  });
  teardown.children.push(child);
  await waitForDeliveries(tracker, BASELINE_DELIVERIES, child);
  const code = await child.exited;
  const { user, system } = process.cpuUsage(cpuBefore);
  const line = child.output().split('\n').find((l) => l.startsWith(`${BASELINE_RESULT} `));
  if (code !== 0 || !line) throw new Error(`baseline sender failed (exit ${code}):\n${child.output()}`);
  const report = JSON.parse(line.slice(BASELINE_RESULT.length + 1)) as BaselineReport;
  if (report.ok !== BASELINE_DELIVERIES) throw new Error(`baseline: ${report.ok} of ${BASELINE_DELIVERIES} answered 2xx: ${JSON.stringify(report.failures)}`);
  const side = sideResult(tracker);
  log(`(1) baseline: ${side.deliveries} in ${side.seconds.toFixed(2)} s = ${side.perSecond.toFixed(0)}/s (${side.failed} failed verification)`);
  return { side, senderCpuSeconds: report.cpuSeconds, receiverCpuSeconds: (user + system) / 1e6 };
}

// The child's side: BASELINE_DELIVERIES POSTs over IN_FLIGHT loops, each sending its next request
// as soon as the previous answer is read. Per request it does what any sender must: build the
// envelope and sign it (the product's builders: how fast, not whether right, is measured here).
async function baselineSender(): Promise<void> {
  const required = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const url = new URL(required('WEBHOOK_BASELINE_URL'));
  const secret = required('WEBHOOK_BASELINE_SECRET');
  // The same trust as the worker's sender (the public roots and the receiver's CA), as one TLS
  // context built once and shared by every connection: given as `ca`, Node builds a context per
  // connection, which with the whole root list costs ~15 ms of CPU and ~1 MB that the socket keeps.
  const ca = [...rootCertificates, await readFile(required('WEBHOOK_BASELINE_CA_FILE'), 'utf8')];
  const agent = new https.Agent({ keepAlive: true, maxSockets: IN_FLIGHT, secureContext: createSecureContext({ ca }) });
  const failures: Record<string, number> = {};
  let next = 0;
  let ok = 0;
  const cpuBefore = process.cpuUsage();
  const loop = async (): Promise<void> => {
    while (next < BASELINE_DELIVERIES) {
      const status = await post(agent, url, secret, next++).catch((error: Error) => error.message);
      if (status === 200) ok++;
      else failures[String(status)] = (failures[String(status)] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  const { user, system } = process.cpuUsage(cpuBefore);
  agent.destroy();
  const report: BaselineReport = { ok, failures, cpuSeconds: (user + system) / 1e6 };
  process.stdout.write(`${BASELINE_RESULT} ${JSON.stringify(report)}\n`);
}

function post(agent: https.Agent, url: URL, secret: string, index: number): Promise<number> {
  const now = new Date();
  const envelope = buildEnvelope(
    { tenantId: TENANT, envelopeId: uuidv7(now.getTime()), type: 'alert.opened', classification: 'restricted_aml', createdAt: now, data: alertData(index, now) },
    CHANNEL,
    { attempt: 1, deliveryId: uuidv7(now.getTime()) },
  );
  if (!envelope.ok) throw new Error(envelope.reason);
  const t = Math.floor(now.getTime() / 1000);
  const headers = {
    'svc-webhook-signature': signatureHeader(t, envelope.body, [secret]),
    'svc-webhook-timestamp': String(t),
    'svc-webhook-id': envelope.envelopeId,
    'content-type': 'application/json',
    'content-length': String(envelope.body.length),
  };
  return new Promise((resolve, reject) => {
    const request = https.request(url, { method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    // The worker's attempt timeout (SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS default).
    request.setTimeout(10_000, () => request.destroy(new Error('no answer within 10 s')));
    request.on('error', reject);
    request.end(envelope.body);
  });
}

// ---- (2) the worker --------------------------------------------------------------------------

interface Bench {
  dataDir: string;
  server: EmbeddedServer;
  pool: Pool;
  receiver: WebhookReceiver;
  caFile: string;
  masterKey: Buffer;
}

// 10 endpoints at 10 paths of the receiver, which learns each path's secret and channel.
async function registerEndpoints(bench: Bench): Promise<void> {
  const endpoints = new WebhookEndpoints(bench.pool, new SecretBox(bench.masterKey));
  for (let i = 0; i < ENDPOINTS; i++) {
    const path = `/hooks/${i}`;
    const { secret } = await endpoints.register(TENANT, { url: bench.receiver.url(path), channel: CHANNEL, event_types: ['alert.opened'] }, new Date());
    bench.receiver.setSecrets(path, [secret]);
    bench.receiver.setChannel(path, CHANNEL);
  }
}

function workerEnv(bench: Bench): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `${bench.server.url()}?application_name=${WORKER_APPLICATION}`,
    SVC_MASTER_KEY: bench.masterKey.toString('base64url'),
    SVC_DATA_DIR: bench.dataDir,
    SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    SVC_WEBHOOK_CA_FILE: bench.caFile,
    SVC_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    SVC_WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
    LOG_LEVEL: 'warn',
  };
  delete env.SVC_PG_PORT;
  return env;
}

// bin/svc.js registers tsx in the process itself, so the pid we started is the worker: checked
// here (no child process of its own but esbuild's, which tsx starts to transform sources not yet
// in its cache), since a wrapper would have us measure the wrong memory.
function confirmWorkerPid(worker: Child): void {
  const command = (readOrUndefined(`/proc/${worker.pid}/cmdline`) ?? '').split('\0').join(' ').trim();
  const children = childPids(worker.pid).filter((pid) => !(readOrUndefined(`/proc/${pid}/cmdline`) ?? '').includes('esbuild'));
  if (!command.includes('bin/svc.js') || children.length > 0) {
    throw new Error(`pid ${worker.pid} (${command}) is not the worker itself: child processes ${children.join(', ') || 'none'}`);
  }
  log(`(2) worker pid ${worker.pid} is \`${command}\` with no child process: its RSS is the worker's`);
}

interface Memory {
  // RSS at the first delivery (mark 0) and at each tenth (marks 1..10), in KiB.
  atMark: Array<{ seconds: number; rssKiB: number } | undefined>;
  startupHwmKiB: number;
  runHwmKiB: number;
  hwmReset: boolean;
  sampledMaxKiB: number;
  settledKiB: number;
  samples: number;
}

interface WorkerRun {
  side: WorkerSide;
  memory: Memory;
  cpu: CpuUse;
  activity: Activity;
  statuses: Map<string, number>;
  attempts: number;
  exit: string;
}

interface WorkerSide extends SideResult {
  // From starting the process to every delivery row settled, start-up and fan-out included.
  wallSeconds: number;
  startupSeconds: number;
}

interface StartedWorker {
  worker: Child;
  startupSeconds: number;
  startupHwmKiB: number;
  hwmReset: boolean;
}

// `svc run webhooks`, once it says it is running; then its start-up peak is read and VmHWM reset.
async function startWorker(teardown: Teardown, bench: Bench, spawned: number): Promise<StartedWorker> {
  const args = [...WORKER_NODE_ARGS, 'bin/svc.js', 'run', 'webhooks'];
  const { child: worker } = await startNode(teardown, 'webhooks worker', args, workerEnv(bench), /webhook delivery worker running/);
  const startupSeconds = (performance.now() - spawned) / 1000;
  confirmWorkerPid(worker);
  const startupHwmKiB = statusKiB(worker.pid, 'VmHWM');
  return { worker, startupSeconds, startupHwmKiB, hwmReset: resetPeak(worker.pid) };
}

async function runWorker(teardown: Teardown, bench: Bench): Promise<WorkerRun> {
  log(`(2) worker: ${DELIVERIES} deliveries, \`svc run webhooks\` with ${CONCURRENCY} in flight, ${ENDPOINT_CONCURRENCY} per endpoint...`);
  const pgDir = join(bench.dataDir, 'pg');
  const atMark: Memory['atMark'] = [];
  const cpuMarks: CpuSnapshot[] = [];
  let workerPid = 0;
  const spawned = performance.now();
  // Installed before the worker starts: it could deliver before it says it is running.
  const tracker = trackDeliveries(bench.receiver, DELIVERIES, (mark) => {
    if (workerPid === 0) return;
    atMark[mark] = { seconds: (performance.now() - spawned) / 1000, rssKiB: statusKiB(workerPid, 'VmRSS') };
    if (mark === 0 || mark === 10) cpuMarks.push(cpuSnapshot(workerPid, pgDir));
  });
  const started = await startWorker(teardown, bench, spawned);
  const worker = started.worker;
  workerPid = worker.pid;
  if (tracker.delivered > 0) throw new Error(`${tracker.delivered} deliveries arrived before the worker said it was running; no readings for them`);

  const rss = sampleRss(worker.pid, tracker);
  const activity = sampleActivity(bench.pool);
  let activitySeen: Activity;
  try {
    await waitForDeliveries(tracker, DELIVERIES, worker);
  } finally {
    rss.stop();
    activitySeen = await activity.stop();
  }
  log(`(2) all ${DELIVERIES} received; waiting for every outcome to be recorded...`);
  const statuses = await waitForSettled(bench.pool, worker);
  const settledAt = performance.now();
  const settledKiB = statusKiB(worker.pid, 'VmRSS');
  const runHwmKiB = statusKiB(worker.pid, 'VmHWM');
  const { rows } = await bench.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_attempts');

  log('(2) stopping the worker (SIGTERM)...');
  await stopChild(worker, 'SIGTERM');
  const exit = worker.process.signalCode ? `signal ${worker.process.signalCode}` : `exit ${worker.process.exitCode}`;
  const side = { ...sideResult(tracker), wallSeconds: (settledAt - spawned) / 1000, startupSeconds: started.startupSeconds };
  log(`(2) worker: ${side.deliveries} in ${side.seconds.toFixed(2)} s = ${side.perSecond.toFixed(0)}/s (${side.failed} failed verification)`);
  const readings = [...rss.samples.map((s) => s.rssKiB), ...atMark.map((m) => m?.rssKiB ?? NaN)].filter((kib) => !Number.isNaN(kib));
  const memory = { atMark, startupHwmKiB: started.startupHwmKiB, runHwmKiB, hwmReset: started.hwmReset, sampledMaxKiB: Math.max(...readings), settledKiB, samples: rss.samples.length };
  return { side, memory, cpu: cpuBetween(cpuMarks[0]!, cpuMarks[1]!), activity: activitySeen, statuses, attempts: rows[0]!.n, exit };
}

async function deliveryStatuses(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status ORDER BY status');
  return new Map(rows.map((row) => [row.status, row.n]));
}

// Until no delivery row is pending any more (the worker writes outcomes in batches, ~10 ms behind).
async function waitForSettled(pool: Pool, worker: Child): Promise<Map<string, number>> {
  const until = performance.now() + 60_000;
  for (;;) {
    const statuses = await deliveryStatuses(pool);
    const settled = [...statuses].reduce((n, [status, count]) => (status === 'pending' ? n : n + count), 0);
    if (settled >= DELIVERIES && !statuses.has('pending')) return statuses;
    if (worker.hasExited()) throw new Error(`worker exited before every delivery settled:\n${worker.output()}`);
    if (performance.now() > until) throw new Error(`deliveries not settled within 60 s: ${countsText(statuses)}`);
    await sleep(POLL_MS);
  }
}

const countsText = (counts: Map<string, number>): string => [...counts].map(([status, n]) => `${status} ${n}`).join(', ') || 'none';

// ---- running ---------------------------------------------------------------------------------

// Each thing started here adds how to close it to `closers`, so that a failure halfway through
// the setup still closes what was started (an open pool or server would keep the process alive).
async function setUp(teardown: Teardown, closers: Array<() => Promise<void>>): Promise<Bench> {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-webhooks-'));
  teardown.dataDir = dataDir;
  // The embedded PostgreSQL runs as the postgres user when this runs as root; it must reach the dir.
  await chmod(dataDir, 0o755);
  log(`starting PostgreSQL in ${dataDir}...`);
  const server = await startEmbeddedPostgres({ dataDir, port: 0 });
  closers.push(() => server.stop());
  const pool = createPool(server.url(), 4);
  closers.push(() => pool.end());
  await migrate(pool);
  const tenant = await createTenant(pool, TENANT, 'USD');
  if (tenant.kind !== 'created') throw new Error(`tenant ${TENANT}: ${tenant.kind}`);
  const receiver = await startWebhookReceiver({ keep: false });
  closers.push(() => receiver.close());
  receiver.setBehaviour(ANY_PATH, { delayMs: ANSWER_DELAY_MS });
  const caFile = join(dataDir, 'receiver-ca.pem');
  await writeFile(caFile, receiver.caPem);
  return { dataDir, server, pool, receiver, caFile, masterKey: randomBytes(32) };
}

// Children first (the worker is connected to the receiver and the database), then ours, newest
// first. The Teardown (runBench) then removes the temp dir; on Ctrl-C it stops the children and
// PostgreSQL itself.
async function main(teardown: Teardown): Promise<void> {
  // runBench stops everything on the first SIGINT or SIGTERM with a `once` handler. Under `npm run`
  // a Ctrl-C reaches this process more than once (the terminal's, then npm's and tsx's relays), and
  // with no handler left a later one would end it on the spot, leaving the PostgreSQL this process
  // started running. These keep later signals from doing that while the cleanup runs.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
  const closers: Array<() => Promise<void>> = [];
  try {
    const bench = await setUp(teardown, closers);
    await registerEndpoints(bench);
    log(`filling the outbox with ${EVENTS} alert.opened events (${DELIVERIES} deliveries to ${ENDPOINTS} endpoints)...`);
    await fillOutbox(bench.pool);
    const baseline = await runBaseline(teardown, bench.receiver, bench.caFile);
    const worker = await runWorker(teardown, bench);
    report(baseline, worker);
  } finally {
    for (const child of [...teardown.children].reverse()) await stopChild(child, 'SIGTERM');
    for (const close of closers.reverse()) await close().catch((error: unknown) => log(`cleanup: ${String(error)}`));
  }
}

// ---- reporting -------------------------------------------------------------------------------

function report(baseline: Baseline, worker: WorkerRun): void {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const ratio = worker.side.perSecond / baseline.side.perSecond;
  const memory = worker.memory;
  const at10 = memory.atMark[1]?.rssKiB ?? NaN;
  const atEnd = memory.atMark[10]?.rssKiB ?? NaN;
  const growth = atEnd / at10;
  const flat = growth < FLAT_GROWTH;
  const succeeded = worker.statuses.get('succeeded') ?? 0;
  const correct =
    worker.side.failed === 0 && baseline.side.failed === 0 && succeeded === DELIVERIES && worker.side.verified === DELIVERIES && worker.exit === 'exit 0';
  const ofCeiling = (rate: number) => `${((rate / CEILING_PER_S) * 100).toFixed(0)} %`;

  out(`\nwebhook delivery: ${EVENTS} events × ${ENDPOINTS} endpoints = ${DELIVERIES} deliveries; the receiver answers after ${ANSWER_DELAY_MS} ms`);
  out(`in flight: min(SVC_WEBHOOK_CONCURRENCY ${CONCURRENCY}, ${ENDPOINTS} endpoints × ${ENDPOINT_CONCURRENCY}) = ${IN_FLIGHT}; ceiling ${IN_FLIGHT} / ${ANSWER_DELAY_MS / 1000} s = ${CEILING_PER_S.toFixed(0)} deliveries/s`);
  out(
    table([
      ['side (first to last delivery at the receiver)', 'deliveries', 'seconds', 'deliveries/s', 'of ceiling'],
      ['baseline: https.request loop, no database', String(baseline.side.deliveries), baseline.side.seconds.toFixed(2), baseline.side.perSecond.toFixed(0), ofCeiling(baseline.side.perSecond)],
      ['worker: `svc run webhooks`', String(worker.side.deliveries), worker.side.seconds.toFixed(2), worker.side.perSecond.toFixed(0), ofCeiling(worker.side.perSecond)],
    ]),
  );
  out(
    `worker end to end: ${worker.side.wallSeconds.toFixed(2)} s from starting the process to every row settled ` +
      `(${worker.side.startupSeconds.toFixed(2)} s to "running", first delivery at ${memory.atMark[0]?.seconds.toFixed(2) ?? 'n/a'} s)`,
  );
  out(`verification: worker ${worker.side.verified} verified, ${worker.side.failed} failed; baseline ${baseline.side.verified} verified, ${baseline.side.failed} failed`);
  out(`delivery rows: ${countsText(worker.statuses)}; attempts logged ${worker.attempts}; worker stopped with ${worker.exit}; ${correct ? 'PASS' : 'FAIL'} (all ${DELIVERIES} verified and succeeded, worker exit 0)`);

  out(`\nworker RSS by progress (MB): ${memory.atMark.slice(1).map((m, i) => `${(i + 1) * 10}% ${m ? mbOfKiB(m.rssKiB) : 'n/a'}`).join(' | ')}`);
  out(
    `worker RSS: at 10 % ${mbOfKiB(at10)} MB, at 100 % ${mbOfKiB(atEnd)} MB, settled ${mbOfKiB(memory.settledKiB)} MB; ` +
      `peak ${mbOfKiB(Math.max(memory.runHwmKiB, memory.sampledMaxKiB))} MB (VmHWM ${mbOfKiB(memory.runHwmKiB)} MB ${memory.hwmReset ? 'since ready' : 'since start (could not reset)'}, ` +
      `sampled max ${mbOfKiB(memory.sampledMaxKiB)} MB over ${memory.samples} samples); start-up peak ${mbOfKiB(memory.startupHwmKiB)} MB`,
  );
  out(`memory growth 100 % / 10 %: ${growth.toFixed(2)} → ${flat ? 'FLAT' : 'GROWING'} (flat when < ${FLAT_GROWTH})`);

  const cpu = worker.cpu;
  const share = (seconds: number) => `${seconds.toFixed(1)} s (${((seconds / cpu.wallSeconds) * 100).toFixed(0)} % of a core)`;
  out(
    `\nCPU over the worker's ${cpu.wallSeconds.toFixed(1)} s: worker ${share(cpu.worker)}, PostgreSQL ${share(cpu.postgres)}, ` +
      `this process (receiver) ${share(cpu.bench)}; machine busy ${share(cpu.machine)}`,
  );
  const perDelivery = (seconds: number, n: number) => `${((seconds / n) * 1e6).toFixed(0)} µs`;
  out(
    `CPU per delivery: worker ${perDelivery(cpu.worker, worker.side.deliveries)} + PostgreSQL ${perDelivery(cpu.postgres, worker.side.deliveries)}; ` +
      `baseline sender ${perDelivery(baseline.senderCpuSeconds, baseline.side.deliveries)}; receiver ${perDelivery(cpu.bench, worker.side.deliveries)} (worker run), ` +
      `${perDelivery(baseline.receiverCpuSeconds, baseline.side.deliveries)} (baseline run)`,
  );
  const activity = [...worker.activity.mean].sort((a, b) => b[1] - a[1]).map(([what, n]) => `${what} ${n.toFixed(2)}`);
  out(`worker's database connections, mean count over ${worker.activity.samples} samples: ${activity.join('; ') || 'none seen'}`);

  out(
    `\nratio worker/baseline deliveries/s: ${ratio.toFixed(2)} (worker ${worker.side.perSecond.toFixed(0)}/s, baseline ${baseline.side.perSecond.toFixed(0)}/s, ` +
      `ceiling ${CEILING_PER_S.toFixed(0)}/s; worker RSS ${mbOfKiB(at10)} → ${mbOfKiB(atEnd)} MB, growth ${growth.toFixed(2)}: ${flat ? 'flat' : 'growing'}; ${correct ? 'all verified' : 'VERIFICATION OR DELIVERY FAILURES'})`,
  );
  if (!correct) process.exitCode = 1;
}

if (process.env[ROLE_VARIABLE] === 'baseline') await baselineSender();
else await runBench('webhooks', log, main);

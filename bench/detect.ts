// bench/detect: detection under a sustained load, end to end through the public API.
//
//   A fresh service (`svc run api`, embedded PostgreSQL) and the four pipelines as processes of
//   their own (canonical, graph, aggregates, detect), on the built-in default ruleset. The AMLSim
//   data set BENCH_DATASET_DIR (default ../shared/datasets/ibm_amlsim/20K_fanin200) provides the
//   background: its 20,000 parties and accounts are loaded first (and drained), then its movements
//   are sent in time order at BENCH_RATE movements/s (default 1,000) for BENCH_DURATION_S seconds
//   (default 60): a batch of rate/10 movements every 100 ms, open loop (a late answer does not slow
//   the schedule down). Every BENCH_PLANT_EVERY_S seconds (default 5) a fan-in is planted: 10
//   fresh accounts of 10 fresh parties each pay 1,000.00 USD into one fresh hub account within ten
//   minutes of event time, sent as one batch of their own. From that batch's 202, GET /v1/alerts
//   ?subject=<hub>&detector=fan_in (compliance key) is polled every 50 ms until the alert is
//   visible: that is the pattern's latency. Printed: p50/p95/max latency (target p95 <= 1 s), the
//   ingest rate achieved (movements accepted / seconds from first request to last 202), and
//   detection's throughput against it (target >= 1.0): each rate over its own stage's span, so
//   detection's is the movements over the seconds from its first commit of the run until the
//   detect group has committed everything. It stays at 1 while the backlog does not grow, whatever
//   the latency (measured on its own, above), and falls below 1 as soon as detection falls behind.
//   Beside it, the rate from the first request to the drain: that one also counts the pipeline's
//   latency once (the last movement's way through every stage), about 0.01 of a 60 s run.
//   Also printed: the CPU seconds each process (API, pipelines, PostgreSQL, this driver) spent from
//   the first request until detection caught up, to show where a shortfall comes from, the detect
//   process's CPU per movement (what load on the machine distorts least) and its peak RSS, and
//   the CPU of the PostgreSQL backends serving the detect process alone, per movement (they are
//   told by their application_name, DETECT_APPLICATION).
//   BENCH_DETECT_NODE_ARGS adds node options to the detect process alone (e.g. --trace-gc,
//   --cpu-prof, --heapsnapshot-signal=SIGUSR2), and BENCH_DETECT_OUTPUT=<file> keeps its output.
//
//   npm run bench:detect
import { createWriteStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AGGREGATES, CANONICAL, DETECT, GRAPH, type ConsumerGroupSpec } from '../pipelines/groups.ts';
import { PostgresLogBus } from '../platform/bus/postgres-log.ts';
import { SCHEMA_VERSION } from '../schemas/envelope.ts';
import { accountItem, batchBody, loadDataset, movementItem, partyItem } from './lib/amlsim.ts';
import type { SvcClient } from '../clients/typescript/src/index.ts';
import { benchClient } from './lib/api.ts';
import { batchesOf, ingestBatches, postBatch, startPipeline } from './lib/batches.ts';
import { issueBenchKey, ROOT, startService, svc, TENANT } from './lib/bench-service.ts';
import { embeddedConnection } from './lib/embedded-pg.ts';
import { newAgent } from './lib/load.ts';
import { positiveInteger } from './lib/options.ts';
import { trackBackendCpu } from './lib/backend-cpu.ts';
import { cpuLedger, describeCpu } from './lib/proc-cpu.ts';
import { statusKiB } from './lib/rss.ts';
import { percentile } from './lib/stats.ts';
import { runBench } from './lib/teardown.ts';

const DATASET_DIR = resolve(process.env.BENCH_DATASET_DIR || resolve(ROOT, '..', 'shared', 'datasets', 'ibm_amlsim', '20K_fanin200'));
const RATE = positiveInteger('BENCH_RATE', 1000);
const DURATION_S = positiveInteger('BENCH_DURATION_S', 60);
const PLANT_EVERY_S = positiveInteger('BENCH_PLANT_EVERY_S', 5);
const DRAIN_TIMEOUT_MS = positiveInteger('BENCH_DRAIN_TIMEOUT_S', 1800) * 1000;
const TICK_MS = 100;
const SENDERS = 10;
const TARGET_P95_MS = 1000;
// The detect process's application_name on its connections (PGAPPNAME).
const DETECT_APPLICATION = 'svc-bench-detect';

const started = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s] ${line}\n`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const entity = (object: 'party' | 'account', id: string, data: Record<string, unknown>) =>
  JSON.stringify({ object, event: { external_id: id, schema_version: SCHEMA_VERSION, occurred_at: '2026-01-01T00:00:00Z', sequence: 1, data } });

function plantedEntities(pattern: number): string[] {
  const items: string[] = [];
  const ids = [`plant${pattern}-hub`, ...Array.from({ length: SENDERS }, (_, i) => `plant${pattern}-s${i}`)];
  for (const id of ids) {
    items.push(entity('party', `P-${id}`, { type: 'person', status: 'active', created_at: '2025-01-01T00:00:00Z' }));
    items.push(entity('account', `A-${id}`, { type: 'checking', holder_party_id: `P-${id}`, asset: 'USD', status: 'active', opened_at: '2025-01-01T00:00:00Z' }));
  }
  return items;
}

// Ten payments of 1,000.00 USD into the hub within ten minutes, an hour before now.
function plantedMovements(pattern: number): string[] {
  const base = Date.now() - 3_600_000;
  return Array.from({ length: SENDERS }, (_, i) =>
    JSON.stringify({
      object: 'movement',
      event: {
        external_id: `plant${pattern}-m${i}`,
        schema_version: SCHEMA_VERSION,
        occurred_at: new Date(base + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        data: { type: 'p2p', status: 'completed', amount: { value: '100000', asset: 'USD', scale: 2 }, debit: { account_id: `A-plant${pattern}-s${i}` }, credit: { account_id: `A-plant${pattern}-hub` } },
      },
    }),
  );
}

// performance.now() at the detect group's first offset commit after `since` (wall clock): when
// detection finished its first batch of the run. Polled every 50 ms until `stop` says so.
async function firstDetectCommit(pool: pg.Pool, since: Date, stop: () => boolean): Promise<number | undefined> {
  while (!stop()) {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM consumer_offsets WHERE group_name = $1 AND updated_at > $2', [DETECT.group, since]);
    if (rows[0]!.n > 0) return performance.now();
    await sleep(50);
  }
  return undefined;
}

// One GET /v1/alerts (the first page is enough: any alert on the hub will do).
async function alertVisible(compliance: SvcClient, hub: string): Promise<boolean> {
  const page = await compliance.alerts.list({ subject: hub, detector: 'fan_in' }).firstPage();
  return page.data.length > 0;
}

await runBench('detect', log, async (teardown) => {
  const dataset = await loadDataset(DATASET_DIR);
  const service = await startService(teardown, log, { name: 'api' });
  const complianceClient = benchClient(service, await issueBenchKey(service.env, 'compliance'));
  // BENCH_MODEL=<id> (e.g. default): the learned model live beside the default ruleset's detectors.
  if (process.env.BENCH_MODEL) log((await svc(service.env, ['models', 'activate', '--tenant', TENANT, '--model', process.env.BENCH_MODEL])).trim());
  const pool = new pg.Pool({ ...(await embeddedConnection(service.dataDir)), max: 2 });
  const bus = new PostgresLogBus(pool);
  // Whether detection is behind at all: a bounded count, so the check costs the run little.
  // Records the group has not committed; with upTo, counted no further than that per partition.
  const backlogOf = async (g: ConsumerGroupSpec, upTo?: number) =>
    (await bus.lag(g.group, g.topics, upTo === undefined ? {} : { upTo })).reduce((n, p) => n + p.records, 0);
  const lag = () => backlogOf(DETECT, 1);
  try {
    const pids = new Map<string, number>([['api', service.api.pid]]);
    for (const name of ['canonical', 'graph', 'aggregates', 'detect'] as const) {
      const { child } = await startPipeline(teardown, service, name, name, name === 'detect' ? { PGAPPNAME: DETECT_APPLICATION } : {});
      pids.set(name, child.pid);
      // BENCH_DETECT_OUTPUT=<file>: the detect process's output kept whole (e.g. --trace-gc,
      // given with BENCH_DETECT_NODE_ARGS).
      if (name === 'detect' && process.env.BENCH_DETECT_OUTPUT) {
        const file = createWriteStream(process.env.BENCH_DETECT_OUTPUT);
        child.process.stdout!.on('data', (chunk: Buffer) => file.write(chunk));
        child.process.stderr!.on('data', (chunk: Buffer) => file.write(chunk));
      }
    }
    const patterns = Math.floor(DURATION_S / PLANT_EVERY_S);
    const entities = [...dataset.nodes.flatMap((n) => [partyItem(n), accountItem(n)]), ...Array.from({ length: patterns }, (_, p) => plantedEntities(p)).flat()];
    log(`loading ${entities.length} parties and accounts`);
    await ingestBatches(service, 4, batchesOf(entities));
    while ((await lag()) > 0) await sleep(500);
    const loadPeak = statusKiB(pids.get('detect')!, 'VmHWM');

    const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
    const ticks = Math.floor((DURATION_S * 1000) / TICK_MS);
    const movements = dataset.transactions.slice(0, perTick * ticks).map(movementItem);
    log(`sending ${movements.length} movements at ${RATE}/s for ${DURATION_S} s with ${patterns} planted fan-ins`);
    const agent = newAgent(8);
    const inflight: Array<Promise<unknown>> = [];
    const latencies: number[] = [];
    // Each plant's answer time (seconds into the load) and latency: what a slow one coincided with.
    const plants: string[] = [];
    let accepted = 0;
    let lastAnswer = 0;
    const loadStart = performance.now();
    const cpuAtStart = cpuLedger(pids, join(service.dataDir, 'pg'));
    const detectBackends = trackBackendCpu(pool, DETECT_APPLICATION);
    let drainedAt: number | undefined;
    const firstCommit = firstDetectCommit(pool, new Date(), () => drainedAt !== undefined);
    for (let tick = 0; tick < ticks; tick++) {
      const due = loadStart + tick * TICK_MS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const body = batchBody(movements.slice(tick * perTick, (tick + 1) * perTick));
      inflight.push(postBatch(service, agent, body).then((n) => { accepted += n; lastAnswer = performance.now(); }));
      const pattern = (tick * TICK_MS) / (PLANT_EVERY_S * 1000);
      if (Number.isInteger(pattern) && pattern < patterns) {
        inflight.push(
          (async () => {
            const planted = plantedMovements(pattern);
            const n = await postBatch(service, agent, batchBody(planted));
            accepted += n;
            const at202 = performance.now();
            lastAnswer = at202;
            while (!(await alertVisible(complianceClient, `A-plant${pattern}-hub`))) {
              if (performance.now() - at202 > DRAIN_TIMEOUT_MS) throw new Error(`no fan_in alert for planted pattern ${pattern}`);
              await sleep(50);
            }
            latencies.push(performance.now() - at202);
            plants.push(`${((at202 - loadStart) / 1000).toFixed(1)} s: ${(performance.now() - at202).toFixed(0)} ms`);
          })(),
        );
      }
    }
    await Promise.all(inflight);
    const ingestSeconds = (lastAnswer - loadStart) / 1000;
    // Where the backlog is when the load ends: detection waits for the graph and the aggregates,
    // so a detection further behind than they are is the slow part, and one no further behind is
    // waiting for them.
    const backlogs = await Promise.all(
      [CANONICAL, GRAPH, AGGREGATES, DETECT].map(async (g) => `${g.group} ${await backlogOf(g)}`),
    );
    while ((await lag()) > 0) {
      if (performance.now() - loadStart > DRAIN_TIMEOUT_MS) throw new Error('detection did not catch up');
      await sleep(100);
    }
    drainedAt = performance.now();
    const detectSeconds = (drainedAt - loadStart) / 1000;
    const firstCommitAt = await firstCommit;
    const cpuAtEnd = cpuLedger(pids, join(service.dataDir, 'pg'));
    const detectBackendCpu = await detectBackends.seconds();
    detectBackends.stop();
    agent.destroy();
    const ingestRate = accepted / ingestSeconds;
    const detectRate = accepted / detectSeconds;
    const sorted = Float64Array.from(latencies).sort();
    const p95 = percentile(sorted, 95);
    console.log(`planted fan-ins: ${latencies.length}; 202 → alert visible p50 ${percentile(sorted, 50).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms (target p95 <= ${TARGET_P95_MS} ms: ${p95 <= TARGET_P95_MS ? 'PASS' : 'FAIL'})`);
    console.log(`  each (202 at seconds into the load: latency): ${plants.join(', ')}`);
    console.log(`ingest ${ingestRate.toFixed(0)} movements/s (${accepted} in ${ingestSeconds.toFixed(1)} s); detection ${detectRate.toFixed(0)} movements/s (drained ${detectSeconds.toFixed(1)} s after the first request)`);
    // Over detection's own span: accepted movements from its first commit to the drain.
    const spanSeconds = firstCommitAt === undefined ? undefined : (drainedAt - firstCommitAt) / 1000;
    const spanRatio = spanSeconds === undefined ? 'n/a' : (accepted / spanSeconds / ingestRate).toFixed(2);
    if (spanSeconds !== undefined) {
      console.log(`detection's own span: first commit ${((firstCommitAt! - loadStart) / 1000).toFixed(1)} s after the first request, drained ${spanSeconds.toFixed(1)} s later: ${(accepted / spanSeconds).toFixed(0)} movements/s`);
    }
    console.log(`records not yet taken when the load ended: ${backlogs.join(', ')}`);
    console.log(describeCpu(cpuAtStart, cpuAtEnd, availableParallelism()));
    // Per movement, the detect process's CPU is what load on the machine distorts least (the
    // ratio and the latency wait for whatever else runs there).
    const detectCpu = cpuAtEnd.named.get('detect')! - cpuAtStart.named.get('detect')!;
    console.log(`detect process CPU ${((detectCpu * 1e6) / accepted).toFixed(0)} µs per movement (${detectCpu.toFixed(1)} s for ${accepted})`);
    console.log(`PostgreSQL for the detect process CPU ${((detectBackendCpu * 1e6) / accepted).toFixed(0)} µs per movement (${detectBackendCpu.toFixed(1)} s)`);
    const detectPeak = statusKiB(pids.get('detect')!, 'VmHWM');
    if (detectPeak !== undefined) console.log(`detect process peak RSS ${(detectPeak / 1024).toFixed(0)} MiB${process.env.BENCH_MODEL ? ` (model ${process.env.BENCH_MODEL} live)` : ''}${loadPeak === undefined ? '' : `; ${(loadPeak / 1024).toFixed(0)} MiB once parties and accounts were loaded`}`);
    console.log(`RESULT detection/ingest throughput ${spanRatio} over detection's own span (target >= 1.0; ${(detectRate / ingestRate).toFixed(2)} from the first request to the drain), p95 202→alert ${p95.toFixed(0)} ms (target <= ${TARGET_P95_MS} ms)`);
  } finally {
    await pool.end();
  }
});

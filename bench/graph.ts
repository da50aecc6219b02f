// bench/graph: the network graph and behavioural aggregates pipelines against ingest, and graph
// query latency, on the IBM AMLSim data set BENCH_DATASET_DIR (default ibm_amlsim/20K_fanin200 of
// the shared data sets, found as the tests find them: 20,000 nodes, 118,250 transactions). The data
// set, the queries and the accounts asked about are bench/lib/graph-queries.ts's, shared with
// bench/engines/neo4j.ts.
//
//   Data. Node N is party amlsim-P<N> (a person, active) holding account amlsim-A<N> (USD,
//   active), both from 2025. Transaction row i (0-based, after the header) is p2p movement
//   amlsim-M<i>, completed, from A<source> to A<target>, its value in integer cents (the decimal
//   split on '.', never a float), occurred_at = 2026-01-01T00:00:00Z + (time - 1) days + (i mod
//   86,400) s. Movements are sent in that time order (ties by i). BENCH_MOVEMENTS keeps only the
//   first rows of the file (a prefix in time) for a quick check.
//   (1) Setup. `svc run api` on a fresh data directory (it starts the embedded PostgreSQL), a
//       tenant (base asset USD) and an ingest key. The parties and accounts go in through signed
//       POST /v1/batches (batches of 1000 over 4 keep-alive connections); then `svc run pipeline
//       canonical`, `... graph` and `... aggregates` are started, each its own process, and the
//       bench waits until every group has drained (below) and checks that all were processed.
//       The pipelines start after this load, so that (2) and (3) measure movements, not the
//       entities' first processing. (Started on empty tables, an earlier build's canonical pipeline
//       kept a generic plan made for the empty log and read about 200 events/s; pipelines now plan
//       every statement for its values: platform/postgres/pool.ts, customPlans.)
//   (2) Load, concurrent. With the three pipelines running, every movement is sent in batches of
//       1000 over 4 keep-alive connections (the bodies are built before the clock starts). Ingest
//       events/s = movements / (first request to last 202). Then "complete after last 202": from
//       the last 202 to the first 100 ms poll that finds every group drained. A group is drained
//       when, in every partition, its committed consumer offset is at or past the last record of
//       its topics in the log (one statement, so one snapshot: the canonical pipeline commits its
//       change records before its offset, so when canonical is drained the graph and aggregates
//       groups are compared with every record they will get). Per group, the first poll that found
//       it (and canonical) drained is shown too. Cross-check: graph_transfers rows = movements,
//       agg_activity rows = 4 x movements (each account and each party of both legs), every
//       movement processed, and the bus's own lag (count of unread records) 0 for every group.
//   (3) Keep-up, isolated. The graph and aggregates processes are stopped; their state is reset
//       (TRUNCATE of graph_applied, graph_nodes, graph_edges, graph_transfers, agg_activity and any
//       other graph_/agg_ table; their rows of consumer_offsets and consumer_members deleted) and a
//       fresh `svc run pipeline graph` and `svc run pipeline aggregates` are started together, to
//       re-read the whole log. Start is the earlier of their "graph pipeline running" and
//       "aggregates pipeline running" lines (process start-up, loading the code and connecting, is
//       not counted; partitions leased first start work just before the line). Each group's
//       records/s = the change records of its topics in the log (parties + accounts + movements
//       for graph, movements for aggregates) / (start to the first 100 ms poll that finds that
//       group drained). Keep-up ratio = min(graph records/s, aggregates records/s) / ingest
//       events/s of (2); target >= 1.0. The same cross-check of row counts follows. The canonical
//       pipeline stays up (idle) throughout, and the two fresh pipelines stay up (idle) for (4).
//   (4) Query latency, in this process: PostgresGraphStore on a pg pool of its own to the same
//       PostgreSQL. BENCH_QUERIES (default 300) distinct accounts drawn by a seeded PRNG (fixed
//       seed: the same accounts every run), after a warm-up of 20 other accounts; per account,
//       sequentially: a primary-key lookup of the account's graph_nodes row (the baseline), a
//       depth-2 ego network (node cap 500), a cycle search (2026-01-01 to 2026-06-01, 2 to 6 hops,
//       amounts within 10 %, at most 50) and a fan-in (same window, at most 100 counterparties).
//       Each is timed from the call to its answer (the store's reads run in a read-only
//       transaction with a 2 s budget, which answers truncated when spent). p50/p95/p99/max in ms,
//       how many answered truncated, and each p95 as a multiple of the baseline's p95. Targets:
//       ego p95 <= 50 ms, cycles p95 <= 200 ms (shown as PASS/FAIL; a miss does not fail the run).
//   (5) Peak RSS of the graph and aggregates processes over (2) and (3) (two processes each: the
//       one of (2) and the fresh one of (3)), of the canonical pipeline over (2) and of the API
//       over (2) and (3): VmRSS sampled every 100 ms and VmHWM reset when sampling starts.
//
//   npx tsx bench/graph.ts          (or npm run bench:graph)
//
// The last line printed sums it up: keep-up ratio, the rates, time to complete after the last
// 202, query p95s and the peak RSS of the two pipelines. BENCH_DRAIN_TIMEOUT_S (default 900) is
// how long any wait for drained groups may take before the bench gives up. Everything started
// here is stopped and the data directory removed, also on error and Ctrl-C.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AGGREGATES, CANONICAL, GRAPH, type ConsumerGroupSpec } from '../pipelines/groups.ts';
import { PARTITIONS, PostgresLogBus, streamOf } from '../platform/bus/postgres-log.ts';
import { PostgresGraphStore } from '../platform/graph/postgres/store.ts';
import { accountItem, accountKey, loadDataset, MOVEMENT_PREFIX, movementItem, partyItem, type Dataset } from './lib/amlsim.ts';
import { batchesOf, ingestBatches, startPipeline, statusCounts } from './lib/batches.ts';
import { startService, svc, TENANT } from './lib/bench-service.ts';
import { connectClients, embeddedConnection } from './lib/embedded-pg.ts';
import { amlsimDatasetDir, CYCLES, drawAccounts, EGO, FAN_IN, SINCE, UNTIL, WARMUP_QUERIES } from './lib/graph-queries.ts';
import { positiveInteger, positiveNumber } from './lib/options.ts';
import { stopChild, type Child } from './lib/processes.ts';
import { mb, peakBytes, sampleRss, type RssPeak, type RssSampler } from './lib/rss.ts';
import { percentile, table } from './lib/stats.ts';
import { runBench, type Teardown } from './lib/teardown.ts';

const DATASET_DIR = amlsimDatasetDir();
const MOVEMENT_LIMIT = positiveInteger('BENCH_MOVEMENTS', Number.MAX_SAFE_INTEGER);
const QUERIES = positiveInteger('BENCH_QUERIES', 300);
const DRAIN_TIMEOUT_S = positiveNumber('BENCH_DRAIN_TIMEOUT_S', 900);
const BATCH_SIZE = 1000;
const INGEST_CONNECTIONS = 4;
const POLL_MS = 100;
const PROGRESS_EVERY_MS = 10_000;
const RSS_INTERVAL_MS = 100;
const TARGET_RATIO = 1.0;
const TARGET_EGO_P95_MS = 50;
const TARGET_CYCLES_P95_MS = 200;
// Activities per movement: the debit and credit account and the debit and credit party.
const ACTIVITIES_PER_MOVEMENT = 4;

const GROUPS: ConsumerGroupSpec[] = [CANONICAL, GRAPH, AGGREGATES];

const benchStarted = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - benchStarted) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---- ingest ----------------------------------------------------------------------------------

// ---- processes -------------------------------------------------------------------------------

function exitText(child: Child): string {
  return child.process.signalCode ? `signal ${child.process.signalCode}` : `exit ${child.process.exitCode}`;
}

function checkAlive(children: Child[], what: string): void {
  for (const child of children) {
    if (child.hasExited()) throw new Error(`${child.name} exited (${exitText(child)}) ${what}:\n${child.output()}`);
  }
}

// ---- the database, read directly -------------------------------------------------------------

// Per group: how many partitions have a committed offset short of the last record of the group's
// topics (or none at all while records exist). One statement: one snapshot for all the groups.
const BEHIND = (() => {
  const values: unknown[] = [];
  const parts = GROUPS.map((spec) => {
    values.push(spec.group, streamOf(spec.topics), spec.topics);
    const n = values.length;
    return `SELECT $${n - 2}::text AS group_name, p.partition, last.writer_xid, last.position
              FROM generate_series(0, ${PARTITIONS - 1}) AS p(partition)
              CROSS JOIN LATERAL (
                SELECT o.writer_xid, o.position FROM outbox o
                 WHERE o.stream = $${n - 1}::text AND o.partition = p.partition AND o.topic = ANY($${n}::text[])
                 ORDER BY o.writer_xid DESC, o.position DESC LIMIT 1) AS last`;
  });
  // Unnamed: planned afresh on every poll, so a plan made while the log was empty is never kept.
  return {
    text: `WITH ends AS (${parts.join('\n UNION ALL ')})
           SELECT e.group_name,
                  (count(*) FILTER (WHERE c.partition IS NULL OR (c.writer_xid, c.position) < (e.writer_xid, e.position)))::int AS behind
             FROM ends e LEFT JOIN consumer_offsets c ON c.group_name = e.group_name AND c.partition = e.partition
            GROUP BY e.group_name`,
    values,
  };
})();

async function partitionsBehind(db: pg.Client): Promise<Map<string, number>> {
  const { rows } = await db.query<{ group_name: string; behind: number }>(BEHIND);
  const behind = new Map(GROUPS.map((spec) => [spec.group, 0]));
  for (const row of rows) behind.set(row.group_name, row.behind);
  return behind;
}

// Records each group has not read yet, by the bus's own count (a scan of the backlog: used for
// progress lines and the final check only, not in the 100 ms poll).
async function busLag(bus: PostgresLogBus): Promise<Map<string, number>> {
  const lag = new Map<string, number>();
  for (const spec of GROUPS) lag.set(spec.group, (await bus.lag(spec.group, spec.topics)).reduce((n, p) => n + p.records, 0));
  return lag;
}

function mapText(map: Map<string, number>, unit = ''): string {
  return [...map].map(([key, value]) => `${key} ${value}${unit}`).join(', ') || 'none';
}

// Polls every POLL_MS until the groups in `groups` are drained (the canonical group always
// counts as well: the others are only done once it is). Resolves with performance.now() of the
// first poll that found each group drained. Fails when one of `watch` exits or the time is up.
async function waitForDrain(
  db: pg.Client,
  bus: PostgresLogBus,
  groups: string[],
  watch: Child[],
  label: string,
): Promise<Map<string, number>> {
  const started = performance.now();
  let lastProgress = started;
  const drainedAt = new Map<string, number>();
  for (;;) {
    const behind = await partitionsBehind(db);
    const now = performance.now();
    const canonicalDone = behind.get(CANONICAL.group) === 0;
    for (const group of [CANONICAL.group, ...groups]) {
      if (!drainedAt.has(group) && canonicalDone && behind.get(group) === 0) drainedAt.set(group, now);
    }
    if (groups.every((group) => drainedAt.has(group)) && drainedAt.has(CANONICAL.group)) return drainedAt;
    checkAlive(watch, `while draining ${label}`);
    if (now - started > DRAIN_TIMEOUT_S * 1000) {
      throw new Error(`${label}: not drained within ${DRAIN_TIMEOUT_S} s (records unread: ${mapText(await busLag(bus))})`);
    }
    if (now - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = now;
      log(`  ${((now - started) / 1000).toFixed(0)} s: ${label}: records unread: ${mapText(await busLag(bus))}`);
    }
    await sleep(POLL_MS);
  }
}

async function expectProcessed(db: pg.Client, object: string, prefix: string, expected: number): Promise<void> {
  const counts = await statusCounts(db, object, prefix);
  if ((counts.get('processed') ?? 0) !== expected || counts.size !== 1) {
    throw new Error(`${object} events: expected ${expected} processed, found ${mapText(counts)}`);
  }
}

interface RowCounts {
  graphNodes: number;
  graphTransfers: number;
  aggActivity: number;
}

async function rowCounts(db: pg.Client): Promise<RowCounts> {
  const { rows } = await db.query<{ nodes: number; transfers: number; activity: number }>(
    `SELECT (SELECT count(*) FROM graph_nodes WHERE tenant_id = $1)::int AS nodes,
            (SELECT count(*) FROM graph_transfers WHERE tenant_id = $1)::int AS transfers,
            (SELECT count(*) FROM agg_activity WHERE tenant_id = $1)::int AS activity`,
    [TENANT],
  );
  const row = rows[0]!;
  return { graphNodes: row.nodes, graphTransfers: row.transfers, aggActivity: row.activity };
}

// Fails loudly when the stores do not hold exactly what the data set makes.
function checkCounts(counts: RowCounts, dataset: Dataset, label: string): void {
  const movements = dataset.transactions.length;
  const expected: RowCounts = { graphNodes: 2 * dataset.nodes.length, graphTransfers: movements, aggActivity: ACTIVITIES_PER_MOVEMENT * movements };
  log(
    `${label}: graph_nodes ${counts.graphNodes} (expected ${expected.graphNodes}), graph_transfers ${counts.graphTransfers} ` +
      `(expected ${expected.graphTransfers}), agg_activity ${counts.aggActivity} (expected ${expected.aggActivity})`,
  );
  const wrong = (Object.keys(expected) as Array<keyof RowCounts>).filter((key) => counts[key] !== expected[key]);
  if (wrong.length > 0) {
    throw new Error(`${label}: row counts differ from the data set: ${wrong.map((key) => `${key} ${counts[key]}, expected ${expected[key]}`).join('; ')}`);
  }
}

// ---- RSS -------------------------------------------------------------------------------------

class RssWatch {
  private readonly samplers = new Map<string, RssSampler>();
  readonly peaks = new Map<string, RssPeak>();

  start(key: string, pid: number): void {
    this.samplers.set(key, sampleRss(pid, RSS_INTERVAL_MS));
  }

  stop(key: string): void {
    const sampler = this.samplers.get(key);
    if (!sampler) return;
    this.samplers.delete(key);
    this.peaks.set(key, sampler.stop());
  }

  stopAll(): void {
    for (const key of [...this.samplers.keys()]) this.stop(key);
  }

  peak(...keys: string[]): number | undefined {
    const values = keys.map((key) => peakBytes(this.peaks.get(key))).filter((v): v is number => v !== undefined);
    return values.length > 0 ? Math.max(...values) : undefined;
  }
}

// ---- queries ---------------------------------------------------------------------------------

interface QueryStats {
  name: string;
  ms: Float64Array;
  truncated: number;
  // What the answers held, for the report.
  size: string;
}

interface QueryResults {
  accounts: number;
  baseline: QueryStats;
  ego: QueryStats;
  cycles: QueryStats;
  fanIn: QueryStats;
}

async function queryPhase(pool: pg.Pool, dataset: Dataset): Promise<QueryResults> {
  const store = new PostgresGraphStore(pool);
  const accounts = drawAccounts(dataset.nodes, Math.min(dataset.nodes.length, WARMUP_QUERIES + QUERIES));
  const warmup = accounts.slice(0, WARMUP_QUERIES);
  const measured = accounts.slice(WARMUP_QUERIES);
  const baselineQuery = (key: string) =>
    pool.query({
      name: 'bench-graph-pk',
      text: `SELECT attrs FROM graph_nodes WHERE tenant_id = $1 AND kind = 'account' AND key = $2`,
      values: [TENANT, key],
    });

  log(`(4) warm-up: ${warmup.length} accounts, each query once...`);
  for (const node of warmup) {
    const key = accountKey(node);
    await baselineQuery(key);
    await store.egoNetwork(TENANT, { kind: 'account', key }, EGO);
    await store.cycles(TENANT, key, CYCLES);
    await store.fanIn(TENANT, key, FAN_IN);
  }

  log(`(4) measuring ${measured.length} accounts: pk lookup, ego network, cycles, fan-in each, sequentially...`);
  const n = measured.length;
  const times = { baseline: new Float64Array(n), ego: new Float64Array(n), cycles: new Float64Array(n), fanIn: new Float64Array(n) };
  const truncated = { ego: 0, cycles: 0, fanIn: 0 };
  let found = 0;
  let egoNodes = 0;
  let egoEdges = 0;
  let cyclesFound = 0;
  let withCycles = 0;
  let counterparties = 0;
  for (let i = 0; i < n; i++) {
    const key = accountKey(measured[i]!);
    let t0 = performance.now();
    const row = await baselineQuery(key);
    times.baseline[i] = performance.now() - t0;
    if (row.rows.length === 1) found++;

    t0 = performance.now();
    const ego = await store.egoNetwork(TENANT, { kind: 'account', key }, EGO);
    times.ego[i] = performance.now() - t0;
    if (ego.truncated) truncated.ego++;
    egoNodes += ego.nodes.length;
    egoEdges += ego.edges.length;

    t0 = performance.now();
    const cycles = await store.cycles(TENANT, key, CYCLES);
    times.cycles[i] = performance.now() - t0;
    if (cycles.truncated) truncated.cycles++;
    cyclesFound += cycles.cycles.length;
    if (cycles.cycles.length > 0) withCycles++;

    t0 = performance.now();
    const fanIn = await store.fanIn(TENANT, key, FAN_IN);
    times.fanIn[i] = performance.now() - t0;
    if (fanIn.truncated) truncated.fanIn++;
    counterparties += fanIn.counterparties.length;
  }
  const mean = (total: number) => (n > 0 ? total / n : NaN).toFixed(1);
  return {
    accounts: n,
    baseline: { name: 'baseline: graph_nodes primary-key lookup', ms: times.baseline.sort(), truncated: 0, size: `${found} of ${n} found` },
    ego: { name: 'ego network, depth 2, node cap 500', ms: times.ego.sort(), truncated: truncated.ego, size: `mean ${mean(egoNodes)} nodes, ${mean(egoEdges)} edges` },
    cycles: {
      name: 'cycles, 2-6 hops, ±10 %, limit 50',
      ms: times.cycles.sort(),
      truncated: truncated.cycles,
      size: `${cyclesFound} cycles, ${withCycles} accounts with any`,
    },
    fanIn: { name: 'fan-in, limit 100', ms: times.fanIn.sort(), truncated: truncated.fanIn, size: `mean ${mean(counterparties)} counterparties` },
  };
}

// ---- running ---------------------------------------------------------------------------------

interface LoadResult {
  movements: number;
  ingestSeconds: number;
  // Seconds from the last 202 to the first poll that found each group (and all) drained.
  completeAfter: Map<string, number>;
  completeAll: number;
  counts: RowCounts;
}

interface KeepUpResult {
  records: Map<string, number>;
  // Seconds from the start (the earlier "running" line) to each group drained.
  seconds: Map<string, number>;
  // How far apart the two "running" lines were.
  startSkewMs: number;
  counts: RowCounts;
}

async function main(teardown: Teardown): Promise<void> {
  log(`reading ${DATASET_DIR}...`);
  const dataset = await loadDataset(DATASET_DIR, MOVEMENT_LIMIT);
  const movements = dataset.transactions.length;
  log(`${dataset.nodes.length} nodes, ${movements} transactions (time steps ${dataset.transactions[0]?.step ?? '-'} to ${dataset.transactions.at(-1)?.step ?? '-'})`);

  const rss = new RssWatch();
  const service = await startService(teardown, log, { name: 'api' });
  const [db] = (await connectClients(service.dataDir, 1, teardown.clients)) as [pg.Client];
  const pool = new pg.Pool({ ...(await embeddedConnection(service.dataDir)), max: 2 });
  pool.on('error', () => undefined);
  try {
    const bus = new PostgresLogBus(pool);

    // ---- (1) setup ----
    // The entities go in before the pipelines start (see the header).
    log(`(1) ingesting ${dataset.nodes.length} parties and ${dataset.nodes.length} accounts...`);
    const setupSeconds = await ingestBatches(service, INGEST_CONNECTIONS, [...batchesOf(dataset.nodes.map(partyItem)), ...batchesOf(dataset.nodes.map(accountItem))]);
    log(`(1) ingested in ${setupSeconds.toFixed(1)} s; starting the canonical, graph and aggregates pipelines...`);
    const canonical = await startPipeline(teardown, service, 'canonical', 'pipeline canonical');
    const graph2 = await startPipeline(teardown, service, 'graph', 'pipeline graph');
    const aggregates2 = await startPipeline(teardown, service, 'aggregates', 'pipeline aggregates');
    const running = [service.api, canonical.child, graph2.child, aggregates2.child];
    log('(1) waiting for every group to drain...');
    await waitForDrain(db, bus, [GRAPH.group, AGGREGATES.group], running, 'parties and accounts');
    await expectProcessed(db, 'party', 'amlsim-P', dataset.nodes.length);
    await expectProcessed(db, 'account', 'amlsim-A', dataset.nodes.length);
    log('(1) parties and accounts processed by every pipeline');

    // ---- (2) load, concurrent ----
    const bodies = batchesOf(dataset.transactions.map(movementItem));
    rss.start('api', service.api.pid);
    rss.start('canonical', canonical.child.pid);
    rss.start('graph (2)', graph2.child.pid);
    rss.start('aggregates (2)', aggregates2.child.pid);
    log(`(2) ingesting ${movements} movements in ${bodies.length} batch(es) of up to ${BATCH_SIZE} over ${INGEST_CONNECTIONS} connections, pipelines running...`);
    const ingestSeconds = await ingestBatches(service, INGEST_CONNECTIONS, bodies);
    const last202 = performance.now();
    log(`(2) ingest: ${movements} events in ${ingestSeconds.toFixed(2)} s = ${(movements / ingestSeconds).toFixed(0)} events/s; waiting for every group...`);
    const drained2 = await waitForDrain(db, bus, [GRAPH.group, AGGREGATES.group], running, 'movements (2)');
    rss.stop('canonical');
    const completeAfter = new Map([...drained2].map(([group, at]) => [group, (at - last202) / 1000]));
    const completeAll = Math.max(...completeAfter.values());
    log(`(2) every group drained ${completeAll.toFixed(2)} s after the last 202 (${mapText(new Map([...completeAfter].map(([g, s]) => [g, Number(s.toFixed(2))])), ' s')})`);
    const lag2 = await busLag(bus);
    if ([...lag2.values()].some((records) => records !== 0)) throw new Error(`(2) the bus still counts unread records: ${mapText(lag2)}`);
    await expectProcessed(db, 'movement', MOVEMENT_PREFIX, movements);
    const counts2 = await rowCounts(db);
    checkCounts(counts2, dataset, '(2) rows');
    const load: LoadResult = { movements, ingestSeconds, completeAfter, completeAll, counts: counts2 };

    // ---- (3) keep-up, isolated ----
    log('(3) stopping the graph and aggregates pipelines...');
    await Promise.all([stopChild(graph2.child, 'SIGTERM'), stopChild(aggregates2.child, 'SIGTERM')]);
    rss.stop('graph (2)');
    rss.stop('aggregates (2)');
    for (const child of [graph2.child, aggregates2.child]) {
      if (child.process.exitCode !== 0) log(`note: ${child.name} exited with ${exitText(child)}`);
    }
    const { rows: tables } = await db.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables
        WHERE schemaname = current_schema() AND (tablename LIKE 'graph\\_%' OR tablename LIKE 'agg\\_%') ORDER BY tablename`,
    );
    const reset = tables.map((t) => t.name);
    for (const required of ['graph_applied', 'graph_nodes', 'graph_edges', 'graph_transfers', 'agg_activity']) {
      if (!reset.includes(required)) throw new Error(`(3) table ${required} not found (found: ${reset.join(', ')})`);
    }
    await db.query(`TRUNCATE ${reset.map((name) => `"${name}"`).join(', ')}`);
    const resetGroups = [GRAPH.group, AGGREGATES.group];
    await db.query('DELETE FROM consumer_offsets WHERE group_name = ANY($1::text[])', [resetGroups]);
    await db.query('DELETE FROM consumer_members WHERE group_name = ANY($1::text[])', [resetGroups]);
    log(`(3) truncated ${reset.join(', ')}; offsets and members of ${resetGroups.join(', ')} deleted`);
    const records = new Map<string, number>();
    for (const spec of [GRAPH, AGGREGATES]) {
      const { rows } = await db.query<{ records: number }>('SELECT count(*)::int AS records FROM outbox WHERE stream = $1 AND topic = ANY($2::text[])', [
        streamOf(spec.topics),
        spec.topics,
      ]);
      records.set(spec.group, rows[0]!.records);
    }
    const expectedRecords = new Map([
      [GRAPH.group, 2 * dataset.nodes.length + movements],
      [AGGREGATES.group, movements],
    ]);
    for (const [group, count] of records) {
      if (count !== expectedRecords.get(group)) log(`note: ${count} change records for ${group} in the log, expected ${expectedRecords.get(group)}`);
    }
    log(`(3) starting fresh graph and aggregates pipelines to re-read ${mapText(records, ' records')}...`);
    const [graph3, aggregates3] = await Promise.all([
      startPipeline(teardown, service, 'graph', 'pipeline graph (3)').then((started) => {
        rss.start('graph (3)', started.child.pid);
        return started;
      }),
      startPipeline(teardown, service, 'aggregates', 'pipeline aggregates (3)').then((started) => {
        rss.start('aggregates (3)', started.child.pid);
        return started;
      }),
    ]);
    const start3 = Math.min(graph3.readyAt, aggregates3.readyAt);
    const drained3 = await waitForDrain(db, bus, resetGroups, [service.api, canonical.child, graph3.child, aggregates3.child], 'keep-up (3)');
    rss.stopAll();
    const seconds = new Map(resetGroups.map((group) => [group, (drained3.get(group)! - start3) / 1000]));
    log(`(3) drained: ${[...seconds].map(([group, s]) => `${group} ${s.toFixed(2)} s = ${(records.get(group)! / s).toFixed(0)} records/s`).join(', ')}`);
    const counts3 = await rowCounts(db);
    checkCounts(counts3, dataset, '(3) rows');
    const keepUp: KeepUpResult = { records, seconds, startSkewMs: Math.abs(graph3.readyAt - aggregates3.readyAt), counts: counts3 };

    // ---- (4) queries ----
    const queries = await queryPhase(pool, dataset);

    checkAlive([service.api, canonical.child, graph3.child, aggregates3.child], 'during the run');
    log('running `svc status --json`...');
    const status = (await svc(service.env, ['status', '--json'])).trim().split('\n').pop() ?? '';
    report(dataset, setupSeconds, load, keepUp, queries, rss, status);
  } finally {
    rss.stopAll();
    await pool.end().catch(() => undefined);
  }
}

// ---- reporting -------------------------------------------------------------------------------

function report(dataset: Dataset, setupSeconds: number, load: LoadResult, keepUp: KeepUpResult, queries: QueryResults, rss: RssWatch, status: string): void {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const movements = load.movements;
  const ingestRate = movements / load.ingestSeconds;
  const rate = (group: string) => keepUp.records.get(group)! / keepUp.seconds.get(group)!;
  const graphRate = rate(GRAPH.group);
  const aggregatesRate = rate(AGGREGATES.group);
  const ratio = Math.min(graphRate, aggregatesRate) / ingestRate;

  out(`\ndata set: ${DATASET_DIR}: ${dataset.nodes.length} parties and accounts (ingested in ${setupSeconds.toFixed(1)} s), ${movements} movements`);

  out(`\n(2) load: ${movements} movements, batches of ${BATCH_SIZE} over ${INGEST_CONNECTIONS} connections, canonical + graph + aggregates running`);
  out(
    table([
      ['measure', 'events', 'seconds', 'events/s'],
      ['ingest: signed POST /v1/batches, first request to last 202', String(movements), load.ingestSeconds.toFixed(2), ingestRate.toFixed(0)],
      ...[CANONICAL, GRAPH, AGGREGATES].map((spec) => [
        `last 202 -> ${spec.group} drained (${POLL_MS} ms poll)`,
        '',
        `+${load.completeAfter.get(spec.group)!.toFixed(2)}`,
        '',
      ]),
      ['last 202 -> every group drained', '', `+${load.completeAll.toFixed(2)}`, ''],
    ]),
  );
  out(`rows after (2): graph_nodes ${load.counts.graphNodes}, graph_transfers ${load.counts.graphTransfers}, agg_activity ${load.counts.aggActivity} (= ${ACTIVITIES_PER_MOVEMENT} x ${movements})`);

  out(`\n(3) keep-up, isolated: fresh graph and aggregates pipelines re-reading the log (started ${keepUp.startSkewMs.toFixed(0)} ms apart)`);
  out(
    table([
      ['pipeline', 'records', 'seconds', 'records/s', 'vs ingest'],
      ...[GRAPH, AGGREGATES].map((spec) => [
        `${spec.group}: start to drained`,
        String(keepUp.records.get(spec.group)),
        keepUp.seconds.get(spec.group)!.toFixed(2),
        rate(spec.group).toFixed(0),
        (rate(spec.group) / ingestRate).toFixed(2),
      ]),
    ]),
  );
  out(`rows after (3): graph_nodes ${keepUp.counts.graphNodes}, graph_transfers ${keepUp.counts.graphTransfers}, agg_activity ${keepUp.counts.aggActivity}`);
  out(`keep-up ratio min(graph, aggregates)/ingest: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(1)}: ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'})`);

  const basel95 = percentile(queries.baseline.ms, 95);
  const verdict = (p95: number, target: number | undefined) => (target === undefined ? '' : `<= ${target}: ${p95 <= target ? 'PASS' : 'FAIL'}`);
  const row = (stats: QueryStats, target?: number) => {
    const p95 = percentile(stats.ms, 95);
    return [
      stats.name,
      String(stats.ms.length),
      percentile(stats.ms, 50).toFixed(2),
      p95.toFixed(2),
      percentile(stats.ms, 99).toFixed(2),
      (stats.ms.length > 0 ? stats.ms[stats.ms.length - 1]! : NaN).toFixed(2),
      String(stats.truncated),
      `${(p95 / basel95).toFixed(1)}x`,
      verdict(p95, target),
      stats.size,
    ];
  };
  out(`\n(4) query latency: ${queries.accounts} accounts (seeded), sequential, after a warm-up of ${WARMUP_QUERIES}; window ${SINCE.toISOString()} to ${UNTIL.toISOString()}`);
  out(
    table([
      ['ms', 'n', 'p50', 'p95', 'p99', 'max', 'truncated', 'p95/baseline', 'target p95', 'answers'],
      row(queries.baseline),
      row(queries.ego, TARGET_EGO_P95_MS),
      row(queries.cycles, TARGET_CYCLES_P95_MS),
      row(queries.fanIn),
    ]),
  );

  const rssRow = (name: string, keys: string[]) => [
    name,
    ...keys.map((key) => mb(peakBytes(rss.peaks.get(key)))),
    ...Array.from({ length: 2 - keys.length }, () => ''),
    mb(rss.peak(...keys)),
  ];
  out(`\n(5) peak RSS, MB (VmRSS sampled every ${RSS_INTERVAL_MS} ms and VmHWM reset at the start of sampling${[...rss.peaks.values()].every((p) => p.hwmReset) ? '' : '; some VmHWM could not be reset and were left out'})`);
  out(
    table([
      ['process', 'over (2)', 'over (3)', 'peak'],
      rssRow('pipeline graph', ['graph (2)', 'graph (3)']),
      rssRow('pipeline aggregates', ['aggregates (2)', 'aggregates (3)']),
      ['pipeline canonical', mb(peakBytes(rss.peaks.get('canonical'))), '', mb(rss.peak('canonical'))],
      ['api (over (2) and (3))', '', '', mb(rss.peak('api'))],
    ]),
  );
  out(`svc status --json at the end: ${status}`);

  out(
    `graph: keep-up ratio ${ratio.toFixed(2)} (graph ${graphRate.toFixed(0)}/s, aggregates ${aggregatesRate.toFixed(0)}/s vs ingest ${ingestRate.toFixed(0)}/s); ` +
      `complete +${load.completeAll.toFixed(1)} s after last 202; ego p95 ${percentile(queries.ego.ms, 95).toFixed(1)} ms, ` +
      `cycles p95 ${percentile(queries.cycles.ms, 95).toFixed(1)} ms, fan-in p95 ${percentile(queries.fanIn.ms, 95).toFixed(1)} ms; ` +
      `peak RSS graph ${mb(rss.peak('graph (2)', 'graph (3)'))} MB, aggregates ${mb(rss.peak('aggregates (2)', 'aggregates (3)'))} MB`,
  );
}

// reportStops: pipelines may take a while to let go of their partitions; the log says which did.
await runBench('graph', log, main, true);

// bench/engines/neo4j: graph reads on Neo4j against the PostgreSQL graph adapter, both holding the
// same network.
//
//   Data. The IBM AMLSim data set of bench/graph.ts (bench/lib/graph-queries.ts: BENCH_DATASET_DIR,
//   else ibm_amlsim/20K_fanin200 of the shared data sets), read by bench/lib/amlsim.ts. Quick: the
//   first 20 000 movements in time and the accounts they touch; else all of it (20 000 accounts,
//   118 250 movements), as bench/graph.ts loads it. Each party, account and movement becomes the change the graph pipeline
//   would apply for it (bench/lib/amlsim-graph.ts, through pipelines/graph's graphChangeOf).
//   Stores, opened as the service opens them (platform/engines.ts openGraphStore): PostgreSQL, a
//   fresh embedded server (migrated; writes on a pool of 4, reads on the service's read pool);
//   Neo4j, NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD (options.neo4j), else Neo4j started here by
//   platform/local-engines on the bench's temporary directory (migrated).
//   (1) Load, through each store's apply() directly (no API, no bus), in batches of 500 (the
//       embedded log's delivery batch, so the graph pipeline's apply calls): the entities, then
//       the movements in time order; PostgreSQL first, then Neo4j, one after the other. Per store:
//       changes/s and CPU per change (the server's process or processes, and this process: the
//       shared apply logic and the driver run here). Cross-check: nodes and movements each store
//       holds = the data set's. Then ANALYZE of the graph tables, so PostgreSQL plans the reads
//       with statistics of the whole load, whenever its own ANALYZE-on-growth last ran.
//   (2) Reads, sequential, on bench/graph.ts's accounts (the same seeded draw, quick 60, else 300,
//       after a warm-up of 20 others) and queries: a depth-2 ego network (node cap 500) and a cycle
//       search (2026-01-01 to 2026-06-01, 2 to 6 hops, amounts within 10 %, at most 50), each
//       timed from the call to its answer (each store's read budget is the service's, 2 s: a read
//       that spends it answers truncated). Accounts go in blocks of 10; each block is asked of one
//       store, then of the other, the first store alternating from block to block (neither always
//       runs on a machine warmed by the other), with CPU read at the block's ends. The answers of
//       both stores are compared for the warm-up and the first 20 measured accounts, truncated
//       ones included (a node cap cuts both alike), unless one took half the read budget or more
//       (a difference fails the bench: the figures would not be of the same work).
//   Figures. p50, p95 and max (ms, nearest rank) per store and query; ratio = Neo4j p95 /
//   PostgreSQL p95 (below 1: Neo4j faster); CPU per read; version = the server's agent string
//   (Bolt); peak memory of the Neo4j started here (bench/lib/engine-memory.ts).
//
// benchNeo4jGraph() returns the figures; bench/engines.ts prints them.

import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import neo4j, { type Driver } from 'neo4j-driver';
import { configSchema } from '../../platform/config.ts';
import { openGraphStore } from '../../platform/engines.ts';
import { Neo4jGraphStore, type Neo4jConnection } from '../../platform/graph/neo4j/store.ts';
import type { GraphChange, GraphStore } from '../../platform/graph/port.ts';
import { DEFAULT_READ_BUDGET_MS } from '../../platform/graph/shared/store.ts';
import { startLocalEngines } from '../../platform/local-engines/index.ts';
import { startEmbeddedPostgres } from '../../platform/postgres/embedded.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { createPool, type Pool } from '../../platform/postgres/pool.ts';
import { amlsimGraphChanges } from '../lib/amlsim-graph.ts';
import { accountKey, loadDataset, type Dataset } from '../lib/amlsim.ts';
import { watchEngineMemory, type EngineMemory, type EngineMemoryWatch } from '../lib/engine-memory.ts';
import { amlsimDatasetDir, CYCLES, drawAccounts, EGO, WARMUP_QUERIES } from '../lib/graph-queries.ts';
import { cpuBetween, cpuSnapshot } from '../lib/proc-cpu.ts';
import { percentile } from '../lib/stats.ts';

export interface Neo4jBenchOptions {
  // A subset of the data and fewer accounts (a smoke run of a couple of minutes).
  quick?: boolean;
  // The server to measure; default NEO4J_URI (with NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE),
  // else a private server started here.
  neo4j?: Neo4jConnection;
  datasetDir?: string;
  // The first this many movements in time (default: 20 000 quick, else all).
  movements?: number;
  // Accounts measured (default: 60 quick, else 300).
  queries?: number;
  log?: (line: string) => void;
}

type Side = 'postgres' | 'neo4j';
type ReadName = 'ego' | 'cycles';

interface Latency {
  p50: number;
  p95: number;
  max: number;
}

// Milliseconds of CPU per unit of work: the server's (undefined when it runs elsewhere) and this
// process's.
export interface CpuPer {
  server: number | undefined;
  bench: number;
}

export interface Neo4jBenchResult {
  // The server's agent string, e.g. "Neo4j/5.26.30".
  version: string;
  server: string;
  dataset: string;
  accounts: number;
  movements: number;
  // Changes applied to each store (parties + accounts + movements).
  changes: number;
  load: Record<Side, { seconds: number; changesPerSecond: number; cpuMsPerChange: CpuPer }>;
  // Accounts measured (besides the warm-up).
  queried: number;
  reads: Record<ReadName, { postgres: Latency; neo4j: Latency; ratio: number; truncated: Record<Side, number> }>;
  cpuMsPerRead: Record<Side, CpuPer>;
  // Accounts whose answers were compared (and agreed), per query.
  compared: Record<ReadName, number>;
  // What the answers held (PostgreSQL's; the compared ones are the same on Neo4j).
  answers: { egoNodesMean: number; egoEdgesMean: number; cycles: number; accountsWithCycles: number };
  // The Neo4j started for the run (none when one was given).
  engines: EngineMemory[];
}

// The embedded log's default delivery batch (platform/bus/postgres-log.ts): the size of the graph
// pipeline's apply calls.
const APPLY_BATCH = 500;
const BLOCK = 10;
const COMPARED_MEASURED = 20;
const QUICK_MOVEMENTS = 20_000;

export async function benchNeo4jGraph(options: Neo4jBenchOptions = {}): Promise<Neo4jBenchResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const quick = options.quick ?? false;
  const datasetDir = options.datasetDir ?? amlsimDatasetDir();
  const movementLimit = options.movements ?? (quick ? QUICK_MOVEMENTS : Number.POSITIVE_INFINITY);
  const given = options.neo4j ?? fromEnv();
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    log(`engines/neo4j: reading ${datasetDir}...`);
    const loaded = await loadDataset(datasetDir, movementLimit);
    // All of it is what bench/graph.ts loads and draws its accounts from; a prefix keeps its own.
    const dataset = Number.isFinite(movementLimit) ? touchedOnly(loaded) : loaded;
    const queried = Math.min(options.queries ?? (quick ? 60 : 300), dataset.nodes.length - WARMUP_QUERIES);

    // PostgreSQL: a fresh embedded server on a directory of its own (reachable by the postgres
    // user the server runs as when this runs as root).
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-neo4j-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await chmod(dataDir, 0o755);
    log('engines/neo4j: starting PostgreSQL...');
    const server = await startEmbeddedPostgres({ dataDir, port: 0 });
    cleanups.push(() => server.stop());
    const pool = createPool(server.url(), 4);
    cleanups.push(() => pool.end());
    await migrate(pool);
    const pgDir = join(dataDir, 'pg');

    // Neo4j: the server given, or a private one.
    let connection = given;
    let neo4jPid: number | undefined;
    let memory: EngineMemoryWatch | undefined;
    if (!connection) {
      const local = await startLocalEngines({ dataDir: join(dataDir, 'local'), engines: ['neo4j'], detached: false, log });
      cleanups.push(() => local.stop({ graceMs: 10_000 }));
      const watch = watchEngineMemory(local.engines);
      memory = watch;
      // Before the server stops (cleanups run newest first), also when the bench fails.
      cleanups.push(async () => watch.stop());
      neo4jPid = local.engines.find((engine) => engine.name === 'neo4j')?.pid;
      connection = { uri: local.env.NEO4J_URI!, user: local.env.NEO4J_USER!, password: local.env.NEO4J_PASSWORD, database: local.env.NEO4J_DATABASE };
    }
    const database = connection.database ?? 'neo4j';

    // The stores as the service opens them (PostgreSQL reads on a read pool of their own).
    const openedPg = await openGraphStore(configSchema.parse({}), pool);
    cleanups.push(() => openedPg.close());
    const openedNeo4j = await openGraphStore(
      configSchema.parse({ SVC_GRAPH_STORE: 'neo4j', NEO4J_URI: connection.uri, NEO4J_USER: connection.user, NEO4J_PASSWORD: connection.password, NEO4J_DATABASE: database }),
      pool,
    );
    cleanups.push(() => openedNeo4j.close());
    const stores: Record<Side, GraphStore> = { postgres: openedPg.value, neo4j: openedNeo4j.value };

    // A driver of the bench's own, for what is not the port's: the version and the cross-check.
    const driver = neo4j.driver(connection.uri, neo4j.auth.basic(connection.user, connection.password ?? ''), { useBigInt: true });
    cleanups.push(() => driver.close());
    const version = (await driver.getServerInfo({ database })).agent ?? 'unknown';

    // A tenant of its own: on a server given by address, other data may live beside it (and it is
    // deleted at the end).
    const tenant = `bench-${randomBytes(4).toString('hex')}`;
    if (given) {
      const store = openedNeo4j.value;
      if (store instanceof Neo4jGraphStore) cleanups.push(() => store.deleteTenant(tenant));
    }

    // ---- (1) load ----
    const { entities, movements } = amlsimGraphChanges(dataset, tenant);
    const changes = [...entities, ...movements];
    log(`engines/neo4j: applying ${changes.length} changes (${dataset.nodes.length} parties and accounts, ${movements.length} movements) to PostgreSQL, then to ${version}...`);
    const cpu = () => cpuSnapshot(neo4jPid ?? -1, pgDir);
    const load = {} as Neo4jBenchResult['load'];
    for (const side of ['postgres', 'neo4j'] as const) {
      const before = cpu();
      await applyAll(stores[side], changes, (done) => log(`engines/neo4j: ${side}: ${done} of ${changes.length} changes applied`));
      const used = cpuBetween(before, cpu());
      load[side] = {
        seconds: round(used.wallSeconds, 2),
        changesPerSecond: Math.round(changes.length / used.wallSeconds),
        cpuMsPerChange: perUnit(side === 'postgres' ? used.postgres : neo4jPid === undefined ? undefined : used.process, used.self, changes.length),
      };
      log(`engines/neo4j: ${side}: ${load[side].seconds} s, ${load[side].changesPerSecond} changes/s`);
    }
    await pool.query('ANALYZE graph_applied, graph_nodes, graph_edges, graph_transfers');
    await checkCounts(pool, driver, database, tenant, dataset);

    // ---- (2) reads ----
    const accounts = drawAccounts(dataset.nodes, WARMUP_QUERIES + queried).map(accountKey);
    const reads: Record<ReadName, (store: GraphStore, key: string) => Promise<Answer>> = {
      ego: async (store, key) => {
        const answer = await store.egoNetwork(tenant, { kind: 'account', key }, EGO);
        return { answer, truncated: answer.truncated, size: [answer.nodes.length, answer.edges.length] };
      },
      cycles: async (store, key) => {
        const answer = await store.cycles(tenant, key, CYCLES);
        return { answer, truncated: answer.truncated, size: [answer.cycles.length] };
      },
    };
    const names = Object.keys(reads) as ReadName[];
    // CPU is read per block: a block must be all warm-up or all measured.
    if (WARMUP_QUERIES % BLOCK !== 0) throw new Error(`the warm-up (${WARMUP_QUERIES}) is not whole blocks of ${BLOCK}`);
    const times: Record<Side, Record<ReadName, number[]>> = { postgres: { ego: [], cycles: [] }, neo4j: { ego: [], cycles: [] } };
    const truncated: Record<ReadName, Record<Side, number>> = { ego: { postgres: 0, neo4j: 0 }, cycles: { postgres: 0, neo4j: 0 } };
    const cpuUsed: Record<Side, { server: number; bench: number }> = { postgres: { server: 0, bench: 0 }, neo4j: { server: 0, bench: 0 } };
    const compared: Record<ReadName, number> = { ego: 0, cycles: 0 };
    const sizes = { egoNodes: 0, egoEdges: 0, cycles: 0, withCycles: 0 };
    log(`engines/neo4j: warm-up on ${WARMUP_QUERIES} accounts, then ${queried} accounts: ${names.join(', ')} on each store, in blocks of ${BLOCK}...`);
    for (let start = 0, block = 0; start < accounts.length; start += BLOCK, block++) {
      const keys = accounts.slice(start, Math.min(start + BLOCK, accounts.length));
      const order: Side[] = block % 2 === 0 ? ['postgres', 'neo4j'] : ['neo4j', 'postgres'];
      const answers: Record<Side, Map<string, Answer>> = { postgres: new Map(), neo4j: new Map() };
      for (const side of order) {
        const before = cpu();
        for (const [i, key] of keys.entries()) {
          const measured = start + i >= WARMUP_QUERIES;
          for (const name of names) {
            const t0 = performance.now();
            const answer = await reads[name](stores[side], key);
            const ms = performance.now() - t0;
            answers[side].set(`${name} ${key}`, { ...answer, ms });
            if (!measured) continue;
            times[side][name].push(ms);
            if (answer.truncated) truncated[name][side]++;
          }
        }
        const used = cpuBetween(before, cpu());
        if (start >= WARMUP_QUERIES) {
          cpuUsed[side].server += side === 'postgres' ? used.postgres : used.process;
          cpuUsed[side].bench += used.self;
        }
      }
      for (const [i, key] of keys.entries()) {
        const index = start + i;
        if (index >= WARMUP_QUERIES) {
          const [nodes, edges] = answers.postgres.get(`ego ${key}`)!.size;
          const [found] = answers.postgres.get(`cycles ${key}`)!.size;
          sizes.egoNodes += nodes!;
          sizes.egoEdges += edges!;
          sizes.cycles += found!;
          if (found! > 0) sizes.withCycles++;
        }
        if (index >= WARMUP_QUERIES + COMPARED_MEASURED) continue;
        for (const name of names) {
          const pg = answers.postgres.get(`${name} ${key}`)!;
          const n4 = answers.neo4j.get(`${name} ${key}`)!;
          // A read that may have spent its budget answers whatever it found in time; any other,
          // one cut by a node cap included (the shared ranking decides it), must be the same.
          if (Math.max(pg.ms!, n4.ms!) >= DEFAULT_READ_BUDGET_MS / 2) continue;
          if (!isDeepStrictEqual(pg.answer, n4.answer)) {
            throw new Error(`${name} of ${key}: PostgreSQL and Neo4j disagree (sizes ${pg.size.join('/')} and ${n4.size.join('/')})`);
          }
          compared[name]++;
        }
      }
    }

    const result: Neo4jBenchResult = {
      version,
      server: given ? `NEO4J_URI=${given.uri}` : 'Community, platform/local-engines',
      dataset: datasetDir,
      accounts: dataset.nodes.length,
      movements: movements.length,
      changes: changes.length,
      load,
      queried,
      reads: Object.fromEntries(
        names.map((name) => {
          const postgres = latency(times.postgres[name]);
          const neo = latency(times.neo4j[name]);
          return [name, { postgres, neo4j: neo, ratio: round(neo.p95 / postgres.p95, 2), truncated: truncated[name] }];
        }),
      ) as Neo4jBenchResult['reads'],
      cpuMsPerRead: {
        postgres: perUnit(cpuUsed.postgres.server, cpuUsed.postgres.bench, queried * names.length),
        neo4j: perUnit(neo4jPid === undefined ? undefined : cpuUsed.neo4j.server, cpuUsed.neo4j.bench, queried * names.length),
      },
      compared,
      answers: {
        egoNodesMean: round(sizes.egoNodes / queried, 1),
        egoEdgesMean: round(sizes.egoEdges / queried, 1),
        cycles: sizes.cycles,
        accountsWithCycles: sizes.withCycles,
      },
      engines: memory?.stop() ?? [],
    };
    return result;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => log(`engines/neo4j cleanup: ${String(error)}`));
  }
}

interface Answer {
  answer: unknown;
  truncated: boolean;
  size: number[];
  ms?: number;
}

function fromEnv(): Neo4jConnection | undefined {
  const uri = process.env.NEO4J_URI;
  if (!uri) return undefined;
  return { uri, user: process.env.NEO4J_USER || 'neo4j', password: process.env.NEO4J_PASSWORD, database: process.env.NEO4J_DATABASE || undefined };
}

// A prefix of the movements names only some accounts: the others would be isolated nodes, loaded
// but never reached, and drawn as query accounts with nothing to find.
function touchedOnly(dataset: Dataset): Dataset {
  const touched = new Set(dataset.transactions.flatMap((t) => [t.source, t.target]));
  return { nodes: dataset.nodes.filter((node) => touched.has(node)), transactions: dataset.transactions };
}

async function applyAll(store: GraphStore, changes: GraphChange[], progress: (done: number) => void): Promise<void> {
  const every = Math.max(APPLY_BATCH, Math.ceil(changes.length / 10 / APPLY_BATCH) * APPLY_BATCH);
  for (let i = 0; i < changes.length; i += APPLY_BATCH) {
    await store.apply(changes.slice(i, i + APPLY_BATCH));
    const done = Math.min(changes.length, i + APPLY_BATCH);
    if (done % every === 0 && done < changes.length) progress(done);
  }
}

// Both stores must hold the whole data set: else the reads would not be of the same network.
async function checkCounts(pool: Pool, driver: Driver, database: string, tenant: string, dataset: Dataset): Promise<void> {
  const expected = { nodes: 2 * dataset.nodes.length, movements: dataset.transactions.length };
  const { rows } = await pool.query<{ nodes: number; movements: number }>(
    `SELECT (SELECT count(*) FROM graph_nodes WHERE tenant_id = $1)::int AS nodes,
            (SELECT count(*) FROM graph_transfers WHERE tenant_id = $1)::int AS movements`,
    [tenant],
  );
  // Read here, not through the adapter: counting is no port method. Both patterns are the
  // adapter's model (docs/decisions/0015-neo4j-graph.md), keyed by tenant.
  const session = driver.session({ database, defaultAccessMode: neo4j.session.READ });
  let found: { nodes: number; movements: number };
  try {
    const nodes = await session.run('MATCH (n:GraphNode {tenant: $tenant}) RETURN count(n) AS n', { tenant });
    const moves = await session.run('MATCH ()-[m:MOVEMENT {tenant: $tenant}]->() RETURN count(m) AS n', { tenant });
    found = { nodes: Number(nodes.records[0]!.get('n')), movements: Number(moves.records[0]!.get('n')) };
  } finally {
    await session.close();
  }
  for (const [side, counts] of [['PostgreSQL', rows[0]!], ['Neo4j', found]] as const) {
    if (counts.nodes !== expected.nodes || counts.movements !== expected.movements) {
      throw new Error(`${side} holds ${counts.nodes} nodes and ${counts.movements} movements, expected ${expected.nodes} and ${expected.movements}`);
    }
  }
}

function perUnit(serverSeconds: number | undefined, benchSeconds: number, units: number): CpuPer {
  const ms = (seconds: number) => round((seconds * 1000) / units, 3);
  return { server: serverSeconds === undefined || Number.isNaN(serverSeconds) ? undefined : ms(serverSeconds), bench: ms(benchSeconds) };
}

function latency(values: number[]): Latency {
  const sorted = Float64Array.from(values).sort();
  return { p50: round(percentile(sorted, 50), 2), p95: round(percentile(sorted, 95), 2), max: round(sorted[sorted.length - 1] ?? NaN, 2) };
}

function round(n: number, digits: number): number {
  return Number(n.toFixed(digits));
}

// npx tsx bench/engines/neo4j.ts [--quick]
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchNeo4jGraph({ quick: process.argv.includes('--quick') })
    .then((result) => console.log(JSON.stringify(result, null, 2)))
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}

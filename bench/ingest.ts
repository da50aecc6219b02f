// bench/ingest: the acceptance path against raw PostgreSQL on the same server, in the same run.
//
//   (a) single-event signed POST /v1/movements (202), 64 concurrent keep-alive connections:
//       events/s, p50, p99; against 64 connections each looping one-row autocommit
//       INSERT … COMMIT transactions into a scratch table (id bigint, payload bytea) with the
//       movement's JSON as payload. Target: service/raw >= 1.0 (requests that arrive together
//       share one transaction).
//   (b) batches of 1000 movements via signed POST /v1/batches (202, accepted 1000), 4 connections:
//       events/s; against 4 connections each looping one multi-row INSERT of 1000 inbox-shaped rows
//       per transaction into a scratch copy of inbox_events (same columns, primary key, dedup
//       unique index and tenant foreign key). Target: service/raw >= 0.5.
//   Peak RSS of the API process during (b): VmRSS of the `svc run api` child sampled every 100 ms, and
//   its VmHWM (reset when (b) starts). Target: <= 300 MB.
//
//   npx tsx bench/ingest.ts          (or npm run bench:ingest)
//
// The last line printed is the worse of the two ratios. BENCH_SECONDS (default 10) measured seconds
// per run, BENCH_WARMUP_SECONDS (default 2) warm-up before each run, BENCH_ROUNDS (default 2)
// alternating service/raw rounds per part; the best run of each target is compared;
// BENCH_SVC_NODE_ARGS (default none) extra node options for the service child, space-separated
// (e.g. "--cpu-prof --cpu-prof-dir=/tmp/svc-prof" to profile it). The API runs alone as a child
// process (`node bin/svc.js run api`, no pipeline competing for the CPU or adding to its RSS) on a
// fresh data directory with its own embedded PostgreSQL, which the raw side connects to directly;
// load is driven from this process. Every
// movement carries a unique external_id (a repeated one would be a duplicate, not a new event).
// Everything started here is stopped and the data directory removed.
import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { signRequest } from '../platform/crypto/request-signing.ts';
import { movementEvent, OCCURRED_AT } from '../test/fixtures/events.ts';
import { runClosedLoop, type LoopResult, type Outcome } from './lib/closed-loop.ts';
import { embeddedConnection, stopLeftoverPostgres } from './lib/embedded-pg.ts';
import { newAgent, send, type Target } from './lib/load.ts';
import { run, startChild, stopChild, waitForLine, type Child } from './lib/processes.ts';
import { sampleRss, type RssPeak } from './lib/rss.ts';

const SINGLE_CONNECTIONS = 64;
const BATCH_CONNECTIONS = 4;
const BATCH_SIZE = 1000;
const SECONDS = positiveNumber('BENCH_SECONDS', 10);
const WARMUP_SECONDS = positiveNumber('BENCH_WARMUP_SECONDS', 2, true);
const ROUNDS = Math.max(1, Math.round(positiveNumber('BENCH_ROUNDS', 2)));
const SVC_NODE_ARGS = (process.env.BENCH_SVC_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const RSS_INTERVAL_MS = 100;
const TARGET_A = 1.0;
const TARGET_B = 0.5;
const RSS_LIMIT_MB = 300;
const TENANT = 'bench';
const STARTUP_TIMEOUT_MS = 180_000;
const MB = 1024 * 1024;

const root = fileURLToPath(new URL('..', import.meta.url));

function positiveNumber(name: string, fallback: number, zeroAllowed = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) {
    throw new Error(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} number, not ${raw}`);
  }
  return value;
}

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

// Everything to undo, in reverse order of starting.
const children: Child[] = [];
const pgClients = new Set<pg.Client>();
let dataDir: string | undefined;
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...pgClients].map((client) => client.end().catch(() => undefined)));
    pgClients.clear();
    for (const child of [...children].reverse()) {
      // The service stops its own embedded PostgreSQL on SIGTERM (pg_ctl stop -m fast).
      await stopChild(child, 'SIGTERM').catch((error: unknown) => log(`stopping ${child.name}: ${String(error)}`));
    }
    if (dataDir) {
      await stopLeftoverPostgres(join(dataDir, 'pg'), log).catch((error: unknown) => log(`stopping PostgreSQL: ${String(error)}`));
      await rm(dataDir, { recursive: true, force: true }).catch((error: unknown) => log(`removing ${dataDir}: ${String(error)}`));
    }
  })();
  return cleaning;
}

// ---- events ----------------------------------------------------------------------------------

// The fixture movement as JSON with its external_id spliced in, so that building a body costs a
// string concatenation rather than a JSON.stringify. occurred_at is the fixture's (in the past).
const ID_MARK = 'BENCH-EXTERNAL-ID';
const [EVENT_HEAD, EVENT_TAIL] = JSON.stringify(movementEvent(ID_MARK)).split(JSON.stringify(ID_MARK)) as [string, string];
const eventJson = (externalId: string): string => `${EVENT_HEAD}${JSON.stringify(externalId)}${EVENT_TAIL}`;

let nextId = 0;
const newExternalId = (): string => `mv-bench-${(nextId++).toString(36)}`;

function batchBody(size: number): Buffer {
  const items = new Array<string>(size);
  for (let i = 0; i < size; i++) items[i] = `{"object":"movement","event":${eventJson(newExternalId())}}`;
  return Buffer.from(`{"events":[${items.join(',')}]}`, 'utf8');
}

// ---- service side ----------------------------------------------------------------------------

interface Service {
  port: number;
  key: { key_id: string; secret: string };
}

function signedTarget(service: Service, name: string, path: string, body: Buffer): Target {
  return {
    name,
    host: '127.0.0.1',
    port: service.port,
    path,
    body,
    headers: () => ({
      'content-type': 'application/json',
      ...signRequest({ keyId: service.key.key_id, secret: service.key.secret, method: 'POST', target: path, body }),
    }),
  };
}

const SINGLE_NAME = 'service: signed POST /v1/movements';
const BATCH_NAME = `service: signed POST /v1/batches (${BATCH_SIZE})`;

function singleOperation(service: Service, agent: ReturnType<typeof newAgent>): () => Promise<Outcome> {
  return async () => {
    const body = Buffer.from(eventJson(newExternalId()), 'utf8');
    const response = await send(signedTarget(service, SINGLE_NAME, '/v1/movements', body), agent);
    return response.status === 202 ? { ok: true, units: 1 } : { ok: false, reason: `HTTP ${response.status}` };
  };
}

const BATCH_RECEIPT = /^\{"accepted":(\d+),"rejected":(\d+)/;

function batchOperation(service: Service, agent: ReturnType<typeof newAgent>): () => Promise<Outcome> {
  return async () => {
    const body = batchBody(BATCH_SIZE);
    const response = await send(signedTarget(service, BATCH_NAME, '/v1/batches', body), agent);
    if (response.status !== 202) return { ok: false, reason: `HTTP ${response.status}` };
    // The counts lead the body; the 1000 receipts after them are not parsed.
    const counts = response.body.subarray(0, 64).toString('utf8').match(BATCH_RECEIPT);
    if (!counts) return { ok: false, reason: 'HTTP 202 without accepted/rejected counts' };
    const accepted = Number(counts[1]);
    if (accepted !== BATCH_SIZE) return { ok: false, reason: `HTTP 202 with accepted ${accepted}, rejected ${counts[2]}` };
    return { ok: true, units: accepted };
  };
}

// ---- raw PostgreSQL side ---------------------------------------------------------------------

const RAW_SINGLE_NAME = 'raw: 1-row INSERT … COMMIT';
const RAW_BATCH_NAME = `raw: ${BATCH_SIZE}-row INSERT … COMMIT`;

// The scratch tables. bench_raw_inbox has the columns, primary key, dedup unique index and tenant
// foreign key of inbox_events, so its rows are what the inbox rows of the batches would be.
const SCRATCH_DDL = `
  CREATE TABLE bench_raw (id bigint, payload bytea);
  CREATE TABLE bench_raw_inbox (
    tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
    event_id        uuid NOT NULL,
    object          text NOT NULL,
    external_id     text NOT NULL,
    sequence        bigint,
    raw_event       bytea NOT NULL,
    content_hash    bytea NOT NULL CHECK (length(content_hash) = 32),
    received_at     timestamptz NOT NULL,
    occurred_at     timestamptz NOT NULL,
    correlation_id  text,
    import_id       uuid,
    historical      boolean NOT NULL DEFAULT false,
    status          text NOT NULL DEFAULT 'pending',
    status_reason   jsonb,
    rejection       jsonb,
    attempts        integer NOT NULL DEFAULT 0,
    terminal_at     timestamptz,
    PRIMARY KEY (tenant_id, event_id),
    CONSTRAINT bench_raw_inbox_dedup UNIQUE NULLS NOT DISTINCT (tenant_id, object, external_id, sequence)
  );`;

const INBOX_COLUMNS = [
  'tenant_id', 'event_id', 'object', 'external_id', 'sequence', 'raw_event', 'content_hash',
  'received_at', 'occurred_at', 'correlation_id', 'import_id', 'historical',
] as const;

function multiRowInsert(rows: number): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const base = r * INBOX_COLUMNS.length;
    tuples.push(`(${INBOX_COLUMNS.map((_, c) => `$${base + c + 1}`).join(',')})`);
  }
  return `INSERT INTO bench_raw_inbox (${INBOX_COLUMNS.join(', ')}) VALUES ${tuples.join(',')}`;
}

async function connectClients(count: number): Promise<pg.Client[]> {
  const config = await embeddedConnection(dataDir!);
  const clients = Array.from({ length: count }, () => new pg.Client(config));
  for (const client of clients) {
    // A client losing its connection (the server stopping at cleanup) must not crash the bench.
    client.on('error', () => undefined);
    pgClients.add(client);
  }
  await Promise.all(clients.map((client) => client.connect()));
  return clients;
}

async function closeClients(clients: pg.Client[]): Promise<void> {
  await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  for (const client of clients) pgClients.delete(client);
}

let nextRawId = 0;

function rawSingleOperation(clients: pg.Client[], payload: Buffer): (loop: number) => Promise<Outcome> {
  return async (loop) => {
    await clients[loop]!.query({
      name: 'bench-raw-insert',
      text: 'INSERT INTO bench_raw (id, payload) VALUES ($1, $2)',
      values: [nextRawId++, payload],
    });
    return { ok: true, units: 1 };
  };
}

function rawBatchOperation(clients: pg.Client[]): (loop: number) => Promise<Outcome> {
  const text = multiRowInsert(BATCH_SIZE);
  return async (loop) => {
    const values: unknown[] = [];
    const receivedAt = new Date();
    const correlationId = `bench-raw-${loop}-${nextRawId++}`;
    for (let i = 0; i < BATCH_SIZE; i++) {
      const externalId = newExternalId();
      const rawEvent = Buffer.from(eventJson(externalId), 'utf8');
      values.push(
        TENANT, randomUUID(), 'movement', externalId, null, rawEvent, createHash('sha256').update(rawEvent).digest(),
        receivedAt, OCCURRED_AT, correlationId, null, false,
      );
    }
    const result = await clients[loop]!.query({ name: 'bench-raw-batch', text, values });
    return result.rowCount === BATCH_SIZE ? { ok: true, units: BATCH_SIZE } : { ok: false, reason: `inserted ${result.rowCount} rows` };
  };
}

// ---- running ---------------------------------------------------------------------------------

interface Side {
  name: string;
  loops: number;
  operation: (loop: number) => Promise<Outcome>;
}

// ROUNDS rounds of service and raw, alternating which goes first, each with its own warm-up.
async function compare(part: string, service: Side, raw: Side): Promise<{ service: LoopResult[]; raw: LoopResult[] }> {
  const results: { service: LoopResult[]; raw: LoopResult[] } = { service: [], raw: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? (['service', 'raw'] as const) : (['raw', 'service'] as const);
    for (const which of order) {
      const side = which === 'service' ? service : raw;
      if (WARMUP_SECONDS > 0) await runClosedLoop(side.name, side.loops, WARMUP_SECONDS, side.operation);
      const result = await runClosedLoop(side.name, side.loops, SECONDS, side.operation);
      results[which].push(result);
      log(`(${part}) round ${round} ${describe(result)}`);
    }
  }
  return results;
}

async function main(): Promise<void> {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  // The embedded PostgreSQL runs as the postgres user when this runs as root; it must reach the dir.
  await chmod(dataDir, 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // The per-tenant rate limit (events/s) would otherwise turn most of the load into 429s; the
    // bucket is still taken on every request, only never empty.
    SVC_RATE_LIMIT_CAPACITY: '1000000000',
    SVC_RATE_LIMIT_REFILL_PER_S: '1000000000',
  };
  // Self-contained: always the embedded database of the fresh data directory.
  for (const name of ['DATABASE_URL', 'SVC_MASTER_KEY', 'SVC_PG_PORT']) delete env[name];

  log(`starting the API on ${dataDir} (first start initialises PostgreSQL)...`);
  // process.execPath with bin/svc.js: tsx is registered in-process, so svc.pid is the API process.
  // The API alone: the canonical pipeline would compete for the CPU and is measured by bench/pipeline.
  const svc = startChild('svc', process.execPath, [...SVC_NODE_ARGS, 'bin/svc.js', 'run', 'api'], { cwd: root, env });
  children.push(svc);
  const svcUp = await waitForLine(svc, /svc is up at http:\/\/127\.0\.0\.1:(\d+)/, STARTUP_TIMEOUT_MS);

  await run(process.execPath, ['bin/svc.js', 'tenants', 'create', TENANT, '--base-asset', 'USD'], { cwd: root, env });
  const issued = await run(process.execPath, ['bin/svc.js', 'keys', 'issue', '--tenant', TENANT, '--scope', 'ingest', '--json'], {
    cwd: root,
    env,
  });
  const service: Service = {
    port: Number(svcUp[1]),
    key: JSON.parse(issued.trim().split('\n').pop() ?? '') as { key_id: string; secret: string },
  };

  const [admin] = await connectClients(1);
  await admin!.query(SCRATCH_DDL);
  const serverVersion = (await admin!.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  const setting = async (name: string) => (await admin!.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
  const durability = `fsync ${await setting('fsync')}, synchronous_commit ${await setting('synchronous_commit')}, wal_sync_method ${await setting('wal_sync_method')}`;
  await closeClients([admin!]);

  const singlePayload = Buffer.from(eventJson(newExternalId()), 'utf8');
  log(
    `PostgreSQL ${serverVersion} (${durability}); ${ROUNDS} round(s) of ${WARMUP_SECONDS} s warm-up + ` +
      `${SECONDS} s measured per target; movement ${singlePayload.length} bytes`,
  );

  // ---- (a) single events, 64 connections ----
  const singleAgent = newAgent(SINGLE_CONNECTIONS);
  let a: { service: LoopResult[]; raw: LoopResult[] };
  try {
    // One of each first: the comparison is meaningless unless both sides do what they should.
    const check = await send(
      signedTarget(service, SINGLE_NAME, '/v1/movements', Buffer.from(eventJson(newExternalId()), 'utf8')),
      singleAgent,
    );
    if (check.status !== 202) throw new Error(`POST /v1/movements answered ${check.status}: ${check.body.toString('utf8')}`);
    const rawClients = await connectClients(SINGLE_CONNECTIONS);
    try {
      const rawSingle = rawSingleOperation(rawClients, singlePayload);
      await rawSingle(0);
      a = await compare(
        'a',
        { name: SINGLE_NAME, loops: SINGLE_CONNECTIONS, operation: singleOperation(service, singleAgent) },
        { name: RAW_SINGLE_NAME, loops: SINGLE_CONNECTIONS, operation: rawSingle },
      );
    } finally {
      await closeClients(rawClients);
    }
  } finally {
    singleAgent.destroy();
  }

  // ---- (b) batches of 1000, 4 connections, with the API's RSS sampled throughout ----
  const batchAgent = newAgent(BATCH_CONNECTIONS);
  let b: { service: LoopResult[]; raw: LoopResult[] };
  let rss: RssPeak;
  try {
    const check = await send(signedTarget(service, BATCH_NAME, '/v1/batches', batchBody(BATCH_SIZE)), batchAgent);
    const counts = check.body.subarray(0, 64).toString('utf8').match(BATCH_RECEIPT);
    if (check.status !== 202 || !counts || Number(counts[1]) !== BATCH_SIZE) {
      throw new Error(`POST /v1/batches answered ${check.status}: ${check.body.subarray(0, 2000).toString('utf8')}`);
    }
    const rawClients = await connectClients(BATCH_CONNECTIONS);
    const sampler = sampleRss(svc.pid, RSS_INTERVAL_MS);
    try {
      const rawBatch = rawBatchOperation(rawClients);
      const rawCheck = await rawBatch(0);
      if (!rawCheck.ok) throw new Error(`raw batch insert: ${rawCheck.reason}`);
      b = await compare(
        'b',
        { name: BATCH_NAME, loops: BATCH_CONNECTIONS, operation: batchOperation(service, batchAgent) },
        { name: RAW_BATCH_NAME, loops: BATCH_CONNECTIONS, operation: rawBatch },
      );
    } finally {
      rss = sampler.stop();
      await closeClients(rawClients);
    }
  } finally {
    batchAgent.destroy();
  }

  if (svc.hasExited()) throw new Error(`the service exited during the run:\n${svc.output()}`);
  report(a, b, rss);
}

// ---- reporting -------------------------------------------------------------------------------

function failuresText(result: LoopResult): string {
  if (result.failures.size === 0) return 'no errors';
  return [...result.failures].map(([reason, count]) => `${count} x ${reason}`).join(', ');
}

function describe(result: LoopResult): string {
  return (
    `${result.target}: ${result.unitsPerSecond.toFixed(0)} events/s, p50 ${result.p50Ms.toFixed(2)} ms, ` +
    `p99 ${result.p99Ms.toFixed(2)} ms (${result.ok} ok, ${failuresText(result)})`
  );
}

function best(runs: LoopResult[]): LoopResult {
  return runs.reduce((x, y) => (y.unitsPerSecond > x.unitsPerSecond ? y : x));
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function table(results: { service: LoopResult[]; raw: LoopResult[] }): string {
  const rows = [
    ['target', 'best events/s', 'median events/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'],
    ...(['service', 'raw'] as const).map((which) => {
      const runs = results[which];
      const top = best(runs);
      const errors = runs.reduce((sum, r) => sum + [...r.failures.values()].reduce((x, y) => x + y, 0), 0);
      return [
        top.target,
        top.unitsPerSecond.toFixed(0),
        median(runs.map((r) => r.unitsPerSecond)).toFixed(0),
        top.p50Ms.toFixed(2),
        top.p99Ms.toFixed(2),
        top.maxMs.toFixed(2),
        String(errors),
      ];
    }),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
  const errors: string[] = [];
  for (const which of ['service', 'raw'] as const) {
    for (const result of results[which]) {
      if (result.failures.size > 0) errors.push(`errors, ${result.target}: ${failuresText(result)}`);
    }
  }
  return [...lines, ...errors].join('\n');
}

function ratio(results: { service: LoopResult[]; raw: LoopResult[] }): number {
  return best(results.service).unitsPerSecond / best(results.raw).unitsPerSecond;
}

function mb(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a' : (bytes / MB).toFixed(0);
}

function report(a: { service: LoopResult[]; raw: LoopResult[] }, b: { service: LoopResult[]; raw: LoopResult[] }, rss: RssPeak): void {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const ratioA = ratio(a);
  const ratioB = ratio(b);
  const peaks = [rss.sampledMaxBytes, rss.hwmReset ? rss.hwmBytes : undefined].filter((v): v is number => v !== undefined);
  const peak = peaks.length > 0 ? Math.max(...peaks) : undefined;

  out(`\n(a) single events: ${SINGLE_CONNECTIONS} keep-alive connections / PostgreSQL connections, best of ${a.service.length} run(s) of ${SECONDS} s per target (latency of the best run)`);
  out(table(a));
  out(`ratio a, service/raw events/s: ${ratioA.toFixed(2)} (target >= ${TARGET_A.toFixed(1)})`);

  out(`\n(b) batches of ${BATCH_SIZE}: ${BATCH_CONNECTIONS} keep-alive connections / PostgreSQL connections, best of ${b.service.length} run(s) of ${SECONDS} s per target (latency per batch, of the best run)`);
  out(table(b));
  out(`ratio b, service/raw events/s: ${ratioB.toFixed(2)} (target >= ${TARGET_B.toFixed(1)})`);
  out(
    `peak API RSS during (b): ${mb(peak)} MB (target <= ${RSS_LIMIT_MB}; VmRSS sampled every ${RSS_INTERVAL_MS} ms: max ${mb(rss.sampledMaxBytes)} MB ` +
      `over ${rss.samples} samples; VmHWM ${mb(rss.hwmBytes)} MB ${rss.hwmReset ? 'since the start of (b)' : 'since process start (could not reset)'})`,
  );
  out(`worse ratio: ${Math.min(ratioA, ratioB).toFixed(2)} (a: ${ratioA.toFixed(2)}, b: ${ratioB.toFixed(2)}; peak API RSS ${mb(peak)} MB)`);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping...`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  await main();
  await cleanup();
} catch (error) {
  if (!interrupted) log(`bench/ingest failed: ${(error as Error).stack ?? String(error)}`);
  await cleanup();
  process.exitCode = 1;
}

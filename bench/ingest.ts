// bench/ingest: the acceptance path against raw PostgreSQL on the same server, in the same run.
//
//   (a) single-event signed POST /v1/movements (202), 64 concurrent keep-alive connections:
//       events/s, p50, p99; against 64 connections each looping one-row autocommit
//       INSERT … COMMIT transactions into a scratch table (id bigint, payload bytea) with the
//       movement's JSON as payload. Target (issue 34): service/raw >= 0.7, p99 <= 50 ms (requests that arrive together
//       share one transaction).
//   (b) batches of 1000 movements via signed POST /v1/batches (202, accepted 1000), 4 connections:
//       events/s; against 4 connections each looping one multi-row INSERT of 1000 inbox-shaped rows
//       per transaction into a scratch copy of inbox_events (same columns, primary key, dedup
//       unique index and tenant foreign key). Target: service/raw >= 0.6.
//   Peak RSS of the API process during (b): VmRSS of the `svc run api` child sampled every 100 ms, and
//   its VmHWM (reset when (b) starts). Target: <= 250 MB.
//   Beside each table: CPU microseconds per accepted event of the API process, of PostgreSQL (the
//   postmaster and all its children, from /proc) and of this load-driving process, over the best run.
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
import { join } from 'node:path';
import type pg from 'pg';
import { movementEvent, OCCURRED_AT } from '../test/fixtures/events.ts';
import { answered, batchCounts, signedTarget } from './lib/api.ts';
import { startService, TENANT, type BenchService } from './lib/bench-service.ts';
import type { LoopResult, Outcome } from './lib/closed-loop.ts';
import { comparisonTable, compareRounds, ratio, type Side } from './lib/compare.ts';
import { cpuTable } from './lib/cpu-per-event.ts';
import { closeClients, connectClients } from './lib/embedded-pg.ts';
import { newAgent, send } from './lib/load.ts';
import { nodeArgs, positiveNumber } from './lib/options.ts';
import { mb, peakBytes, sampleRss, statusKiB, type RssPeak } from './lib/rss.ts';
import { runBench, type Teardown } from './lib/teardown.ts';

const SINGLE_CONNECTIONS = 64;
const BATCH_CONNECTIONS = 4;
const BATCH_SIZE = 1000;
const SECONDS = positiveNumber('BENCH_SECONDS', 10);
const WARMUP_SECONDS = positiveNumber('BENCH_WARMUP_SECONDS', 2, true);
const ROUNDS = Math.max(1, Math.round(positiveNumber('BENCH_ROUNDS', 2)));
const SVC_NODE_ARGS = nodeArgs('BENCH_SVC_NODE_ARGS');
// BENCH_PARTS=a or b runs that part alone (a --cpu-prof profile of the API then covers its load only).
const PARTS = process.env.BENCH_PARTS ?? 'ab';
const RSS_INTERVAL_MS = 100;
// Issue 34's targets (single events: stretch 1.0).
const TARGET_A = 0.7;
const TARGET_B = 0.6;
const RSS_LIMIT_MB = 250;

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

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

const SINGLE_NAME = 'service: signed POST /v1/movements';
const BATCH_NAME = `service: signed POST /v1/batches (${BATCH_SIZE})`;

function singleOperation(service: BenchService, agent: ReturnType<typeof newAgent>): () => Promise<Outcome> {
  return async () => {
    const body = Buffer.from(eventJson(newExternalId()), 'utf8');
    const response = await send(signedTarget(service, SINGLE_NAME, '/v1/movements', body), agent);
    return response.status === 202 ? { ok: true, units: 1 } : { ok: false, reason: `HTTP ${response.status}` };
  };
}

function batchOperation(service: BenchService, agent: ReturnType<typeof newAgent>): () => Promise<Outcome> {
  return async () => {
    const body = batchBody(BATCH_SIZE);
    const response = await send(signedTarget(service, BATCH_NAME, '/v1/batches', body), agent);
    if (response.status !== 202) return { ok: false, reason: `HTTP ${response.status}` };
    const counts = batchCounts(response);
    if (!counts) return { ok: false, reason: 'HTTP 202 without accepted/rejected counts' };
    if (counts.accepted !== BATCH_SIZE) return { ok: false, reason: `HTTP 202 with accepted ${counts.accepted}, rejected ${counts.rejected}` };
    return { ok: true, units: counts.accepted };
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

async function main(teardown: Teardown): Promise<void> {
  // The API alone: the canonical pipeline would compete for the CPU and is measured by bench/pipeline.
  const service = await startService(teardown, log, { name: 'svc', nodeArgs: SVC_NODE_ARGS });
  const connect = (count: number) => connectClients(service.dataDir, count, teardown.clients);
  const close = (clients: pg.Client[]) => closeClients(clients, teardown.clients);

  const [admin] = await connect(1);
  await admin!.query(SCRATCH_DDL);
  const serverVersion = (await admin!.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  const setting = async (name: string) => (await admin!.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
  const durability = `fsync ${await setting('fsync')}, synchronous_commit ${await setting('synchronous_commit')}, wal_sync_method ${await setting('wal_sync_method')}`;
  await close([admin!]);

  const singlePayload = Buffer.from(eventJson(newExternalId()), 'utf8');
  log(
    `PostgreSQL ${serverVersion} (${durability}); ${ROUNDS} round(s) of ${WARMUP_SECONDS} s warm-up + ` +
      `${SECONDS} s measured per target; movement ${singlePayload.length} bytes`,
  );
  // ROUNDS rounds of service and raw, alternating which goes first, each with its own warm-up.
  const compare = (part: string, serviceSide: Side, rawSide: Side) =>
    compareRounds([serviceSide, rawSide], { rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS, unit: 'events/s', prefix: `(${part}) `, log, pgDir: join(service.dataDir, 'pg') });

  // ---- (a) single events, 64 connections; (b) batches of 1000, 4 connections ----
  const parts = { service, compare, connect, close, singlePayload };
  const a = PARTS.includes('a') ? await runSingle(parts) : undefined;
  const b = PARTS.includes('b') ? await runBatches(parts) : undefined;

  if (service.api.hasExited()) throw new Error(`the service exited during the run:\n${service.api.output()}`);
  const ratioA = a ? reportSingle(a) : undefined;
  const ratioB = b ? reportBatches(b.results, b.rss, b.startBytes) : undefined;
  if (ratioA !== undefined && b && ratioB !== undefined) {
    out(`worse ratio: ${Math.min(ratioA, ratioB).toFixed(2)} (a: ${ratioA.toFixed(2)}, b: ${ratioB.toFixed(2)}; peak API RSS ${mb(peakBytes(b.rss))} MB)`);
  }
}

interface Parts {
  service: BenchService;
  compare: (part: string, serviceSide: Side, rawSide: Side) => Promise<Results>;
  connect: (count: number) => Promise<pg.Client[]>;
  close: (clients: pg.Client[]) => Promise<void>;
  singlePayload: Buffer;
}

async function runSingle({ service, compare, connect, close, singlePayload }: Parts): Promise<Results> {
  const singleAgent = newAgent(SINGLE_CONNECTIONS);
  try {
    // One of each first: the comparison is meaningless unless both sides do what they should.
    const check = await send(
      signedTarget(service, SINGLE_NAME, '/v1/movements', Buffer.from(eventJson(newExternalId()), 'utf8')),
      singleAgent,
    );
    if (check.status !== 202) throw new Error(`POST /v1/movements answered ${check.status}: ${check.body.toString('utf8')}`);
    const rawClients = await connect(SINGLE_CONNECTIONS);
    try {
      const rawSingle = rawSingleOperation(rawClients, singlePayload);
      await rawSingle(0);
      return await compare(
        'a',
        { name: SINGLE_NAME, loops: SINGLE_CONNECTIONS, operation: singleOperation(service, singleAgent), cpuPid: service.api.pid },
        { name: RAW_SINGLE_NAME, loops: SINGLE_CONNECTIONS, operation: rawSingle },
      );
    } finally {
      await close(rawClients);
    }
  } finally {
    singleAgent.destroy();
  }
}

// With the API's RSS sampled throughout.
async function runBatches({ service, compare, connect, close }: Parts): Promise<{ results: Results; rss: RssPeak; startBytes: number | undefined }> {
  const batchAgent = newAgent(BATCH_CONNECTIONS);
  try {
    const check = await send(signedTarget(service, BATCH_NAME, '/v1/batches', batchBody(BATCH_SIZE)), batchAgent);
    if (check.status !== 202 || batchCounts(check)?.accepted !== BATCH_SIZE) throw new Error(`POST /v1/batches answered ${answered(check)}`);
    const rawClients = await connect(BATCH_CONNECTIONS);
    // What the API holds before the batches (after start-up and part a), beside the peak during them.
    const startKiB = statusKiB(service.api.pid, 'VmRSS');
    const sampler = sampleRss(service.api.pid, RSS_INTERVAL_MS);
    let results: Results;
    let rss: RssPeak;
    try {
      const rawBatch = rawBatchOperation(rawClients);
      const rawCheck = await rawBatch(0);
      if (!rawCheck.ok) throw new Error(`raw batch insert: ${rawCheck.reason}`);
      results = await compare(
        'b',
        { name: BATCH_NAME, loops: BATCH_CONNECTIONS, operation: batchOperation(service, batchAgent), cpuPid: service.api.pid },
        { name: RAW_BATCH_NAME, loops: BATCH_CONNECTIONS, operation: rawBatch },
      );
    } finally {
      rss = sampler.stop();
      await close(rawClients);
    }
    return { results, rss, startBytes: startKiB === undefined ? undefined : startKiB * 1024 };
  } finally {
    batchAgent.destroy();
  }
}

// ---- reporting -------------------------------------------------------------------------------

// The runs of the service side and of the raw side.
type Results = [LoopResult[], LoopResult[]];

const out = (text: string) => process.stdout.write(`${text}\n`);

function reportSingle([aService, aRaw]: Results): number {
  const ratioA = ratio(aService, aRaw);
  out(`\n(a) single events: ${SINGLE_CONNECTIONS} keep-alive connections / PostgreSQL connections, best of ${aService.length} run(s) of ${SECONDS} s per target (latency of the best run)`);
  out(comparisonTable([aService, aRaw], 'events/s'));
  out(cpuTable([aService, aRaw], 'accepted event', 'API'));
  out(`ratio a, service/raw events/s: ${ratioA.toFixed(2)} (target >= ${TARGET_A.toFixed(1)})`);
  return ratioA;
}

function reportBatches([bService, bRaw]: Results, rss: RssPeak, startBytes: number | undefined): number {
  const ratioB = ratio(bService, bRaw);
  const peak = peakBytes(rss);

  out(`\n(b) batches of ${BATCH_SIZE}: ${BATCH_CONNECTIONS} keep-alive connections / PostgreSQL connections, best of ${bService.length} run(s) of ${SECONDS} s per target (latency per batch, of the best run)`);
  out(comparisonTable([bService, bRaw], 'events/s'));
  out(cpuTable([bService, bRaw], 'accepted event', 'API'));
  out(`ratio b, service/raw events/s: ${ratioB.toFixed(2)} (target >= ${TARGET_B.toFixed(1)})`);
  out(
    `peak API RSS during (b): ${mb(peak)} MB (target <= ${RSS_LIMIT_MB}; VmRSS sampled every ${RSS_INTERVAL_MS} ms: max ${mb(rss.sampledMaxBytes)} MB ` +
      `over ${rss.samples} samples; VmHWM ${mb(rss.hwmBytes)} MB ${rss.hwmReset ? 'since the start of (b)' : 'since process start (could not reset)'}; ` +
      `${mb(startBytes)} MB when (b) started)`,
  );
  return ratioB;
}

await runBench('ingest', log, main);

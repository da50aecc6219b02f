// bench/pipeline: the canonical pipeline against ingest, in the same run.
//
//   Setup: `svc run api` alone; a tenant, an ingest key, and BENCH_PARTIES (default 2000) parties
//   via signed POST /v1/batches. A first `svc run pipeline canonical` makes them canonical and is
//   stopped, so that no movement waits (is held) for a party that has not been processed yet.
//   (1) Throughput. With no pipeline running, BENCH_MOVEMENTS (default 100000) movements between
//       those parties are ingested as batches of 1000 over 4 keep-alive connections: ingest
//       events/s = movements / (first request to last 202). Then a fresh `svc run pipeline
//       canonical` is started, and canonical events/s = movements / (start to drained): start is
//       the earlier of the child printing "canonical pipeline running" and the first canonical
//       stage row of those movements (event_stages.at; partitions leased first start work while the
//       rest are still being leased, before the line); drained is the 100 ms poll that finds every
//       partition's committed consumer offset at the last record ingested. Process start-up
//       (loading the code, connecting) is not counted. Cross-check: the first to the last canonical
//       stage row (which leaves out the commit of the last batch). Target: canonical/ingest >= 1.0.
//   (2) Lag. With that pipeline running, movements are sent open loop at BENCH_RATE (default 1000)
//       events/s for BENCH_SECONDS (default 10): a batch of 50 every 50 ms, on schedule whether or
//       not earlier responses have come back. After the pipeline has drained them, lag per event
//       = its canonical stage row's `at` − its inbox received_at (both written by the service, same
//       clock); also shown from the client's 202 (wall clock of this process) to the same `at`.
//       The processor stamps `at` before a batch's writes and commit (as of this writing), so a third row
//       includes them: from the 202 to the first poll (every 25 ms, of consumer_offsets) that
//       finds the group's committed offset at or past the event's log record. Target: p95 <= 100 ms.
//   Peak RSS of the pipeline process over (1) and (2): VmRSS sampled every 100 ms and VmHWM (reset
//   when the sampling starts, just after start-up). Target: <= 250 MB.
//   CPU per phase-1 event of each side (its process, PostgreSQL, this process, the machine, from
//   /proc) with how busy each side kept the machine's cores and its own process's thread; the
//   ratio is then split into its two factors: CPU per event, and the machine's busy share.
//
//   npx tsx bench/pipeline.ts          (or npm run bench:pipeline)
//
// The last line printed is the ratio canonical/ingest events/s with the p95 lag and peak RSS.
// BENCH_DRAIN_TIMEOUT_S (default 900) is how long the pipeline may take to drain either phase
// before the bench gives up. The processes run on a fresh data directory with its own embedded
// PostgreSQL, which `run api` starts (so it is started first and stopped last) and which this
// process reads directly for progress and lag. Every event carries a unique external_id.
// Everything started here is stopped and the data directory removed, also on error and Ctrl-C.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { movementEvent, partyEvent } from '../test/fixtures/events.ts';
import { ingestAll, postBatch, startPipeline, statusCounts } from './lib/batches.ts';
import { startService, svc, TENANT, type BenchService } from './lib/bench-service.ts';
import { microsPerUnit } from './lib/cpu-per-event.ts';
import { busyShare, cpuBetween, cpuSnapshot, type CpuUse } from './lib/proc-cpu.ts';
import { connectClients } from './lib/embedded-pg.ts';
import { newAgent } from './lib/load.ts';
import { positiveInteger, positiveNumber } from './lib/options.ts';
import { stopChild, type Child } from './lib/processes.ts';
import { mb, peakBytes, sampleRss, type RssPeak } from './lib/rss.ts';
import { failuresText, percentile, table } from './lib/stats.ts';
import { runBench, type Teardown } from './lib/teardown.ts';

const MOVEMENTS = positiveInteger('BENCH_MOVEMENTS', 100_000);
const PARTIES = positiveInteger('BENCH_PARTIES', 2_000);
const SECONDS = positiveNumber('BENCH_SECONDS', 10);
const RATE = positiveNumber('BENCH_RATE', 1_000);
const DRAIN_TIMEOUT_S = positiveNumber('BENCH_DRAIN_TIMEOUT_S', 900);
const BATCH_SIZE = 1000;
const INGEST_CONNECTIONS = 4;
const LAG_BATCH_SIZE = 50;
const LAG_INTERVAL_MS = (LAG_BATCH_SIZE / RATE) * 1000;
// Enough sockets that slow responses never hold back the schedule (an open loop).
const LAG_CONNECTIONS = 64;
const POLL_MS = 100;
const OFFSET_POLL_MS = 25;
const PROGRESS_EVERY_MS = 5_000;
const RSS_INTERVAL_MS = 100;
const TARGET_RATIO = 1.0;
// Issue 34's targets.
const TARGET_P95_MS = 100;
const RSS_LIMIT_MB = 250;
const GROUP = 'canonical';

const benchStarted = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - benchStarted) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Wall-clock milliseconds with sub-millisecond precision, comparable with the service's timestamps.
const wallMs = (): number => performance.timeOrigin + performance.now();

// ---- events ----------------------------------------------------------------------------------

const partyId = (index: number): string => `p-${index}`;

function partyJson(index: number): string {
  const event = partyEvent(partyId(index), 1);
  // Each party its own e-mail address, as real customers would have.
  event.data.identifiers = [{ type: 'email', value: `${partyId(index)}@example.com`, verification_status: 'verified' }];
  return JSON.stringify(event);
}

// The fixture movement with legs that name parties only (no accounts needed), as JSON with the
// external_id and both parties spliced in, so that building a body costs string concatenations.
// occurred_at is the fixture's (in the past).
const MARKS = ['BENCH-EXTERNAL-ID', 'BENCH-DEBIT-PARTY', 'BENCH-CREDIT-PARTY'] as const;
const MOVEMENT_PARTS = (() => {
  const base = movementEvent(MARKS[0]);
  const json = JSON.stringify({ ...base, data: { ...base.data, debit: { party_id: MARKS[1] }, credit: { party_id: MARKS[2] } } });
  const parts = json.split(/"BENCH-(?:EXTERNAL-ID|DEBIT-PARTY|CREDIT-PARTY)"/);
  if (parts.length !== 4 || json.indexOf(MARKS[0]) > json.indexOf(MARKS[1]) || json.indexOf(MARKS[1]) > json.indexOf(MARKS[2])) {
    throw new Error('unexpected movement fixture layout');
  }
  return parts as [string, string, string, string];
})();

// Movement n between two different parties, spread over all of them.
function movementJson(externalId: string, n: number): string {
  const debit = n % PARTIES;
  const credit = PARTIES === 1 ? debit : (debit + 1 + ((n * 7919) % (PARTIES - 1))) % PARTIES;
  const [a, b, c, d] = MOVEMENT_PARTS;
  return `${a}${JSON.stringify(externalId)}${b}${JSON.stringify(partyId(debit))}${c}${JSON.stringify(partyId(credit))}${d}`;
}

function batchBody(object: 'party' | 'movement', events: string[]): Buffer {
  return Buffer.from(`{"events":[${events.map((event) => `{"object":"${object}","event":${event}}`).join(',')}]}`, 'utf8');
}

// Phase 1 movements are mv-bulk-<n>, phase 2 movements mv-lag-<batch>-<i>.
const BULK_PREFIX = 'mv-bulk-';
const LAG_PREFIX = 'mv-lag-';

// ---- service side ----------------------------------------------------------------------------

// ---- the database, read directly -------------------------------------------------------------

// The last inbox record (what the canonical group reads) of every partition of the log now: the
// pipeline has drained everything ingested so far once the group's committed offset of each
// partition is at or past it (an offset is committed after the records before it were handled
// and their transactions committed).
interface LogEnd {
  partitions: number[];
  xids: string[];
  positions: string[];
}

async function logEnd(db: pg.Client): Promise<LogEnd> {
  const { rows } = await db.query<{ partition: number; xid: string; position: string }>(
    // Ordered by the table's columns (o.): an unqualified `position` would name the output column,
    // the text, and '999' sorts after '1999'.
    `SELECT DISTINCT ON (o.partition) o.partition, o.writer_xid::text AS xid, o.position::text AS position
       FROM outbox o WHERE o.stream = 'inbox' ORDER BY o.partition, o.writer_xid DESC, o.position DESC`,
  );
  return { partitions: rows.map((r) => r.partition), xids: rows.map((r) => r.xid), positions: rows.map((r) => r.position) };
}

// Partitions whose committed offset is still short of `end`.
async function partitionsBehind(db: pg.Client, end: LogEnd): Promise<number> {
  const { rows } = await db.query<{ behind: number }>({
    name: 'bench-partitions-behind',
    text: `SELECT count(*)::int AS behind
             FROM unnest($2::int[], $3::xid8[], $4::bigint[]) AS t(partition, xid, position)
             LEFT JOIN consumer_offsets c ON c.group_name = $1 AND c.partition = t.partition
            WHERE c.partition IS NULL OR (c.writer_xid, c.position) < (t.xid, t.position)`,
    values: [GROUP, end.partitions, end.xids, end.positions],
  });
  return rows[0]!.behind;
}

// The identity of the last event_stages row (rows are numbered in insertion order; the bench reads
// the rows written after a point by id, with no join that a planner without statistics on freshly
// loaded tables could turn into a nested loop).
async function lastStageId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM event_stages');
  return rows[0]!.id;
}

// The last position the log's identity handed out (nothing is being written when it is read): the
// log's table has no index on position alone (decision 0045), so max(position) would read it whole.
async function lastOutboxPosition(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    `SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('outbox', 'position')::regclass), 0)::text AS position`,
  );
  return rows[0]!.position;
}

function countsText(counts: Map<string, number>): string {
  return [...counts].map(([status, events]) => `${status} ${events}`).join(', ') || 'none';
}

// Polls every POLL_MS until the pipeline has drained `end`. Fails when the pipeline exits or
// DRAIN_TIMEOUT_S passes.
async function waitForDrain(db: pg.Client, end: LogEnd, pipeline: Child, what: { object: string; prefix: string; label: string }): Promise<void> {
  const started = performance.now();
  let lastProgress = started;
  for (;;) {
    if ((await partitionsBehind(db, end)) === 0) return;
    if (pipeline.hasExited()) {
      const how = pipeline.process.signalCode ? `signal ${pipeline.process.signalCode}` : `exit ${pipeline.process.exitCode}`;
      throw new Error(`${pipeline.name} exited (${how}) while draining ${what.label}:\n${pipeline.output()}`);
    }
    const now = performance.now();
    if (now - started > DRAIN_TIMEOUT_S * 1000) {
      const counts = await statusCounts(db, what.object, what.prefix);
      throw new Error(
        `${pipeline.name} did not drain ${what.label} within ${DRAIN_TIMEOUT_S} s (${countsText(counts)}; ` +
          `${await partitionsBehind(db, end)} partition(s) behind)`,
      );
    }
    if (now - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = now;
      log(`  ${((now - started) / 1000).toFixed(0)} s: ${what.label}: ${countsText(await statusCounts(db, what.object, what.prefix))}`);
    }
    await sleep(POLL_MS);
  }
}

// ---- phases ----------------------------------------------------------------------------------

interface Throughput {
  ingestSeconds: number;
  canonicalSeconds: number;
  // First to last canonical stage row of the phase's movements (event_stages.at).
  stageSpanSeconds: number;
  statuses: Map<string, number>;
  // CPU of the API and PostgreSQL over the ingest, and of the pipeline and PostgreSQL over the
  // drain (from the "running" line: the pipeline's start-up is left out).
  ingestCpu: CpuUse;
  canonicalCpu: CpuUse;
}

async function throughputPhase(teardown: Teardown, service: BenchService, db: pg.Client, rss: { sampler?: ReturnType<typeof sampleRss> }): Promise<{ result: Throughput; pipeline: Child }> {
  const batches = Math.ceil(MOVEMENTS / BATCH_SIZE);
  const sizeOf = (batch: number) => Math.min(BATCH_SIZE, MOVEMENTS - batch * BATCH_SIZE);
  log(`(1) ingesting ${MOVEMENTS} movements in ${batches} batch(es) of up to ${BATCH_SIZE} over ${INGEST_CONNECTIONS} connections, no pipeline running...`);
  const pgDir = join(service.dataDir, 'pg');
  const ingestBefore = cpuSnapshot(service.api.pid, pgDir);
  const ingestSeconds = await ingestAll(service, INGEST_CONNECTIONS, batches, (batch) => {
    const events: string[] = [];
    for (let i = 0; i < sizeOf(batch); i++) {
      const n = batch * BATCH_SIZE + i;
      events.push(movementJson(`${BULK_PREFIX}${n}`, n));
    }
    return batchBody('movement', events);
  }, sizeOf);
  const ingestCpu = cpuBetween(ingestBefore, cpuSnapshot(service.api.pid, pgDir));
  log(`(1) ingest: ${MOVEMENTS} events in ${ingestSeconds.toFixed(2)} s = ${(MOVEMENTS / ingestSeconds).toFixed(0)} events/s`);

  const end = await logEnd(db);
  // Every canonical stage row after this one is of a phase 1 movement (nothing else is ingested
  // until phase 2, which starts after the drain).
  const stagesBefore = await lastStageId(db);
  log('(1) starting `svc run pipeline canonical`...');
  const pipeline = (await startPipeline(teardown, service, 'canonical', 'pipeline')).child;
  const ready = wallMs();
  const canonicalBefore = cpuSnapshot(pipeline.pid, pgDir);
  rss.sampler = sampleRss(pipeline.pid, RSS_INTERVAL_MS);
  await waitForDrain(db, end, pipeline, { object: 'movement', prefix: BULK_PREFIX, label: 'phase 1 movements' });
  const drained = wallMs();
  const canonicalCpu = cpuBetween(canonicalBefore, cpuSnapshot(pipeline.pid, pgDir));

  const { rows } = await db.query<{ first_ms: number | null; last_ms: number | null }>(
    `SELECT (extract(epoch FROM min(at)) * 1000)::float8 AS first_ms, (extract(epoch FROM max(at)) * 1000)::float8 AS last_ms
       FROM event_stages WHERE id > $1 AND tenant_id = $2 AND stage = 'canonical'`,
    [stagesBefore, TENANT],
  );
  const first = rows[0]?.first_ms ?? NaN;
  const last = rows[0]?.last_ms ?? NaN;
  const start = Number.isNaN(first) ? ready : Math.min(ready, first);
  const canonicalSeconds = (drained - start) / 1000;
  const statuses = await statusCounts(db, 'movement', BULK_PREFIX);
  log(
    `(1) canonical: drained in ${canonicalSeconds.toFixed(2)} s = ${(MOVEMENTS / canonicalSeconds).toFixed(0)} events/s ` +
      `(first canonical stage row ${Math.abs(first - ready).toFixed(0)} ms ${first < ready ? 'before' : 'after'} the "running" line; ${countsText(statuses)})`,
  );
  return { result: { ingestSeconds, canonicalSeconds, stageSpanSeconds: (last - first) / 1000, statuses, ingestCpu, canonicalCpu }, pipeline };
}

interface Lag {
  batches: number;
  sent: number;
  accepted: number;
  failures: Map<string, number>;
  sendSeconds: number;
  // How late the latest batch left against its schedule.
  maxScheduleSlipMs: number;
  responseMs: Float64Array;
  // received_at → canonical stage row, and this process's 202 → canonical stage row.
  fromReceivedMs: Float64Array;
  from202Ms: Float64Array;
  // The client's 202 → the first offset poll that found the event's record committed.
  toCommittedMs: Float64Array;
  statuses: Map<string, number>;
}

// The group's committed offsets, polled: when each partition's offset got where.
interface OffsetSnapshot {
  at: number;
  offsets: Map<number, [bigint, bigint]>;
}

// stop() returns once a snapshot taken wholly after the call is in, so that whatever had been
// committed when stop() was called is covered.
function pollOffsets(db: pg.Client): { stop: () => Promise<OffsetSnapshot[]> } {
  const snapshots: OffsetSnapshot[] = [];
  let stopping = false;
  let failure: unknown;
  const loop = (async () => {
    for (;;) {
      const last = stopping;
      const { rows } = await db.query<{ partition: number; xid: string; position: string }>({
        name: 'bench-offsets',
        text: 'SELECT partition, writer_xid::text AS xid, position::text FROM consumer_offsets WHERE group_name = $1',
        values: [GROUP],
      });
      const at = wallMs();
      snapshots.push({ at, offsets: new Map(rows.map((r) => [r.partition, [BigInt(r.xid), BigInt(r.position)]])) });
      if (last) return;
      await sleep(OFFSET_POLL_MS);
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
      return snapshots;
    },
  };
}

// The time of the first snapshot whose offset of `partition` is at or past (xid, position).
function committedAt(snapshots: OffsetSnapshot[], partition: number, xid: bigint, position: bigint): number {
  const reached = (snapshot: OffsetSnapshot) => {
    const offset = snapshot.offsets.get(partition);
    return offset !== undefined && (offset[0] > xid || (offset[0] === xid && offset[1] >= position));
  };
  let low = 0;
  let high = snapshots.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (reached(snapshots[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low < snapshots.length ? snapshots[low]!.at : NaN;
}

async function lagPhase(service: BenchService, db: pg.Client, offsetsDb: pg.Client, pipeline: Child): Promise<Lag> {
  const batches = Math.max(1, Math.round((SECONDS * RATE) / LAG_BATCH_SIZE));
  log(`(2) sending ${batches * LAG_BATCH_SIZE} movements at ${RATE} events/s: a batch of ${LAG_BATCH_SIZE} every ${LAG_INTERVAL_MS.toFixed(1)} ms, open loop...`);
  const agent = newAgent(LAG_CONNECTIONS);
  const at202 = new Float64Array(batches).fill(NaN);
  const responseMs = new Float64Array(batches).fill(NaN);
  const failures = new Map<string, number>();
  let accepted = 0;
  let maxScheduleSlipMs = 0;
  const inFlight: Promise<void>[] = [];

  const fire = (batch: number) => {
    const events: string[] = [];
    for (let i = 0; i < LAG_BATCH_SIZE; i++) events.push(movementJson(`${LAG_PREFIX}${batch}-${i}`, batch * LAG_BATCH_SIZE + i));
    const body = batchBody('movement', events);
    const t0 = performance.now();
    inFlight.push(
      postBatch(service, agent, body).then(
        (count) => {
          at202[batch] = wallMs();
          responseMs[batch] = performance.now() - t0;
          accepted += count;
          if (count !== LAG_BATCH_SIZE) failures.set(`${LAG_BATCH_SIZE - count} rejected`, (failures.get(`${LAG_BATCH_SIZE - count} rejected`) ?? 0) + 1);
        },
        (error: unknown) => {
          const reason = (error as Error).message.split('\n')[0]!.slice(0, 200);
          failures.set(reason, (failures.get(reason) ?? 0) + 1);
        },
      ),
    );
  };

  const stagesBefore = await lastStageId(db);
  const outboxBefore = await lastOutboxPosition(db);
  const offsetPoller = pollOffsets(offsetsDb);
  const started = performance.now() + 10;
  try {
    let batch = 0;
    while (batch < batches) {
      const now = performance.now();
      // Every batch that is due goes now, so that a late timer does not lower the rate.
      while (batch < batches && started + batch * LAG_INTERVAL_MS <= now) {
        maxScheduleSlipMs = Math.max(maxScheduleSlipMs, now - (started + batch * LAG_INTERVAL_MS));
        fire(batch++);
      }
      if (batch < batches) await sleep(Math.max(0, started + batch * LAG_INTERVAL_MS - performance.now()));
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  const sendSeconds = (performance.now() - started) / 1000;
  log(`(2) sent in ${sendSeconds.toFixed(2)} s, ${accepted} accepted; waiting for the pipeline...`);

  let snapshots: OffsetSnapshot[];
  try {
    const end = await logEnd(db);
    await waitForDrain(db, end, pipeline, { object: 'movement', prefix: LAG_PREFIX, label: 'phase 2 movements' });
  } finally {
    snapshots = await offsetPoller.stop();
  }

  log('(2) drained; reading the stage rows...');

  // Three linear reads joined here by event_id: the phase's inbox rows, and the stage and log rows
  // written since it started.
  const { rows: inbox } = await db.query<{ event_id: string; external_id: string; received_ms: number }>(
    `SELECT event_id::text, external_id, (extract(epoch FROM received_at) * 1000)::float8 AS received_ms
       FROM inbox_events WHERE tenant_id = $1 AND object = 'movement' AND starts_with(external_id, $2)`,
    [TENANT, LAG_PREFIX],
  );
  const { rows: stages } = await db.query<{ event_id: string; canonical_ms: number }>(
    `SELECT event_id::text, (extract(epoch FROM at) * 1000)::float8 AS canonical_ms
       FROM event_stages WHERE id > $1 AND tenant_id = $2 AND stage = 'canonical' AND status = 'ok'`,
    [stagesBefore, TENANT],
  );
  const { rows: records } = await db.query<{ event_id: string; partition: number; xid: string; position: string }>(
    `SELECT event_id::text, partition, writer_xid::text AS xid, position::text FROM outbox WHERE position > $1 AND tenant_id = $2 AND stream = 'inbox'`,
    [outboxBefore, TENANT],
  );
  const canonicalAt = new Map(stages.map((row) => [row.event_id, row.canonical_ms]));
  const logRecord = new Map(records.map((row) => [row.event_id, row]));
  const fromReceived: number[] = [];
  const from202: number[] = [];
  const toCommitted: number[] = [];
  for (const row of inbox) {
    const canonicalMs = canonicalAt.get(row.event_id);
    if (canonicalMs === undefined) continue; // not processed (held, rejected): counted in the statuses
    fromReceived.push(canonicalMs - row.received_ms);
    const batch = Number(row.external_id.slice(LAG_PREFIX.length).split('-')[0]);
    const t202 = at202[batch];
    if (t202 === undefined || Number.isNaN(t202)) continue;
    from202.push(canonicalMs - t202);
    const record = logRecord.get(row.event_id);
    const committed = record ? committedAt(snapshots, record.partition, BigInt(record.xid), BigInt(record.position)) : NaN;
    if (!Number.isNaN(committed)) toCommitted.push(committed - t202);
  }
  return {
    batches,
    sent: batches * LAG_BATCH_SIZE,
    accepted,
    failures,
    sendSeconds,
    maxScheduleSlipMs,
    responseMs: responseMs.filter((ms) => !Number.isNaN(ms)).sort(),
    fromReceivedMs: Float64Array.from(fromReceived).sort(),
    from202Ms: Float64Array.from(from202).sort(),
    toCommittedMs: Float64Array.from(toCommitted).sort(),
    statuses: await statusCounts(db, 'movement', LAG_PREFIX),
  };
}

// ---- running ---------------------------------------------------------------------------------

async function main(teardown: Teardown): Promise<void> {
  const service = await startService(teardown, log, { name: 'api' });
  const [db, offsetsDb] = (await connectClients(service.dataDir, 2, teardown.clients)) as [pg.Client, pg.Client];

  // ---- setup: the parties, made canonical by a pipeline of their own ----
  const partyBatches = Math.ceil(PARTIES / BATCH_SIZE);
  const partySize = (batch: number) => Math.min(BATCH_SIZE, PARTIES - batch * BATCH_SIZE);
  log(`ingesting ${PARTIES} parties...`);
  await ingestAll(service, INGEST_CONNECTIONS, partyBatches, (batch) => {
    const events: string[] = [];
    for (let i = 0; i < partySize(batch); i++) events.push(partyJson(batch * BATCH_SIZE + i));
    return batchBody('party', events);
  }, partySize);
  const partiesEnd = await logEnd(db);
  const setupPipeline = (await startPipeline(teardown, service, 'canonical', 'pipeline (parties)')).child;
  await waitForDrain(db, partiesEnd, setupPipeline, { object: 'party', prefix: 'p-', label: 'parties' });
  const parties = await statusCounts(db, 'party', 'p-');
  if ((parties.get('processed') ?? 0) !== PARTIES) throw new Error(`parties not all processed: ${countsText(parties)}; the pipeline's output:\n${setupPipeline.output()}`);
  await stopChild(setupPipeline, 'SIGTERM');
  if (setupPipeline.process.exitCode !== 0) log(`note: ${setupPipeline.name} exited with ${setupPipeline.process.exitCode ?? setupPipeline.process.signalCode}`);
  log(`${PARTIES} parties processed; pipeline stopped`);

  // ---- (1) throughput, (2) lag; the pipeline's RSS sampled over both ----
  const rss: { sampler?: ReturnType<typeof sampleRss> } = {};
  let peak: RssPeak | undefined;
  let throughput: Throughput;
  let lag: Lag;
  try {
    const phase1 = await throughputPhase(teardown, service, db, rss);
    throughput = phase1.result;
    lag = await lagPhase(service, db, offsetsDb, phase1.pipeline);
  } finally {
    peak = rss.sampler?.stop();
  }
  for (const child of teardown.children) {
    if (child.hasExited() && child !== setupPipeline) throw new Error(`${child.name} exited during the run:\n${child.output()}`);
  }
  // The service's own view, as an operator would see it.
  log('running `svc status --json`...');
  const status = (await svc(service.env, ['status', '--json'])).trim().split('\n').pop() ?? '';
  report(throughput, lag, peak, status);
}

// ---- reporting -------------------------------------------------------------------------------

const CORES = availableParallelism();

// The share of the machine's cores busy over a side's CPU window.
function machineBusy(cpu: CpuUse): number {
  return busyShare(cpu.machine, cpu.wallSeconds, CORES);
}

function percent(share: number): string {
  return Number.isFinite(share) ? `${(100 * share).toFixed(0)} %` : '-';
}

function report(throughput: Throughput, lag: Lag, rss: RssPeak | undefined, status: string): void {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const ingestRate = MOVEMENTS / throughput.ingestSeconds;
  const canonicalRate = MOVEMENTS / throughput.canonicalSeconds;
  const ratio = canonicalRate / ingestRate;
  const peak = peakBytes(rss);
  const p95 = percentile(lag.fromReceivedMs, 95);

  out(`\n(1) throughput: ${MOVEMENTS} movements among ${PARTIES} parties, batches of ${BATCH_SIZE}`);
  out(
    table([
      ['side', 'events', 'seconds', 'events/s'],
      [`ingest: \`svc run api\`, signed POST /v1/batches, ${INGEST_CONNECTIONS} connections, no pipeline`, String(MOVEMENTS), throughput.ingestSeconds.toFixed(2), ingestRate.toFixed(0)],
      ['canonical: `svc run pipeline canonical`, first event (or "running") to drained', String(MOVEMENTS), throughput.canonicalSeconds.toFixed(2), canonicalRate.toFixed(0)],
      ['  cross-check: first to last canonical stage row', String(MOVEMENTS), throughput.stageSpanSeconds.toFixed(2), (MOVEMENTS / throughput.stageSpanSeconds).toFixed(0)],
    ]),
  );
  out(`phase 1 movements by status: ${countsText(throughput.statuses)}`);
  const cpuRow = (name: string, cpu: CpuUse) => [
    name,
    microsPerUnit(cpu.process, MOVEMENTS),
    microsPerUnit(cpu.postgres, MOVEMENTS),
    microsPerUnit(cpu.self, MOVEMENTS),
    microsPerUnit(cpu.machine, MOVEMENTS),
    cpu.wallSeconds.toFixed(1),
    percent(machineBusy(cpu)),
    percent(cpu.process / cpu.wallSeconds),
  ];
  out(
    table([
      ['CPU µs per event', 'process', 'postgres', 'load driver', 'machine', 'wall s', 'machine busy', 'process busy (1 core)'],
      cpuRow('ingest (process: API)', throughput.ingestCpu),
      cpuRow('canonical (process: pipeline)', throughput.canonicalCpu),
    ]),
  );
  out(`ratio canonical/ingest: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(1)})`);
  // Each side's rate is the machine's busy share times its cores over the machine's CPU per event,
  // so the ratio is two factors: what an event costs each side, and how busy each kept the machine.
  // (Approximately: the CPU windows and the rates' windows differ by the drain poll.)
  const { ingestCpu, canonicalCpu } = throughput;
  out(
    `  = machine CPU per event, ingest/canonical ${(ingestCpu.machine / canonicalCpu.machine).toFixed(2)}` +
      ` × machine busy, canonical/ingest ${(machineBusy(canonicalCpu) / machineBusy(ingestCpu)).toFixed(2)} (approximately)`,
  );

  const slip = lag.maxScheduleSlipMs;
  out(
    `\n(2) lag: ${lag.sent} movements at ${RATE} events/s for ${SECONDS} s (${lag.batches} batches of ${LAG_BATCH_SIZE}, open loop; ` +
      `sent in ${lag.sendSeconds.toFixed(2)} s, latest batch ${slip.toFixed(1)} ms behind schedule), ${lag.accepted} accepted`,
  );
  const row = (name: string, sorted: Float64Array) => [
    name,
    String(sorted.length),
    percentile(sorted, 50).toFixed(0),
    percentile(sorted, 95).toFixed(0),
    percentile(sorted, 99).toFixed(0),
    (sorted.length > 0 ? sorted[sorted.length - 1]! : NaN).toFixed(0),
  ];
  out(
    table([
      ['ms', 'n', 'p50', 'p95', 'p99', 'max'],
      row('lag: received_at -> canonical stage at', lag.fromReceivedMs),
      row('lag: client 202 -> canonical stage at', lag.from202Ms),
      row(`lag: client 202 -> offset committed (${OFFSET_POLL_MS} ms poll)`, lag.toCommittedMs),
      row('batch of 50: request -> 202', lag.responseMs),
    ]),
  );
  out(`phase 2 movements by status: ${countsText(lag.statuses)}`);
  if (lag.failures.size > 0) out(`phase 2 request errors: ${failuresText(lag.failures)}`);
  out(`p95 lag: ${p95.toFixed(0)} ms (target <= ${TARGET_P95_MS})`);

  out(
    `\npeak pipeline RSS over (1) and (2): ${mb(peak)} MB (target <= ${RSS_LIMIT_MB}; VmRSS sampled every ${RSS_INTERVAL_MS} ms: ` +
      `max ${mb(rss?.sampledMaxBytes)} MB over ${rss?.samples ?? 0} samples; VmHWM ${mb(rss?.hwmBytes)} MB ` +
      `${rss?.hwmReset ? 'since the pipeline was ready' : 'since process start (could not reset)'})`,
  );
  out(`svc status --json at the end: ${status}`);
  out(`ratio canonical/ingest events/s: ${ratio.toFixed(2)} (p95 lag ${p95.toFixed(0)} ms at ${RATE} events/s; peak pipeline RSS ${mb(peak)} MB)`);
}

// reportStops: a pipeline may take a while to let go of its partitions; the log says which did.
await runBench('pipeline', log, main, true);

// bench/imports: historical imports against batch ingest of the same events, in the same run.
//
//   Setup: `svc run api` and `svc run pipeline imports` (the import worker), each a process of its
//   own on one fresh embedded PostgreSQL in a temp dir; no other pipeline runs, so nothing else
//   competes for the 2 cores. Tenant `bench`, an ingest key. A synthetic movements CSV of
//   IMPORT_ROWS (default 1,000,000) rows is streamed to a file in that temp dir: id, at (spread in
//   time order over the 90 days before a go-live instant, the start of the current UTC hour),
//   amount (decimal, cents, log-uniform 1.00-50,000), currency (USD/EUR/GBP), from/to (2,000
//   accounts, some far busier), memo (optional, some quoted); the movement mapping of
//   bench/imports/movements.ts over it (external_id, occurred_at datetime, type and status
//   constants, money, debit/credit account ids, optional memo).
//   (1) Baseline: the same events (the event the mapping makes of each row, under a `bat-` id
//       instead of the file's `imp-` one, so neither side sees the other's rows as duplicates)
//       as signed POST /v1/batches of 1000 over 4 keep-alive connections, closed loop, every event
//       accepted: rows/s = rows / (first request to last 202). 4 as in bench/ingest (b) and
//       bench/pipeline: on 2 cores it keeps the API parsing/validating one batch while
//       PostgreSQL inserts another (more would only queue). IMPORT_BASELINE_ROWS (default: all
//       rows) caps it to the first rows of the file; rows/s is what is compared.
//   (2) Import: POST /v1/imports (go_live_at, backfill_from 91 days before), the file PUT in
//       chunks of at most IMPORT_CHUNK_BYTES (default 3 MiB) cut at line breaks, read from the file
//       as it goes, one after the other; submit; GET /v1/imports/{id} every 200 ms until completed.
//       Upload = first PUT to the submit's 202; landing = the import's submitted_at to its
//       completed_at; import rows/s = rows / (first PUT to completed_at).
//       Target: import/batch rows/s >= 0.7.
//   Peak RSS of the API and of the worker from the first PUT to completion: VmRSS sampled every
//   100 ms and VmHWM (reset at the first PUT). Target: <= 300 MB each (the file is streamed).
//   Checked: GET /v1/imports/{id} says completed with every row read and accepted, 0 rejects,
//   0 duplicates, 0 skipped; the inbox holds every imported row (historical, with the import id)
//   and every batched one; 200 rows read back from both sides are the same event apart from the
//   external_id. The baseline runs first, so the import lands into the larger table.
//   Also printed, to show where the time goes: CPU seconds of the API, the worker, PostgreSQL and
//   this process per phase (/proc), and what the service's database connections were doing
//   (pg_stat_activity every 100 ms: active in which statement, waiting on what, idle in a
//   transaction = the worker computing between statements).
//
//   npm run bench:imports          (IMPORT_ROWS=50000 npm run bench:imports for a quick run)
//
// IMPORT_LAND_TIMEOUT_S (default 1800) bounds the wait for the worker; BENCH_PIPELINE_NODE_ARGS
// adds node options to the worker (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). The last line is
// the ratio with the RSS and correctness verdicts; the exit code is 1 unless all three pass.
// Everything started here is stopped and the temp dir (database and CSV) removed, also on error
// and Ctrl-C.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPipeline } from './lib/batches.ts';
import { startService } from './lib/bench-service.ts';
import { runBench, type Teardown } from './lib/teardown.ts';
import { runBaseline } from './imports/baseline.ts';
import { landedRows } from './imports/checks.ts';
import { writeMovementsCsv } from './imports/csv-file.ts';
import { runImport } from './imports/import-side.ts';
import { monitorPool } from './imports/monitor.ts';
import { report } from './imports/report.ts';
import { API_APPLICATION, BASELINE_ROWS, log, ROWS, WORKER_APPLICATION } from './imports/settings.ts';

const HOUR_MS = 3_600_000;

async function main(teardown: Teardown): Promise<void> {
  // The machine is shared: its load before and after, to tell a quiet run from a crowded one.
  const loadBefore = loadavg()[0]!;
  const service = await startService(teardown, log, { name: 'svc run api', env: { PGAPPNAME: API_APPLICATION } });
  const pgDir = join(service.dataDir, 'pg');
  // The worker's connections get an application_name of their own.
  const { child: worker } = await startPipeline(teardown, { ...service, env: { ...service.env, PGAPPNAME: WORKER_APPLICATION } }, 'imports', 'svc run pipeline imports');
  const { pool, end: closePool } = await monitorPool(teardown, service.dataDir);
  const setting = async (name: string) => (await pool.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
  const postgres = `PostgreSQL ${await setting('server_version')} (fsync ${await setting('fsync')}, synchronous_commit ${await setting('synchronous_commit')})`;

  const goLiveMs = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
  const csvPath = join(service.dataDir, 'movements.csv');
  log(`writing ${ROWS} movements to ${csvPath}...`);
  const t0 = performance.now();
  const fileBytes = await writeMovementsCsv(csvPath, ROWS, goLiveMs);
  const generateSeconds = (performance.now() - t0) / 1000;
  log(`${(fileBytes / 1048576).toFixed(1)} MiB in ${generateSeconds.toFixed(1)} s`);

  const baseline = await runBaseline(service, worker.pid, pgDir, pool, goLiveMs);
  const run = await runImport(service, worker, pgDir, pool, csvPath, goLiveMs);
  if (service.api.hasExited()) throw new Error(`the API exited during the run:\n${service.api.output()}`);
  log('reading back what landed...');
  const landed = await landedRows(pool, BASELINE_ROWS);
  await closePool();
  const verdicts = report({ postgres, fileBytes, generateSeconds, load: [loadBefore, loadavg()[0]!] }, baseline, run, landed);
  if (!verdicts.ratioOk || !verdicts.rssOk || !verdicts.correct) process.exitCode = 1;
}

await runBench('imports', log, main);

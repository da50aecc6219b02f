import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { Import, SvcClient } from '../../clients/typescript/src/index.ts';
import { benchClient } from '../lib/api.ts';
import type { BenchService } from '../lib/bench-service.ts';
import { sampleActivity, type Activity } from '../lib/pg-activity.ts';
import type { Child } from '../lib/processes.ts';
import { peakBytes, sampleRss, statusKiB } from '../lib/rss.ts';
import { lineChunks } from './csv-file.ts';
import { cpuBetween, cpuMark, STATEMENT_KIND, type CpuUse } from './monitor.ts';
import { MAPPING } from './movements.ts';
import { ACTIVITY_INTERVAL_MS, API_APPLICATION, CHUNK_BYTES, HISTORY_DAYS, LAND_TIMEOUT_MS, log, POLL_MS, PROGRESS_EVERY_MS, RSS_INTERVAL_MS, WORKER_APPLICATION } from './settings.ts';

// The import side: POST /v1/imports, the file PUT chunk by chunk (sequentially), submit, then
// GET /v1/imports/{id} every POLL_MS until the worker has completed it, all through the SDK with
// the bench's ingest key (one attempt each: nothing here is marked safe to repeat, so any failure
// stops the bench). RSS of the API and of the worker is sampled from the first upload to
// completion (VmHWM reset at the first upload).

const DAY_MS = 86_400_000;

export interface ImportRun {
  view: Import;
  chunks: number;
  bytes: number;
  // Wall clock: from the first PUT to the submit's 202.
  uploadSeconds: number;
  // The service's own timestamps: submitted_at to completed_at (includes the worker noticing it).
  landingSeconds: number;
  // From the first PUT (this process's clock) to completed_at (the service's; same machine).
  overallSeconds: number;
  apiPeakBytes: number | undefined;
  workerPeakBytes: number | undefined;
  workerHwmReset: boolean;
  apiAtStartBytes: number | undefined;
  // The worker's VmHWM before the reset: its start-up, idle polling and nothing else.
  workerStartupHwmBytes: number | undefined;
  uploadCpu: CpuUse;
  landingCpu: CpuUse;
  uploadActivity: Activity;
  landingActivity: Activity;
  // The worker's VmRSS in KiB at the first poll that saw a quarter, half, three quarters of the
  // chunks landed, and at completion: flat if the file is streamed.
  workerRssByQuarter: Array<number | undefined>;
}

export async function runImport(service: BenchService, worker: Child, pgDir: string, pool: pg.Pool, csvPath: string, goLiveMs: number): Promise<ImportRun> {
  const client = benchClient(service);
  const created = await client.imports.create({
    mapping: MAPPING,
    go_live_at: new Date(goLiveMs).toISOString(),
    backfill_from: new Date(goLiveMs - (HISTORY_DAYS + 1) * DAY_MS).toISOString(),
  });
  const id = created.import_id;
  log(`import ${id}: uploading ${csvPath} in chunks of at most ${(CHUNK_BYTES / 1048576).toFixed(1)} MiB cut at line breaks...`);

  const workerStartupHwmKiB = statusKiB(worker.pid, 'VmHWM');
  // What the API holds already (the heap the baseline left, until a GC gives it back).
  const apiAtStartKiB = statusKiB(service.api.pid, 'VmRSS');
  const apiRss = sampleRss(service.api.pid, RSS_INTERVAL_MS);
  const workerRss = sampleRss(worker.pid, RSS_INTERVAL_MS);
  let uploadActivity: Activity | undefined;
  let landingActivity: Activity | undefined;
  let activity = sampleActivity(pool, API_APPLICATION, STATEMENT_KIND, ACTIVITY_INTERVAL_MS);
  const mark = () => cpuMark(service.api.pid, worker.pid, pgDir);
  try {
    const firstPutWallMs = Date.now();
    const uploadStarted = performance.now();
    const beforeUpload = mark();
    let chunks = 0;
    let bytes = 0;
    for await (const chunk of lineChunks(csvPath, CHUNK_BYTES)) {
      const staged = await client.imports.uploadChunk(id, chunks, chunk, { contentType: 'text/csv' });
      if (staged.bytes !== chunk.length) throw new Error(`chunk ${chunks}: staged ${staged.bytes} of ${chunk.length} bytes`);
      chunks++;
      bytes += chunk.length;
    }
    uploadActivity = await activity.stop();
    activity = sampleActivity(pool, WORKER_APPLICATION, STATEMENT_KIND, ACTIVITY_INTERVAL_MS);
    const submitted = await client.imports.submit(id, { chunk_count: chunks });
    const uploadSeconds = (performance.now() - uploadStarted) / 1000;
    const afterUpload = mark();
    log(`import ${id}: ${chunks} chunks (${(bytes / 1048576).toFixed(1)} MiB) uploaded and submitted in ${uploadSeconds.toFixed(1)} s; landing...`);

    const workerRssByQuarter: Array<number | undefined> = [undefined, undefined, undefined, undefined];
    const view = await waitForCompletion(client, worker, id, chunks, (landed) => {
      for (let q = 0; q < 4; q++) if (workerRssByQuarter[q] === undefined && landed * 4 >= chunks * (q + 1)) workerRssByQuarter[q] = workerRss.sample();
    });
    const landed = mark();
    landingActivity = await activity.stop();
    const apiPeak = apiRss.stop();
    const workerPeak = workerRss.stop();
    const completedMs = Date.parse(view.completed_at!);
    return {
      view,
      chunks,
      bytes,
      uploadSeconds,
      landingSeconds: (completedMs - Date.parse(submitted.submitted_at!)) / 1000,
      overallSeconds: (completedMs - firstPutWallMs) / 1000,
      apiPeakBytes: peakBytes(apiPeak),
      workerPeakBytes: peakBytes(workerPeak),
      workerHwmReset: workerPeak.hwmReset,
      apiAtStartBytes: apiAtStartKiB === undefined ? undefined : apiAtStartKiB * 1024,
      workerStartupHwmBytes: workerStartupHwmKiB === undefined ? undefined : workerStartupHwmKiB * 1024,
      uploadCpu: cpuBetween(beforeUpload, afterUpload),
      landingCpu: cpuBetween(afterUpload, landed),
      uploadActivity,
      landingActivity,
      workerRssByQuarter,
    };
  } finally {
    // On failure: stop the samplers (their timers would keep the process alive).
    apiRss.stop();
    workerRss.stop();
    if (landingActivity === undefined) await activity.stop().catch(() => undefined);
  }
}

// onPoll: called with the chunks landed at every poll (and once more at completion).
async function waitForCompletion(client: SvcClient, worker: Child, id: string, chunks: number, onPoll: (landed: number) => void): Promise<Import> {
  const started = performance.now();
  let lastLog = started;
  for (;;) {
    if (worker.hasExited()) throw new Error(`the import worker exited while landing:\n${worker.output()}`);
    const view = await client.imports.retrieve(id);
    onPoll(view.chunks_landed);
    if (view.state === 'completed') return view;
    if (view.state !== 'submitted' && view.state !== 'processing') throw new Error(`import ${id} ended ${view.state}: ${view.failure ?? ''}\n${worker.output()}`);
    const now = performance.now();
    if (now - started > LAND_TIMEOUT_MS) throw new Error(`import ${id} not landed within ${LAND_TIMEOUT_MS / 1000} s (${view.chunks_landed}/${chunks} chunks)`);
    if (now - lastLog >= PROGRESS_EVERY_MS) {
      lastLog = now;
      log(`  ${view.chunks_landed}/${chunks} chunks landed, ${view.accepted} accepted (${(view.accepted / ((now - started) / 1000)).toFixed(0)} rows/s so far)`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

import type pg from 'pg';
import { ingestAll } from '../lib/batches.ts';
import type { BenchService } from '../lib/bench-service.ts';
import { sampleActivity, type Activity } from '../lib/pg-activity.ts';
import { peakBytes, sampleRss } from '../lib/rss.ts';
import { cpuBetween, cpuMark, STATEMENT_KIND, type CpuUse } from './monitor.ts';
import { externalId, movementEvent, movementRow } from './movements.ts';
import { ACTIVITY_INTERVAL_MS, API_APPLICATION, BASELINE_ROWS, BATCH_CONNECTIONS, BATCH_PREFIX, BATCH_SIZE, log, ROWS, RSS_INTERVAL_MS } from './settings.ts';

// The baseline: the same events as rows 0 .. BASELINE_ROWS-1 of the file, under their own
// external ids, as signed POST /v1/batches of BATCH_SIZE over BATCH_CONNECTIONS closed loops
// (bench/lib/batches.ts ingestAll: every event must be accepted).

export interface BaselineRun {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  apiPeakBytes: number | undefined;
  cpu: CpuUse;
  activity: Activity;
}

// The request body of batch b: built when it is sent (a string join per event), so the events
// never all sit in memory at once.
function batchBody(batch: number, goLiveMs: number): Buffer {
  const items: string[] = [];
  for (let n = batch * BATCH_SIZE; n < Math.min(BASELINE_ROWS, (batch + 1) * BATCH_SIZE); n++) {
    items.push(`{"object":"movement","event":${JSON.stringify(movementEvent(externalId(BATCH_PREFIX, n, ROWS), movementRow(n, ROWS, goLiveMs)))}}`);
  }
  return Buffer.from(`{"events":[${items.join(',')}]}`, 'utf8');
}

export async function runBaseline(service: BenchService, workerPid: number, pgDir: string, pool: pg.Pool, goLiveMs: number): Promise<BaselineRun> {
  const batches = Math.ceil(BASELINE_ROWS / BATCH_SIZE);
  const sizeOf = (batch: number) => Math.min(BASELINE_ROWS, (batch + 1) * BATCH_SIZE) - batch * BATCH_SIZE;
  log(`baseline: ${BASELINE_ROWS} events as ${batches} signed POST /v1/batches of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} connections...`);
  const rss = sampleRss(service.api.pid, RSS_INTERVAL_MS);
  const activity = sampleActivity(pool, API_APPLICATION, STATEMENT_KIND, ACTIVITY_INTERVAL_MS);
  const before = cpuMark(service.api.pid, workerPid, pgDir);
  let seconds: number;
  let activitySeen: Activity;
  let apiPeakBytes: number | undefined;
  try {
    seconds = await ingestAll(service, BATCH_CONNECTIONS, batches, (b) => batchBody(b, goLiveMs), sizeOf);
  } finally {
    apiPeakBytes = peakBytes(rss.stop());
    activitySeen = await activity.stop();
  }
  const cpu = cpuBetween(before, cpuMark(service.api.pid, workerPid, pgDir));
  const rowsPerSecond = BASELINE_ROWS / seconds;
  log(`baseline: ${BASELINE_ROWS} events in ${seconds.toFixed(1)} s = ${rowsPerSecond.toFixed(0)} rows/s`);
  return { rows: BASELINE_ROWS, seconds, rowsPerSecond, apiPeakBytes, cpu, activity: activitySeen };
}

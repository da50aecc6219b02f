import type { Activity } from '../lib/pg-activity.ts';
import { mb } from '../lib/rss.ts';
import { table } from '../lib/stats.ts';
import type { BaselineRun } from './baseline.ts';
import type { Landed } from './checks.ts';
import type { ImportRun } from './import-side.ts';
import type { CpuUse } from './monitor.ts';
import { BATCH_CONNECTIONS, BATCH_SIZE, CHUNK_BYTES, ROWS, RSS_LIMIT_MB, TARGET_RATIO } from './settings.ts';

// What bench/imports prints on stdout. Verdicts: the ratio import/batch rows/s against
// TARGET_RATIO, each process's peak RSS against RSS_LIMIT_MB, and correctness (every row accepted,
// no reject or duplicate, the same events on both sides). The last line sums them up.

export interface Setup {
  postgres: string;
  fileBytes: number;
  generateSeconds: number;
  // 1-minute load average of the machine at the start and at the end.
  load: [number, number];
}

export interface Verdicts {
  ratio: number;
  ratioOk: boolean;
  rssOk: boolean;
  correct: boolean;
}

const MIB = 1024 * 1024;
const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

export function report(setup: Setup, baseline: BaselineRun, run: ImportRun, landed: Landed): Verdicts {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const v = run.view;
  const overall = ROWS / run.overallSeconds;
  const ratio = overall / baseline.rowsPerSecond;
  const ratioOk = ratio >= TARGET_RATIO;
  const apiMb = (run.apiPeakBytes ?? Infinity) / MIB;
  const workerMb = (run.workerPeakBytes ?? Infinity) / MIB;
  const rssOk = apiMb <= RSS_LIMIT_MB && workerMb <= RSS_LIMIT_MB;
  const correct =
    v.state === 'completed' && v.rows_read === ROWS && v.accepted === ROWS && v.rejected === 0 && v.duplicates === 0 && v.skipped === 0 &&
    landed.imported === ROWS && landed.importedHistorical === ROWS && landed.batched === baseline.rows && landed.sameEvents === landed.sampled;

  out(`\nhistorical import vs batch ingest, same run: \`svc run api\` + \`svc run pipeline imports\` only, ${setup.postgres}`);
  out(
    `file: ${ROWS} movements, ${(setup.fileBytes / MIB).toFixed(1)} MiB (${(setup.fileBytes / ROWS).toFixed(0)} bytes/row), generated in ${setup.generateSeconds.toFixed(1)} s; ` +
      `${run.chunks} chunks of <= ${(CHUNK_BYTES / MIB).toFixed(1)} MiB cut at line breaks`,
  );
  const subset = baseline.rows < ROWS ? ` (subset: the first ${baseline.rows} rows of the file)` : '';
  out(
    table([
      ['side', 'rows', 'seconds', 'rows/s'],
      [`baseline: POST /v1/batches of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} connections${subset}`, String(baseline.rows), baseline.seconds.toFixed(1), baseline.rowsPerSecond.toFixed(0)],
      [`import, upload: ${run.chunks} sequential PUTs + submit (${(run.bytes / MIB / run.uploadSeconds).toFixed(1)} MiB/s)`, String(ROWS), run.uploadSeconds.toFixed(1), (ROWS / run.uploadSeconds).toFixed(0)],
      ['import, landing: submitted_at -> completed_at', String(ROWS), run.landingSeconds.toFixed(1), (ROWS / run.landingSeconds).toFixed(0)],
      ['import, overall: first PUT -> completed_at', String(ROWS), run.overallSeconds.toFixed(1), overall.toFixed(0)],
    ]),
  );
  out(`ratio import/batch rows/s: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO}) ${pass(ratioOk)}`);
  out(
    `peak RSS during the import (first PUT -> completed; VmRSS every 100 ms and VmHWM${run.workerHwmReset ? ' reset at the first PUT' : ' (could not reset: lifetime peak)'}): ` +
      `API ${mb(run.apiPeakBytes)} MB, import worker ${mb(run.workerPeakBytes)} MB (target <= ${RSS_LIMIT_MB} MB each) ${pass(rssOk)}`,
  );
  const quarters = run.workerRssByQuarter.map((kib, q) => `${(q + 1) * 25} % ${kib === undefined ? 'n/a' : mb(kib * 1024)}`).join(', ');
  out(`  worker VmRSS by chunks landed (MB): ${quarters}`);
  out(
    `  for reference: API VmRSS at the first PUT ${mb(run.apiAtStartBytes)} MB (left from the baseline), its peak during the baseline ${mb(baseline.apiPeakBytes)} MB; ` +
      `worker VmHWM from start-up to the first PUT ${mb(run.workerStartupHwmBytes)} MB`,
  );
  out(
    `GET /v1/imports/${v.import_id}: state ${v.state}, chunks ${v.chunks_landed}/${v.chunk_count}, rows_read ${v.rows_read}, accepted ${v.accepted}, ` +
      `duplicates ${v.duplicates}, rejected ${v.rejected}, skipped ${v.skipped}`,
  );
  out(
    `inbox: ${landed.imported} imported rows (${landed.importedHistorical} historical with the import id), ${landed.batched} batched rows; ` +
      `same event on both sides (external_id aside) for ${landed.sameEvents}/${landed.sampled} sampled rows${landed.firstDifference ? `; first difference: ${landed.firstDifference}` : ''}`,
  );
  out(`correctness (all ${ROWS} accepted, 0 rejects, 0 duplicates, same events): ${pass(correct)}`);

  out(
    `\nwhere the time goes (CPU seconds; "cores" = machine busy seconds / wall seconds, 2 cores, anything else running included; ` +
      `load average ${setup.load[0].toFixed(2)} at the start, ${setup.load[1].toFixed(2)} at the end):`,
  );
  const per1000 = (seconds: number, rows: number) => ((seconds / rows) * 1e6).toFixed(0);
  const cpuRow = (name: string, cpu: CpuUse, rows: number) => [
    name,
    cpu.wallSeconds.toFixed(1),
    cpu.api.toFixed(1),
    cpu.worker.toFixed(1),
    cpu.postgres.toFixed(1),
    cpu.self.toFixed(1),
    (cpu.machine / cpu.wallSeconds).toFixed(2),
    per1000(cpu.api + cpu.worker + cpu.postgres, rows),
  ];
  out(
    table([
      ['phase', 'wall s', 'API', 'worker', 'PostgreSQL', 'bench', 'cores', 'svc+pg CPU ms/1000 rows'],
      cpuRow('baseline (batches)', baseline.cpu, baseline.rows),
      cpuRow('import upload', run.uploadCpu, ROWS),
      cpuRow('import landing', run.landingCpu, ROWS),
    ]),
  );
  out('database connections (mean count per state, pg_stat_activity every 100 ms):');
  out(`  baseline, API:          ${activityText(baseline.activity)}`);
  out(`  import upload, API:     ${activityText(run.uploadActivity)}`);
  out(`  import landing, worker: ${activityText(run.landingActivity)}`);
  // The worker lands a chunk in one transaction on one connection: at any moment it is in PostgreSQL
  // (active), computing between two statements of the transaction (idle in transaction), or between
  // transactions (claiming the next step, or waiting up to its 500 ms poll after the submit).
  const split = landingSplit(run.landingActivity);
  out(
    `  landing, the worker's transaction: in PostgreSQL ${pct(split.active)}, worker computing (idle in transaction) ${pct(split.idleInTransaction)}, ` +
      `no transaction open ${pct(Math.max(0, 1 - split.active - split.idleInTransaction))}`,
  );

  out(
    `\nimport ${overall.toFixed(0)} rows/s vs batches ${baseline.rowsPerSecond.toFixed(0)} rows/s: ratio ${ratio.toFixed(2)} ${pass(ratioOk)}; ` +
      `peak RSS API ${mb(run.apiPeakBytes)} MB, worker ${mb(run.workerPeakBytes)} MB ${pass(rssOk)}; correctness ${pass(correct)}`,
  );
  return { ratio, ratioOk, rssOk, correct };
}

function activityText(activity: Activity): string {
  const entries = [...activity.mean].filter(([what, n]) => what !== null && n >= 0.005).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return `nothing seen (${activity.samples} samples)`;
  return `${entries.map(([what, n]) => `${what} ${n.toFixed(2)}`).join(', ')} (${activity.samples} samples)`;
}

function landingSplit(activity: Activity): { active: number; idleInTransaction: number } {
  let active = 0;
  let idleInTransaction = 0;
  for (const [what, n] of activity.mean) {
    if (what?.startsWith('active')) active += n;
    else if (what === 'idle in transaction') idleInTransaction += n;
  }
  return { active, idleInTransaction };
}

const pct = (share: number): string => `${(share * 100).toFixed(0)} %`;

import type { Activity } from '../lib/pg-activity.ts';
import type { CpuUse } from '../lib/proc-cpu.ts';
import { mb } from '../lib/rss.ts';
import { table } from '../lib/stats.ts';
import type { SideResult } from './receiver-count.ts';
import { ANSWER_DELAY_MS, CEILING_PER_S, CONCURRENCY, DELIVERIES, ENDPOINT_CONCURRENCY, ENDPOINTS, EVENTS, FLAT_GROWTH, IN_FLIGHT } from './settings.ts';
import { countsText } from './worker.ts';

// What bench/webhooks prints on stdout, and its verdicts: PASS when every delivery was verified
// and succeeded and the worker exited 0 (exit code 1 otherwise), FLAT when the worker's RSS grew by
// less than FLAT_GROWTH from the 10 % mark to the end. The last line is the ratio worker/baseline.

export interface Baseline {
  side: SideResult;
  senderCpuSeconds: number;
  receiverCpuSeconds: number;
}

export interface Memory {
  // RSS at the first delivery (mark 0) and at each tenth (marks 1..10), in KiB.
  atMark: Array<{ seconds: number; rssKiB: number } | undefined>;
  startupHwmKiB: number;
  runHwmKiB: number;
  hwmReset: boolean;
  sampledMaxKiB: number;
  settledKiB: number;
  samples: number;
}

interface WorkerSide extends SideResult {
  // From starting the process to every delivery row settled, start-up and fan-out included.
  wallSeconds: number;
  startupSeconds: number;
}

export interface WorkerRun {
  side: WorkerSide;
  memory: Memory;
  // `process` is the worker's, `self` this process's (the receiver).
  cpu: CpuUse;
  activity: Activity;
  statuses: Map<string, number>;
  attempts: number;
  exit: string;
}

const mbOfKiB = (kib: number): string => mb(kib * 1024);

export function report(baseline: Baseline, worker: WorkerRun): void {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const ratio = worker.side.perSecond / baseline.side.perSecond;
  const memory = worker.memory;
  const at10 = memory.atMark[1]?.rssKiB ?? NaN;
  const atEnd = memory.atMark[10]?.rssKiB ?? NaN;
  const growth = atEnd / at10;
  const flat = growth < FLAT_GROWTH;
  const succeeded = worker.statuses.get('succeeded') ?? 0;
  const correct =
    worker.side.failed === 0 && baseline.side.failed === 0 && succeeded === DELIVERIES && worker.side.verified === DELIVERIES && worker.exit === 'exit 0';
  const ofCeiling = (rate: number) => `${((rate / CEILING_PER_S) * 100).toFixed(0)} %`;

  out(`\nwebhook delivery: ${EVENTS} events × ${ENDPOINTS} endpoints = ${DELIVERIES} deliveries; the receiver answers after ${ANSWER_DELAY_MS} ms`);
  out(`in flight: min(SVC_WEBHOOK_CONCURRENCY ${CONCURRENCY}, ${ENDPOINTS} endpoints × ${ENDPOINT_CONCURRENCY}) = ${IN_FLIGHT}; ceiling ${IN_FLIGHT} / ${ANSWER_DELAY_MS / 1000} s = ${CEILING_PER_S.toFixed(0)} deliveries/s`);
  out(
    table([
      ['side (first to last delivery at the receiver)', 'deliveries', 'seconds', 'deliveries/s', 'of ceiling'],
      ['baseline: https.request loop, no database', String(baseline.side.deliveries), baseline.side.seconds.toFixed(2), baseline.side.perSecond.toFixed(0), ofCeiling(baseline.side.perSecond)],
      ['worker: `svc run webhooks`', String(worker.side.deliveries), worker.side.seconds.toFixed(2), worker.side.perSecond.toFixed(0), ofCeiling(worker.side.perSecond)],
    ]),
  );
  out(
    `worker end to end: ${worker.side.wallSeconds.toFixed(2)} s from starting the process to every row settled ` +
      `(${worker.side.startupSeconds.toFixed(2)} s to "running", first delivery at ${memory.atMark[0]?.seconds.toFixed(2) ?? 'n/a'} s)`,
  );
  out(`verification: worker ${worker.side.verified} verified, ${worker.side.failed} failed; baseline ${baseline.side.verified} verified, ${baseline.side.failed} failed`);
  out(`delivery rows: ${countsText(worker.statuses)}; attempts logged ${worker.attempts}; worker stopped with ${worker.exit}; ${correct ? 'PASS' : 'FAIL'} (all ${DELIVERIES} verified and succeeded, worker exit 0)`);

  out(`\nworker RSS by progress (MB): ${memory.atMark.slice(1).map((m, i) => `${(i + 1) * 10}% ${m ? mbOfKiB(m.rssKiB) : 'n/a'}`).join(' | ')}`);
  out(
    `worker RSS: at 10 % ${mbOfKiB(at10)} MB, at 100 % ${mbOfKiB(atEnd)} MB, settled ${mbOfKiB(memory.settledKiB)} MB; ` +
      `peak ${mbOfKiB(Math.max(memory.runHwmKiB, memory.sampledMaxKiB))} MB (VmHWM ${mbOfKiB(memory.runHwmKiB)} MB ${memory.hwmReset ? 'since ready' : 'since start (could not reset)'}, ` +
      `sampled max ${mbOfKiB(memory.sampledMaxKiB)} MB over ${memory.samples} samples); start-up peak ${mbOfKiB(memory.startupHwmKiB)} MB`,
  );
  out(`memory growth 100 % / 10 %: ${growth.toFixed(2)} → ${flat ? 'FLAT' : 'GROWING'} (flat when < ${FLAT_GROWTH})`);

  const cpu = worker.cpu;
  const share = (seconds: number) => `${seconds.toFixed(1)} s (${((seconds / cpu.wallSeconds) * 100).toFixed(0)} % of a core)`;
  out(
    `\nCPU over the worker's ${cpu.wallSeconds.toFixed(1)} s: worker ${share(cpu.process)}, PostgreSQL ${share(cpu.postgres)}, ` +
      `this process (receiver) ${share(cpu.self)}; machine busy ${share(cpu.machine)}`,
  );
  const perDelivery = (seconds: number, n: number) => `${((seconds / n) * 1e6).toFixed(0)} µs`;
  out(
    `CPU per delivery: worker ${perDelivery(cpu.process, worker.side.deliveries)} + PostgreSQL ${perDelivery(cpu.postgres, worker.side.deliveries)}; ` +
      `baseline sender ${perDelivery(baseline.senderCpuSeconds, baseline.side.deliveries)}; receiver ${perDelivery(cpu.self, worker.side.deliveries)} (worker run), ` +
      `${perDelivery(baseline.receiverCpuSeconds, baseline.side.deliveries)} (baseline run)`,
  );
  const activity = [...worker.activity.mean].sort((a, b) => b[1] - a[1]).map(([what, n]) => `${what} ${n.toFixed(2)}`);
  out(`worker's database connections, mean count over ${worker.activity.samples} samples: ${activity.join('; ') || 'none seen'}`);

  out(
    `\nratio worker/baseline deliveries/s: ${ratio.toFixed(2)} (worker ${worker.side.perSecond.toFixed(0)}/s, baseline ${baseline.side.perSecond.toFixed(0)}/s, ` +
      `ceiling ${CEILING_PER_S.toFixed(0)}/s; worker RSS ${mbOfKiB(at10)} → ${mbOfKiB(atEnd)} MB, growth ${growth.toFixed(2)}: ${flat ? 'flat' : 'growing'}; ${correct ? 'all verified' : 'VERIFICATION OR DELIVERY FAILURES'})`,
  );
  if (!correct) process.exitCode = 1;
}

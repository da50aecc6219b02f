import { runClosedLoop, type LoopResult, type Outcome } from './closed-loop.ts';
import { cpuBetween, cpuSnapshot } from './proc-cpu.ts';
import { best, failureCount, failuresText, median, table } from './stats.ts';

// Two sides (the service and its baseline) measured against each other in the same run: alternating
// rounds, so that neither always runs on the warmer machine, reported by the best run of each.

export interface Side {
  name: string;
  loops: number;
  operation: (loop: number) => Promise<Outcome>;
  // The process that serves this side (the API), whose CPU is read for each measured run when
  // Rounds.pgDir is given; none for a baseline served by this process alone.
  cpuPid?: number;
}

export interface Rounds {
  rounds: number;
  warmupSeconds: number;
  seconds: number;
  // What a unit is per second in the log lines and the table ("req/s", "events/s").
  unit: string;
  // Put before "round N" in the log lines, e.g. "(a) ".
  prefix: string;
  log: (line: string) => void;
  // The PostgreSQL directory of the server both sides use: when given, every measured run records
  // the CPU of the side's process, of PostgreSQL, of this process and of the machine (run.cpu).
  pgDir?: string;
}

// Odd rounds run the first side first, even rounds the second; each run has its own warm-up.
// Resolves with the runs of each side, in the order of `sides`.
export async function compareRounds(sides: [Side, Side], options: Rounds): Promise<[LoopResult[], LoopResult[]]> {
  const results: [LoopResult[], LoopResult[]] = [[], []];
  for (let round = 1; round <= options.rounds; round++) {
    const order = round % 2 === 1 ? ([0, 1] as const) : ([1, 0] as const);
    for (const which of order) {
      const side = sides[which];
      if (options.warmupSeconds > 0) await runClosedLoop(side.name, side.loops, options.warmupSeconds, side.operation);
      const before = options.pgDir === undefined ? undefined : cpuSnapshot(side.cpuPid ?? -1, options.pgDir);
      const result = await runClosedLoop(side.name, side.loops, options.seconds, side.operation);
      if (before) result.cpu = cpuBetween(before, cpuSnapshot(side.cpuPid ?? -1, options.pgDir!));
      results[which].push(result);
      options.log(`${options.prefix}round ${round} ${describe(result, options.unit)}`);
    }
  }
  return results;
}

function describe(result: LoopResult, unit: string): string {
  return (
    `${result.target}: ${result.unitsPerSecond.toFixed(0)} ${unit}, p50 ${result.p50Ms.toFixed(2)} ms, ` +
    `p99 ${result.p99Ms.toFixed(2)} ms (${result.ok} ok, ${failuresText(result.failures)})`
  );
}

export function bestRun(runs: LoopResult[]): LoopResult {
  return best(runs, (run) => run.unitsPerSecond);
}

// Best over best: how the first side's throughput compares with the second's.
export function ratio(first: LoopResult[], second: LoopResult[]): number {
  return bestRun(first).unitsPerSecond / bestRun(second).unitsPerSecond;
}

// One row per side (the best run's rate and latency, the median rate, all runs' errors), then a
// line for every run that had errors.
export function comparisonTable(sides: LoopResult[][], unit: string): string {
  const rows = [
    ['target', `best ${unit}`, `median ${unit}`, 'p50 ms', 'p99 ms', 'max ms', 'errors'],
    ...sides.map((runs) => {
      const top = bestRun(runs);
      return [
        top.target,
        top.unitsPerSecond.toFixed(0),
        median(runs.map((r) => r.unitsPerSecond)).toFixed(0),
        top.p50Ms.toFixed(2),
        top.p99Ms.toFixed(2),
        top.maxMs.toFixed(2),
        String(runs.reduce((sum, r) => sum + failureCount(r.failures), 0)),
      ];
    }),
  ];
  const errors = sides.flatMap((runs) => runs.filter((r) => r.failures.size > 0).map((r) => `errors, ${r.target}: ${failuresText(r.failures)}`));
  return [table(rows), ...errors].join('\n');
}

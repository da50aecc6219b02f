import { performance } from 'node:perf_hooks';
import type { CpuUse } from './proc-cpu.ts';
import { percentile } from './stats.ts';

// A generic closed-loop driver: `loops` concurrent loops, each starting its next operation as soon
// as the previous one finished, for `seconds`. An operation is anything that can be awaited (an
// HTTP request, a database statement); it reports how many units (events, rows) it completed, or
// why it failed. bench/lib/load.ts supplies the HTTP operation, with one unit per request.

export type Outcome = { ok: true; units: number } | { ok: false; reason: string };

export interface LoopResult {
  target: string;
  seconds: number;
  // Successful operations and the units they completed.
  ok: number;
  units: number;
  // Failed operations by reason (an unexpected status, an error message).
  failures: Map<string, number>;
  opsPerSecond: number;
  unitsPerSecond: number;
  // Latency of the successful operations.
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  // CPU spent during the run, when the caller measured it (compare.ts with Rounds.pgDir).
  cpu?: CpuUse;
}

export async function runClosedLoop(
  target: string,
  loops: number,
  seconds: number,
  operation: (loop: number) => Promise<Outcome>,
): Promise<LoopResult> {
  let latencies = new Float64Array(1 << 16);
  let ok = 0;
  let units = 0;
  const failures = new Map<string, number>();
  const fail = (reason: string) => failures.set(reason, (failures.get(reason) ?? 0) + 1);

  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async (index: number) => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const outcome = await operation(index);
        const elapsed = performance.now() - t0;
        if (outcome.ok) {
          if (ok === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[ok++] = elapsed;
          units += outcome.units;
        } else {
          fail(outcome.reason);
        }
      } catch (error) {
        fail((error as Error).message || String(error));
        // A refused or reset connection would otherwise spin; back off a little.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: loops }, (_, index) => loop(index)));
  const elapsedS = (performance.now() - started) / 1000;

  const sorted = latencies.subarray(0, ok).sort();
  return {
    target,
    seconds: elapsedS,
    ok,
    units,
    failures,
    opsPerSecond: ok / elapsedS,
    unitsPerSecond: units / elapsedS,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: ok > 0 ? sorted[ok - 1]! : NaN,
  };
}

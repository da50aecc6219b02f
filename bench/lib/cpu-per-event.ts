import type { LoopResult } from './closed-loop.ts';
import { bestRun } from './compare.ts';
import type { CpuUse } from './proc-cpu.ts';
import { table } from './stats.ts';

// CPU microseconds per unit (accepted event, request) of each side's best run: the side's own
// server process, PostgreSQL (postmaster and all its children), this load-driving process, and
// the whole machine (which includes everyone else on a shared host, so read it as context only).

export function microsPerUnit(seconds: number, units: number): string {
  if (!Number.isFinite(seconds) || units <= 0) return '-';
  return ((seconds * 1e6) / units).toFixed(0);
}

// unit: what is counted ("event", "request"); processName: the column of the side's own process.
export function cpuTable(sides: LoopResult[][], unit: string, processName: string): string {
  const rows = [[`CPU µs per ${unit} (best run)`, processName, 'postgres', 'load driver', 'machine', 'wall s']];
  for (const runs of sides) {
    const top = bestRun(runs);
    const cpu: CpuUse | undefined = top.cpu;
    if (!cpu) continue;
    rows.push([
      top.target,
      microsPerUnit(cpu.process, top.units),
      microsPerUnit(cpu.postgres, top.units),
      microsPerUnit(cpu.self, top.units),
      microsPerUnit(cpu.machine, top.units),
      cpu.wallSeconds.toFixed(1),
    ]);
  }
  return table(rows);
}

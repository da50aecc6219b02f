import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { postmasterPid } from './embedded-pg.ts';
import { childPids, readIfPresent } from './proc.ts';

// Where a bench's CPU time goes, from /proc (Linux only): a process under test, the PostgreSQL it
// talks to (the postmaster and all its children), this process and the whole machine, between two
// snapshots. A process gone meanwhile reads as NaN or is left out rather than throwing (see proc.ts).

// Linux clock ticks per second (USER_HZ) of /proc/<pid>/stat and /proc/stat.
const TICKS_PER_S = 100;

// utime + stime of a process, in seconds; undefined once it is gone.
export function cpuSecondsOf(pid: number): number | undefined {
  const text = readIfPresent(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // The fields after the command name (which may hold spaces), from field 3 (state) on.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

// CPU seconds of this process (user + system).
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

// Busy seconds of the whole machine, all cores together (everything but idle and iowait).
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return (total - ticks[3]! - ticks[4]!) / TICKS_PER_S;
}

// The postmaster of pgDir and its children (the backends, the background workers), each with its
// CPU seconds.
export function postgresCpu(pgDir: string): Map<number, number> {
  const cpu = new Map<number, number>();
  const postmaster = postmasterPid(pgDir);
  if (postmaster === undefined) return cpu;
  for (const pid of [postmaster, ...childPids(postmaster)]) {
    const seconds = cpuSecondsOf(pid);
    if (seconds !== undefined) cpu.set(pid, seconds);
  }
  return cpu;
}

export interface CpuSnapshot {
  at: number;
  process: number;
  postgres: Map<number, number>;
  self: number;
  machine: number;
}

// CPU seconds so far of pid, of the PostgreSQL of pgDir, of this process and of the machine.
export function cpuSnapshot(pid: number, pgDir: string): CpuSnapshot {
  return { at: performance.now(), process: cpuSecondsOf(pid) ?? NaN, postgres: postgresCpu(pgDir), self: ownCpuSeconds(), machine: machineBusySeconds() };
}

// CPU seconds spent between two snapshots, and the wall-clock seconds between them.
export interface CpuUse {
  wallSeconds: number;
  process: number;
  postgres: number;
  self: number;
  machine: number;
}

// A backend started in between counts from zero; one that ended in between is missed (fine for a
// service whose connections live through the window).
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const postgres = postgresSecondsBetween(a.postgres, b.postgres);
  return { wallSeconds: (b.at - a.at) / 1000, process: b.process - a.process, postgres, self: b.self - a.self, machine: b.machine - a.machine };
}

// PostgreSQL's CPU seconds between two readings of postgresCpu (same caveats as cpuBetween).
function postgresSecondsBetween(a: Map<number, number>, b: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, now] of b) seconds += now - (a.get(pid) ?? 0);
  return seconds;
}

// CPU seconds so far of each named process, of the PostgreSQL of pgDir (all its processes), of
// this process and of the machine: where a multi-process run's CPU went, between two of these.
export interface CpuLedger {
  at: number;
  named: Map<string, number>;
  postgres: Map<number, number>;
  self: number;
  machine: number;
}

export function cpuLedger(pids: ReadonlyMap<string, number>, pgDir: string): CpuLedger {
  const named = new Map<string, number>();
  for (const [name, pid] of pids) named.set(name, cpuSecondsOf(pid) ?? NaN);
  return { at: performance.now(), named, postgres: postgresCpu(pgDir), self: ownCpuSeconds(), machine: machineBusySeconds() };
}

// One line: CPU seconds per process between two ledgers, and the machine's share of its cores.
export function describeCpu(a: CpuLedger, b: CpuLedger, cores: number): string {
  const wall = (b.at - a.at) / 1000;
  const postgres = postgresSecondsBetween(a.postgres, b.postgres);
  const parts = [...b.named].map(([name, seconds]) => `${name} ${(seconds - (a.named.get(name) ?? NaN)).toFixed(1)}`);
  parts.push(`postgres ${postgres.toFixed(1)}`, `bench ${(b.self - a.self).toFixed(1)}`);
  const busy = b.machine - a.machine;
  return `CPU seconds over ${wall.toFixed(1)} s: ${parts.join(', ')}; machine ${busy.toFixed(1)} of ${(wall * cores).toFixed(1)} (${(100 * busyShare(busy, wall, cores)).toFixed(0)} % busy)`;
}

// The share of the machine's cores busy: busy seconds of all cores over wall seconds times cores.
// Every process's work, so it is a bench's own only on a host where nothing else runs.
export function busyShare(busySeconds: number, wallSeconds: number, cores: number): number {
  return busySeconds / (wallSeconds * cores);
}

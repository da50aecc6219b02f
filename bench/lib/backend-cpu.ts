import type pg from 'pg';
import { cpuSecondsOf } from './proc-cpu.ts';

// The CPU seconds PostgreSQL spent for one client process: the backends whose application_name
// is the one that process connects with (PGAPPNAME in its environment; node-postgres reads it),
// read from /proc. Sampled every intervalMs, so a backend that ends (a pool's idle timeout) is
// missed for at most its last interval, and one that starts in between counts from zero.

export interface BackendCpu {
  // CPU seconds of those backends since start(); the sampling goes on.
  seconds: () => Promise<number>;
  stop: () => void;
}

export function trackBackendCpu(pool: pg.Pool, application: string, intervalMs = 1_000): BackendCpu {
  // Per backend: its CPU when first seen since start (0 for one started after), and the latest.
  const first = new Map<number, number>();
  const latest = new Map<number, number>();
  let started = false;
  const sample = async () => {
    const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [application]);
    for (const { pid } of rows) {
      const seconds = cpuSecondsOf(pid);
      if (seconds === undefined) continue;
      if (!first.has(pid)) first.set(pid, started ? 0 : seconds);
      latest.set(pid, seconds);
    }
    started = true;
  };
  let stopped = false;
  let pending: Promise<void> = sample().catch(() => undefined);
  const timer = setInterval(() => {
    pending = pending.then(sample).catch(() => undefined);
  }, intervalMs);
  // A run that fails before stop() must still end.
  timer.unref();
  return {
    seconds: async () => {
      await pending;
      await sample();
      let total = 0;
      for (const [pid, now] of latest) total += now - (first.get(pid) ?? now);
      return total;
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
    },
  };
}

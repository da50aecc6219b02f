import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { embeddedConnection } from '../lib/embedded-pg.ts';
import { cpuSecondsOf, machineBusySeconds, ownCpuSeconds, postgresCpu } from '../lib/proc-cpu.ts';
import type { Teardown } from '../lib/teardown.ts';
import { MONITOR_APPLICATION } from './settings.ts';

// Where the time of a phase goes: CPU seconds of the API, the import worker, PostgreSQL (all its
// processes), this process and the whole machine between two marks; and (bench/lib/pg-activity)
// what the service's database connections were doing.

// The statements of the API and of the worker, told apart by how their text begins
// (platform/inbox/accept-events.ts, services/imports/imports.ts and worker.ts).
export const STATEMENT_KIND = `CASE WHEN query LIKE 'WITH incoming AS%' THEN 'accept-events'
  WHEN query LIKE 'WITH target AS%' THEN 'stage chunk'
  WHEN query LIKE 'SELECT body FROM import_chunks%' THEN 'read chunk'
  WHEN query LIKE 'SELECT tenant_id, import_id%' THEN 'claim import'
  WHEN query LIKE 'UPDATE imports%' THEN 'update import'
  WHEN query LIKE 'DELETE FROM import_chunks%' THEN 'drop chunk'
  WHEN query IN ('BEGIN', 'COMMIT') THEN lower(query)
  ELSE 'other' END`;

export interface CpuMark {
  at: number;
  api: number;
  worker: number;
  postgres: Map<number, number>;
  self: number;
  machine: number;
}

export interface CpuUse {
  wallSeconds: number;
  api: number;
  worker: number;
  postgres: number;
  self: number;
  machine: number;
}

export function cpuMark(apiPid: number, workerPid: number, pgDir: string): CpuMark {
  return {
    at: performance.now(),
    api: cpuSecondsOf(apiPid) ?? NaN,
    worker: cpuSecondsOf(workerPid) ?? NaN,
    postgres: postgresCpu(pgDir),
    self: ownCpuSeconds(),
    machine: machineBusySeconds(),
  };
}

// A backend started in between counts from zero; one that ended in between is missed.
export function cpuBetween(a: CpuMark, b: CpuMark): CpuUse {
  let postgres = 0;
  for (const [pid, seconds] of b.postgres) postgres += seconds - (a.postgres.get(pid) ?? 0);
  return { wallSeconds: (b.at - a.at) / 1000, api: b.api - a.api, worker: b.worker - a.worker, postgres, self: b.self - a.self, machine: b.machine - a.machine };
}

// A small pool of this process's own on the service's database (activity samples, progress and
// final checks); end() closes it, and the teardown does if the bench does not get to.
export async function monitorPool(teardown: Teardown, dataDir: string): Promise<{ pool: pg.Pool; end: () => Promise<void> }> {
  const pool = new pg.Pool({ ...(await embeddedConnection(dataDir)), max: 2, application_name: MONITOR_APPLICATION });
  // An idle client losing its connection (the server stopping at cleanup) must not crash the bench.
  pool.on('error', () => undefined);
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    await pool.end();
  };
  teardown.closers.push(end);
  return { pool, end };
}

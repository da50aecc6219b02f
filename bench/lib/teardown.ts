import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { stopLeftoverPostgres } from './embedded-pg.ts';
import { stopChild, type Child } from './processes.ts';

// Everything a bench started, undone once, also on error and Ctrl-C: a bench that dies must not
// leave a PostgreSQL server or a service running, nor a data directory in /tmp.

export type Log = (line: string) => void;

export class Teardown {
  // Added in the order of starting; stopped newest first.
  readonly children: Child[] = [];
  readonly clients = new Set<pg.Client>();
  // What the bench opened in this process itself (a pool, a server, an embedded PostgreSQL): closed
  // after the children, which may be connected to them, newest first. Each thing adds its closer as
  // it starts, so that a failure halfway through a setup still closes what was started (an open
  // pool or server would keep the process alive).
  readonly closers: Array<() => Promise<void>> = [];
  dataDir: string | undefined;
  private done: Promise<void> | undefined;

  // reportStops: log how each child stopped and how long it took (bench/pipeline, whose pipeline
  // processes may take a while to let go of their partitions).
  constructor(
    private readonly log: Log,
    private readonly reportStops = false,
  ) {}

  // Idempotent: a signal during the normal cleanup waits for the same one.
  run(): Promise<void> {
    this.done ??= this.undo();
    return this.done;
  }

  private async undo(): Promise<void> {
    const log = this.log;
    // The clients first: the server they are connected to is about to stop.
    await Promise.all([...this.clients].map((client) => client.end().catch(() => undefined)));
    this.clients.clear();
    // Newest first, so the API goes last: it started the embedded PostgreSQL and stops it on SIGTERM
    // (pg_ctl stop -m fast).
    for (const child of [...this.children].reverse()) {
      if (child.hasExited()) continue;
      const t0 = performance.now();
      await stopChild(child, 'SIGTERM').catch((error: unknown) => log(`stopping ${child.name}: ${String(error)}`));
      if (this.reportStops) {
        const how = child.process.signalCode ? `signal ${child.process.signalCode}` : `exit ${child.process.exitCode}`;
        log(`${child.name} stopped (${how}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
    }
    for (const close of [...this.closers].reverse()) await close().catch((error: unknown) => log(`cleanup: ${String(error)}`));
    this.closers.length = 0;
    const dataDir = this.dataDir;
    if (dataDir) {
      await stopLeftoverPostgres(join(dataDir, 'pg'), log).catch((error: unknown) => log(`stopping PostgreSQL: ${String(error)}`));
      await rm(dataDir, { recursive: true, force: true }).catch((error: unknown) => log(`removing ${dataDir}: ${String(error)}`));
    }
  }
}

// Runs a bench's main with a fresh Teardown, undone when main ends, fails (exit code 1, after
// "bench/<name> failed: …") or SIGINT/SIGTERM arrives (exit code 130).
export async function runBench(name: string, log: Log, main: (teardown: Teardown) => Promise<void>, reportStops = false): Promise<void> {
  const teardown = new Teardown(log, reportStops);
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      log(`${signal}: stopping...`);
      void teardown.run().finally(() => process.exit(130));
    });
  }
  try {
    await main(teardown);
    await teardown.run();
  } catch (error) {
    // After a signal, main fails because its children went away; that is not news.
    if (!interrupted) log(`bench/${name} failed: ${(error as Error).stack ?? String(error)}`);
    await teardown.run();
    process.exitCode = 1;
  }
}

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../../platform/postgres/pool.ts';
import { startNode } from '../lib/bench-service.ts';
import { childPids, commandLine } from '../lib/proc.ts';
import type { Child } from '../lib/processes.ts';
import type { Teardown } from '../lib/teardown.ts';
import type { Bench } from './setup.ts';
import { CONCURRENCY, DELIVERIES, ENDPOINT_CONCURRENCY, log, POLL_MS, WORKER_NODE_ARGS } from './settings.ts';

// The product under test, `node bin/svc.js run webhooks`: how it is started against the bench's
// database and receiver, that the pid measured is really the worker, and when its work is done
// (every delivery row settled), as its own database says.

// Set on the worker's connections, so that pg_stat_activity can tell them from ours.
export const WORKER_APPLICATION = 'bench-webhooks-worker';

// The worker's three statements, told apart by how their text begins (services/webhooks/delivery-store.ts).
export const STATEMENT_KIND = `CASE WHEN query LIKE 'WITH batch AS%' THEN 'fan-out' WHEN query LIKE 'WITH due AS%' THEN 'claim'
                             WHEN query LIKE 'WITH o AS%' THEN 'record' ELSE 'other' END`;

function workerEnv(bench: Bench): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `${bench.server.url()}?application_name=${WORKER_APPLICATION}`,
    SVC_MASTER_KEY: bench.masterKey.toString('base64url'),
    SVC_DATA_DIR: bench.dataDir,
    SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    SVC_WEBHOOK_CA_FILE: bench.caFile,
    SVC_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    SVC_WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
    LOG_LEVEL: 'warn',
  };
  delete env.SVC_PG_PORT;
  return env;
}

// `svc run webhooks`, once it says it is running.
export async function startWorker(teardown: Teardown, bench: Bench): Promise<Child> {
  const args = [...WORKER_NODE_ARGS, 'bin/svc.js', 'run', 'webhooks'];
  const { child } = await startNode(teardown, 'webhooks worker', args, workerEnv(bench), /webhook delivery worker running/);
  return child;
}

// bin/svc.js registers tsx in the process itself, so the pid we started is the worker: checked
// here (no child process of its own but esbuild's, which tsx starts to transform sources not yet
// in its cache), since a wrapper would have us measure the wrong memory.
export function confirmWorkerPid(worker: Child): void {
  const command = commandLine(worker.pid);
  const children = childPids(worker.pid).filter((pid) => !commandLine(pid).includes('esbuild'));
  if (!command.includes('bin/svc.js') || children.length > 0) {
    throw new Error(`pid ${worker.pid} (${command}) is not the worker itself: child processes ${children.join(', ') || 'none'}`);
  }
  log(`(2) worker pid ${worker.pid} is \`${command}\` with no child process: its RSS is the worker's`);
}

async function deliveryStatuses(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status ORDER BY status');
  return new Map(rows.map((row) => [row.status, row.n]));
}

export const countsText = (counts: Map<string, number>): string => [...counts].map(([status, n]) => `${status} ${n}`).join(', ') || 'none';

// Until no delivery row is pending any more (the worker writes outcomes in batches, ~10 ms
// behind); then the count of each status.
export async function waitForSettled(pool: Pool, worker: Child): Promise<Map<string, number>> {
  const until = performance.now() + 60_000;
  for (;;) {
    const statuses = await deliveryStatuses(pool);
    const settled = [...statuses].reduce((n, [status, count]) => (status === 'pending' ? n : n + count), 0);
    if (settled >= DELIVERIES && !statuses.has('pending')) return statuses;
    if (worker.hasExited()) throw new Error(`worker exited before every delivery settled:\n${worker.output()}`);
    if (performance.now() > until) throw new Error(`deliveries not settled within 60 s: ${countsText(statuses)}`);
    await sleep(POLL_MS);
  }
}

export async function attemptsLogged(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_attempts');
  return rows[0]!.n;
}

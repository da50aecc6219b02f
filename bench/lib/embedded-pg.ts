import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg, { type ClientConfig } from 'pg';
import { alive } from '../../platform/local-engines/file-lock.ts';
import { readIfPresent } from './proc.ts';

// The embedded PostgreSQL of a service data directory (platform/postgres/embedded.ts), seen from a
// benchmark: how to connect to it directly, and how to stop it if the service left it running.

const DATABASE = 'svc';
const USER = 'svc';

// Connection settings of the running server: the password the service generated at initdb, and
// the port from line 4 of postmaster.pid.
export async function embeddedConnection(dataDir: string): Promise<ClientConfig> {
  const password = (await readFile(join(dataDir, 'pg.password'), 'utf8')).trim();
  const lines = (await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
  const port = Number(lines[3]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in ${join(dataDir, 'pg', 'postmaster.pid')}`);
  return { host: '127.0.0.1', port, user: USER, password, database: DATABASE };
}

// `count` connected clients, each also added to `tracked` (a Teardown's clients) so that a failing
// bench still closes them before the server stops.
export async function connectClients(dataDir: string, count: number, tracked: Set<pg.Client>): Promise<pg.Client[]> {
  const config = await embeddedConnection(dataDir);
  const clients = Array.from({ length: count }, () => new pg.Client(config));
  for (const client of clients) {
    // A client losing its connection (the server stopping at cleanup) must not crash the bench.
    client.on('error', () => undefined);
    tracked.add(client);
  }
  await Promise.all(clients.map((client) => client.connect()));
  return clients;
}

export async function closeClients(clients: pg.Client[], tracked: Set<pg.Client>): Promise<void> {
  await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  for (const client of clients) tracked.delete(client);
}

// The postmaster's pid, line 1 of postmaster.pid; undefined when there is none (the server is not
// running) or it cannot be read.
export function postmasterPid(pgDir: string): number | undefined {
  const pid = Number(readIfPresent(join(pgDir, 'postmaster.pid'))?.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}


async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return !alive(pid);
}

// When the service could not stop its PostgreSQL (it crashed, or was killed), the postmaster of
// this data directory is still running: fast shutdown (SIGINT), then immediate (SIGQUIT), then SIGKILL.
export async function stopLeftoverPostgres(pgDir: string, log: (line: string) => void): Promise<void> {
  const pid = postmasterPid(pgDir);
  if (pid === undefined || !alive(pid)) return;
  log(`PostgreSQL (pid ${pid}) is still running on ${pgDir}; stopping it`);
  for (const signal of ['SIGINT', 'SIGQUIT', 'SIGKILL'] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    if (await waitForExit(pid, 15_000)) return;
  }
  throw new Error(`PostgreSQL pid ${pid} did not stop`);
}

import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, startChild, waitForLine, type Child } from './processes.ts';
import type { Log, Teardown } from './teardown.ts';

// The service under test, set up the same way for every bench: `svc run api` alone on a fresh data
// directory with its own embedded PostgreSQL, a tenant, and an ingest key to sign requests with.

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TENANT = 'bench';
// The first start of a data directory runs initdb, which can take a while on a slow machine.
const STARTUP_TIMEOUT_MS = 180_000;

export interface IngestKey {
  key_id: string;
  secret: string;
}

export interface BenchService {
  dataDir: string;
  // The environment of the API; other `svc` processes on the same data directory use it too.
  env: NodeJS.ProcessEnv;
  api: Child;
  port: number;
  key: IngestKey;
}

// A fresh temp directory for the bench's data, removed by the teardown.
export async function freshDataDir(teardown: Teardown, prefix = 'svc-bench-'): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  teardown.dataDir = dataDir;
  // The embedded PostgreSQL runs as the postgres user when this runs as root; it must reach the dir.
  await chmod(dataDir, 0o755);
  return dataDir;
}

// Starts `node <args>` in the repository root, to be stopped by the teardown, and resolves once
// its stdout matches `ready`. process.execPath with bin/svc.js: tsx is registered in-process, so the
// child's pid is the service process itself (whose RSS the benches sample), not a wrapper.
export async function startNode(
  teardown: Teardown,
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: Child; match: RegExpMatchArray }> {
  const child = startChild(name, process.execPath, args, { cwd: ROOT, env });
  teardown.children.push(child);
  const match = await waitForLine(child, ready, STARTUP_TIMEOUT_MS);
  return { child, match };
}

// Runs `svc <args>` to completion; resolves with its stdout.
export function svc(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return run(process.execPath, ['bin/svc.js', ...args], { cwd: ROOT, env });
}

// name: the API child's name in logs and errors; nodeArgs: node options for it (e.g. --cpu-prof);
// env: variables added to its environment (and to that of the other processes given service.env).
export async function startService(teardown: Teardown, log: Log, options: { name: string; nodeArgs?: string[]; env?: NodeJS.ProcessEnv }): Promise<BenchService> {
  const dataDir = await freshDataDir(teardown);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // The per-tenant rate limit (events/s) would otherwise turn most of the load into 429s; the
    // bucket is still taken on every request, only never empty.
    SVC_RATE_LIMIT_CAPACITY: '1000000000',
    SVC_RATE_LIMIT_REFILL_PER_S: '1000000000',
  };
  Object.assign(env, options.env);
  // Self-contained: always the embedded database of the fresh data directory.
  for (const name of ['DATABASE_URL', 'SVC_MASTER_KEY', 'SVC_PG_PORT']) delete env[name];

  log(`starting the API on ${dataDir} (first start initialises PostgreSQL)...`);
  const args = [...(options.nodeArgs ?? []), 'bin/svc.js', 'run', 'api'];
  const { child: api, match } = await startNode(teardown, options.name, args, env, /svc is up at http:\/\/127\.0\.0\.1:(\d+)/);

  await svc(env, ['tenants', 'create', TENANT, '--base-asset', 'USD']);
  const key = await issueBenchKey(env, 'ingest');
  return { dataDir, env, api, port: Number(match[1]), key };
}

// A key of the bench tenant with one scope, issued through the CLI.
export async function issueBenchKey(env: NodeJS.ProcessEnv, scope: string): Promise<IngestKey> {
  const issued = await svc(env, ['keys', 'issue', '--tenant', TENANT, '--scope', scope, '--json']);
  // The key is the last line; anything before it is the CLI talking.
  return JSON.parse(issued.trim().split('\n').pop() ?? '') as IngestKey;
}

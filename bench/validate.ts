// bench/validate: signed POST /v1/validate with one realistic movement, requests/s and p50/p99 at
// 32 concurrent keep-alive connections, measured in the same run against a plain unsigned Fastify
// route that parses and returns the same body. The last line printed is the ratio of the signed
// throughput to the plain one (target: at least 0.5).
//
//   npx tsx bench/validate.ts          (or npm run bench:validate)
//
// BENCH_SECONDS (default 10) measured seconds per run, BENCH_WARMUP_SECONDS (default 2) warm-up
// before each run, BENCH_ROUNDS (default 2) alternating plain/signed rounds; the best run of each
// target is compared. The API runs alone as a child process (`node bin/svc.js run api`) on a fresh
// data directory with its own embedded PostgreSQL; the baseline runs as another child process; load
// is driven from this process. Everything started here is stopped and the data directory removed.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { signRequest } from '../platform/crypto/request-signing.ts';
import { movementEvent } from '../test/fixtures/events.ts';
import { stopLeftoverPostgres } from './lib/embedded-pg.ts';
import { newAgent, runLoad, send, type LoadResult, type Target } from './lib/load.ts';
import { run, startChild, stopChild, waitForLine, type Child } from './lib/processes.ts';

const CONNECTIONS = 32;
const SECONDS = positiveNumber('BENCH_SECONDS', 10);
const WARMUP_SECONDS = positiveNumber('BENCH_WARMUP_SECONDS', 2, true);
const ROUNDS = Math.max(1, Math.round(positiveNumber('BENCH_ROUNDS', 2)));
const TENANT = 'bench';
const STARTUP_TIMEOUT_MS = 180_000;

const root = fileURLToPath(new URL('..', import.meta.url));

function positiveNumber(name: string, fallback: number, zeroAllowed = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) {
    throw new Error(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} number of seconds, not ${raw}`);
  }
  return value;
}

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

// Everything to undo, in reverse order of starting.
const children: Child[] = [];
let dataDir: string | undefined;
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of [...children].reverse()) {
      // The service stops its own embedded PostgreSQL on SIGTERM (pg_ctl stop -m fast).
      await stopChild(child, 'SIGTERM').catch((error: unknown) => log(`stopping ${child.name}: ${String(error)}`));
    }
    if (dataDir) {
      await stopLeftoverPostgres(join(dataDir, 'pg'), log).catch((error: unknown) => log(`stopping PostgreSQL: ${String(error)}`));
      await rm(dataDir, { recursive: true, force: true }).catch((error: unknown) => log(`removing ${dataDir}: ${String(error)}`));
    }
  })();
  return cleaning;
}

async function main(): Promise<void> {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  // The embedded PostgreSQL runs as the postgres user when this runs as root; it must reach the dir.
  await chmod(dataDir, 0o755);
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
  // Self-contained: always the embedded database of the fresh data directory.
  for (const name of ['DATABASE_URL', 'SVC_MASTER_KEY', 'SVC_PG_PORT']) delete env[name];

  log(`starting the API on ${dataDir} (first start initialises PostgreSQL)...`);
  const svc = startChild('svc', process.execPath, ['bin/svc.js', 'run', 'api'], { cwd: root, env });
  children.push(svc);
  const svcUp = await waitForLine(svc, /svc is up at http:\/\/127\.0\.0\.1:(\d+)/, STARTUP_TIMEOUT_MS);
  const svcPort = Number(svcUp[1]);

  await run(process.execPath, ['bin/svc.js', 'tenants', 'create', TENANT, '--base-asset', 'USD'], { cwd: root, env });
  const issued = await run(process.execPath, ['bin/svc.js', 'keys', 'issue', '--tenant', TENANT, '--scope', 'ingest', '--json'], {
    cwd: root,
    env,
  });
  const keyLine = issued.trim().split('\n').pop() ?? '';
  const key = JSON.parse(keyLine) as { key_id: string; secret: string };

  const plain = startChild('plain-server', process.execPath, ['--import', 'tsx', 'bench/lib/plain-server.ts'], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0' },
  });
  children.push(plain);
  const plainUp = await waitForLine(plain, /plain is up at http:\/\/127\.0\.0\.1:(\d+)/, STARTUP_TIMEOUT_MS);
  const plainPort = Number(plainUp[1]);

  const payload = { object: 'movement', event: movementEvent('mv-bench-1') };
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const signedTarget: Target = {
    name: 'signed POST /v1/validate',
    host: '127.0.0.1',
    port: svcPort,
    path: '/v1/validate',
    body,
    headers: () => ({
      'content-type': 'application/json',
      ...signRequest({ keyId: key.key_id, secret: key.secret, method: 'POST', target: '/v1/validate', body }),
    }),
  };
  const plainTarget: Target = {
    name: 'plain POST /echo',
    host: '127.0.0.1',
    port: plainPort,
    path: '/echo',
    body,
    headers: () => ({ 'content-type': 'application/json' }),
  };

  const signedAgent = newAgent(CONNECTIONS);
  const plainAgent = newAgent(CONNECTIONS);
  try {
    // One request each first: the benchmark is meaningless unless both answer 200 as expected.
    const signedCheck = await send(signedTarget, signedAgent);
    if (signedCheck.status !== 200 || (JSON.parse(signedCheck.body.toString('utf8')) as { valid?: boolean }).valid !== true) {
      throw new Error(`signed /v1/validate answered ${signedCheck.status}: ${signedCheck.body.toString('utf8')}`);
    }
    const plainCheck = await send(plainTarget, plainAgent);
    if (plainCheck.status !== 200 || !isDeepStrictEqual(JSON.parse(plainCheck.body.toString('utf8')), payload)) {
      throw new Error(`plain /echo answered ${plainCheck.status}: ${plainCheck.body.toString('utf8')}`);
    }

    log(
      `${CONNECTIONS} connections, ${ROUNDS} round(s) of ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per target; ` +
        `body ${body.length} bytes`,
    );
    const results: { plain: LoadResult[]; signed: LoadResult[] } = { plain: [], signed: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which target goes first, so neither always runs on the warmer machine.
      const order = round % 2 === 1 ? (['plain', 'signed'] as const) : (['signed', 'plain'] as const);
      for (const which of order) {
        const target = which === 'plain' ? plainTarget : signedTarget;
        const agent = which === 'plain' ? plainAgent : signedAgent;
        if (WARMUP_SECONDS > 0) await runLoad(target, agent, CONNECTIONS, WARMUP_SECONDS);
        const result = await runLoad(target, agent, CONNECTIONS, SECONDS);
        results[which].push(result);
        log(`round ${round} ${describe(result)}`);
      }
    }
    report(results);
  } finally {
    signedAgent.destroy();
    plainAgent.destroy();
  }
}

function failuresText(result: LoadResult): string {
  if (result.failures.size === 0) return 'no errors';
  return [...result.failures].map(([reason, count]) => `${count} x ${reason}`).join(', ');
}

function describe(result: LoadResult): string {
  return `${result.target}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms (${result.ok} ok, ${failuresText(result)})`;
}

function best(runs: LoadResult[]): LoadResult {
  return runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function report(results: { plain: LoadResult[]; signed: LoadResult[] }): void {
  const rows = [
    ['target', 'best req/s', 'median req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'],
    ...(['plain', 'signed'] as const).map((which) => {
      const runs = results[which];
      const top = best(runs);
      const errors = runs.reduce((sum, r) => sum + [...r.failures.values()].reduce((a, b) => a + b, 0), 0);
      return [
        top.target,
        top.requestsPerSecond.toFixed(0),
        median(runs.map((r) => r.requestsPerSecond)).toFixed(0),
        top.p50Ms.toFixed(2),
        top.p99Ms.toFixed(2),
        top.maxMs.toFixed(2),
        String(errors),
      ];
    }),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
  process.stdout.write(`\n${CONNECTIONS} keep-alive connections, best of ${results.plain.length} run(s) of ${SECONDS} s per target (latency of the best run)\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const which of ['plain', 'signed'] as const) {
    for (const result of results[which]) {
      if (result.failures.size > 0) process.stdout.write(`errors, ${result.target}: ${failuresText(result)}\n`);
    }
  }
  const ratio = best(results.signed).requestsPerSecond / best(results.plain).requestsPerSecond;
  process.stdout.write(`ratio signed/plain requests/s: ${ratio.toFixed(2)}\n`);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping...`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  await main();
  await cleanup();
} catch (error) {
  if (!interrupted) log(`bench/validate failed: ${(error as Error).stack ?? String(error)}`);
  await cleanup();
  process.exitCode = 1;
}

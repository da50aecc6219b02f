// bench/validate: signed POST /v1/validate with one realistic movement, requests/s and p50/p99 at
// 32 concurrent keep-alive connections, measured in the same run against a plain unsigned Fastify
// route that parses and returns the same body. The last line printed is the ratio of the signed
// throughput to the plain one (target: at least 0.6).
//
//   npx tsx bench/validate.ts          (or npm run bench:validate)
//
// BENCH_SECONDS (default 10) measured seconds per run, BENCH_WARMUP_SECONDS (default 2) warm-up
// before each run, BENCH_ROUNDS (default 2) alternating plain/signed rounds; the best run of each
// target is compared. BENCH_SVC_NODE_ARGS adds node options to the API (e.g. --cpu-prof
// --cpu-prof-dir=DIR). The API runs alone as a child process (`node bin/svc.js run api`) on a fresh
// data directory with its own embedded PostgreSQL; the baseline runs as another child process; load
// is driven from this process. Everything started here is stopped and the data directory removed.
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { movementEvent } from '../test/fixtures/events.ts';
import { signedTarget } from './lib/api.ts';
import { startNode, startService } from './lib/bench-service.ts';
import { comparisonTable, compareRounds, ratio } from './lib/compare.ts';
import { cpuTable } from './lib/cpu-per-event.ts';
import { newAgent, requestOperation, send, type Target } from './lib/load.ts';
import { nodeArgs, positiveNumber } from './lib/options.ts';
import { runBench, type Teardown } from './lib/teardown.ts';

const CONNECTIONS = 32;
const SECONDS = positiveNumber('BENCH_SECONDS', 10, false, 'number of seconds');
const WARMUP_SECONDS = positiveNumber('BENCH_WARMUP_SECONDS', 2, true, 'number of seconds');
const ROUNDS = Math.max(1, Math.round(positiveNumber('BENCH_ROUNDS', 2, false, 'number of seconds')));

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

async function main(teardown: Teardown): Promise<void> {
  const service = await startService(teardown, log, { name: 'svc', nodeArgs: nodeArgs('BENCH_SVC_NODE_ARGS') });
  const { child: plainServer, match: plainUp } = await startNode(
    teardown,
    'plain-server',
    ['--import', 'tsx', 'bench/lib/plain-server.ts'],
    { ...process.env, HOST: '127.0.0.1', PORT: '0' },
    /plain is up at http:\/\/127\.0\.0\.1:(\d+)/,
  );

  const payload = { object: 'movement', event: movementEvent('mv-bench-1') };
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const signed = signedTarget(service, 'signed POST /v1/validate', '/v1/validate', body);
  const plain: Target = {
    name: 'plain POST /echo',
    host: '127.0.0.1',
    port: Number(plainUp[1]),
    path: '/echo',
    body,
    headers: () => ({ 'content-type': 'application/json' }),
  };

  const signedAgent = newAgent(CONNECTIONS);
  const plainAgent = newAgent(CONNECTIONS);
  try {
    // One request each first: the benchmark is meaningless unless both answer 200 as expected.
    const signedCheck = await send(signed, signedAgent);
    if (signedCheck.status !== 200 || (JSON.parse(signedCheck.body.toString('utf8')) as { valid?: boolean }).valid !== true) {
      throw new Error(`signed /v1/validate answered ${signedCheck.status}: ${signedCheck.body.toString('utf8')}`);
    }
    const plainCheck = await send(plain, plainAgent);
    if (plainCheck.status !== 200 || !isDeepStrictEqual(JSON.parse(plainCheck.body.toString('utf8')), payload)) {
      throw new Error(`plain /echo answered ${plainCheck.status}: ${plainCheck.body.toString('utf8')}`);
    }

    log(
      `${CONNECTIONS} connections, ${ROUNDS} round(s) of ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per target; ` +
        `body ${body.length} bytes`,
    );
    const [plainRuns, signedRuns] = await compareRounds(
      [
        { name: plain.name, loops: CONNECTIONS, operation: requestOperation(plain, plainAgent), cpuPid: plainServer.pid },
        { name: signed.name, loops: CONNECTIONS, operation: requestOperation(signed, signedAgent), cpuPid: service.api.pid },
      ],
      { rounds: ROUNDS, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS, unit: 'req/s', prefix: '', log, pgDir: join(service.dataDir, 'pg') },
    );

    const out = (text: string) => process.stdout.write(`${text}\n`);
    out(`\n${CONNECTIONS} keep-alive connections, best of ${plainRuns.length} run(s) of ${SECONDS} s per target (latency of the best run)`);
    out(comparisonTable([plainRuns, signedRuns], 'req/s'));
    out(cpuTable([plainRuns, signedRuns], 'request (one event)', 'server'));
    out(`ratio signed/plain requests/s: ${ratio(signedRuns, plainRuns).toFixed(2)} (target >= 0.6)`);
  } finally {
    signedAgent.destroy();
    plainAgent.destroy();
  }
}

await runBench('validate', log, main);

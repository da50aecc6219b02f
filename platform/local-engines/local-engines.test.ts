// `svc engines up | status | down` as an operator runs them, on a data directory of its own:
// real servers, started detached by one CLI process and stopped by another. Kafka, the schema
// registry and ClickHouse (Neo4j's module has its own suite). Downloads come from the shared
// cache the test set-up filled, so this costs the engines' start-up, not their download.
import { execFile as execFileCallback } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, SVC } from '../../test/support/svc-process.ts';
import { defaultCacheDir } from './index.ts';
import { resolveMavenClasspath } from './maven.ts';
import type { EnginesState } from './state.ts';

const execFile = promisify(execFileCallback);
const ENGINES = ['kafka', 'schema-registry', 'clickhouse'];

describe('svc engines', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let exports: Record<string, string>;
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => runSvc(['engines', ...args], { ...env, ...extra });
  const state = async () => JSON.parse(await readFile(join(dataDir, 'engines', 'state.json'), 'utf8')) as EnginesState;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-engines-cli-'));
    const { KAFKA_BROKERS: _k, SCHEMA_REGISTRY_URL: _s, CLICKHOUSE_URL: _c, NEO4J_URI: _n, ...rest } = process.env;
    env = { ...rest, SVC_DATA_DIR: dataDir };
  });

  afterAll(async () => {
    // Whatever a failed test left running.
    await run(['down']);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('up starts the engines detached and prints only export lines that reach them', async () => {
    const up = await run(['up', ...ENGINES]);
    expect(up.code, up.stderr).toBe(0);
    const lines = up.stdout.trim().split('\n');
    for (const line of lines) expect(line).toMatch(/^export [A-Z_]+=\S+$/);
    exports = Object.fromEntries(lines.map((line) => line.slice('export '.length).split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(Object.keys(exports)).toEqual(['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'CLICKHOUSE_URL', 'SVC_BUS', 'SVC_AGGREGATE_STORE']);
    // And the port settings that put `svc up` in this shell on them.
    expect([exports.SVC_BUS, exports.SVC_AGGREGATE_STORE]).toEqual(['kafka', 'clickhouse']);
    expect(exports.KAFKA_BROKERS).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(exports.SCHEMA_REGISTRY_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/apis\/ccompat\/v7$/);
    expect(exports.CLICKHOUSE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // The CLI has exited; the servers answer.
    const kafka = new Kafka({ clientId: 'engines-test', brokers: [exports.KAFKA_BROKERS!], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect((await admin.describeCluster()).brokers).toHaveLength(1);
    } finally {
      await admin.disconnect();
    }
    expect(await (await fetch(`${exports.SCHEMA_REGISTRY_URL}/subjects`)).json()).toEqual([]);
    expect(await (await fetch(`${exports.CLICKHOUSE_URL}/?query=SELECT%201`)).text()).toBe('1\n');
    // Each data directory in place, each recorded process ours.
    for (const name of ENGINES) await access(join(dataDir, 'engines', name));
    const recorded = await state();
    for (const name of ENGINES) {
      const cmdline = await readFile(`/proc/${recorded.engines[name as 'kafka']!.process!.pid}/cmdline`, 'utf8');
      expect(cmdline).toContain(join(dataDir, 'engines', name));
    }
  }, 180_000);

  it('up again starts nothing and prints the same exports, fit for eval in a shell', async () => {
    const before = await state();
    const { stdout } = await execFile('bash', ['-c', `eval "$("${process.execPath}" "${SVC}" engines up ${ENGINES.join(' ')})" && echo "$KAFKA_BROKERS $SCHEMA_REGISTRY_URL $CLICKHOUSE_URL"`], { env, timeout: 120_000 });
    expect(stdout.trim()).toBe(`${exports.KAFKA_BROKERS} ${exports.SCHEMA_REGISTRY_URL} ${exports.CLICKHOUSE_URL}`);
    const after = await state();
    for (const name of ENGINES) expect(after.engines[name as 'kafka']!.process).toEqual(before.engines[name as 'kafka']!.process);
  }, 120_000);

  it('status says what runs, with its version, pid and address', async () => {
    const status = await run(['status', ...ENGINES]);
    expect(status.code, status.stderr).toBe(0);
    const recorded = await state();
    expect(status.stdout).toMatch(new RegExp(`^kafka\\s+up\\s+3\\.9\\.0\\s+pid ${recorded.engines.kafka!.process!.pid}\\s+${exports.KAFKA_BROKERS}`, 'm'));
    expect(status.stdout).toMatch(new RegExp(`^schema-registry\\s+up\\s+3\\.3\\.3\\s+pid \\d+\\s+${exports.SCHEMA_REGISTRY_URL}`, 'm'));
    expect(status.stdout).toMatch(/^clickhouse\s+up\s+\d+\.\d+/m);
  }, 60_000);

  it('down stops exactly what up started; status then says down', async () => {
    const pids = Object.values((await state()).engines).map((record) => record.process!.pid);
    const down = await run(['down']);
    expect(down.code, down.stderr).toBe(0);
    for (const pid of pids) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      // Gone, or a zombie its new parent has not reaped yet: nothing runs.
      expect(stat === '' || / [ZX] /.test(stat.slice(stat.lastIndexOf(')')))).toBe(true);
    }
    const status = await run(['status', ...ENGINES]);
    for (const name of ENGINES) expect(status.stdout).toMatch(new RegExp(`^${name}\\s+down`, 'm'));
    // The ports stay recorded: the next up serves the same addresses.
    expect((await state()).engines.kafka!.ports.broker).toBe(Number(exports.KAFKA_BROKERS!.split(':')[1]));
  }, 60_000);

  it('refuses to start on a recorded port another program took, naming it', async () => {
    const port = Number(exports.KAFKA_BROKERS!.split(':')[1]);
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const up = await run(['up', 'kafka']);
      expect(up.code).toBe(1);
      expect(up.stdout).toBe('');
      expect(up.stderr).toContain(`port 127.0.0.1:${port} (broker, recorded in state.json) is taken by another program`);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 60_000);

  it('names what is missing: Maven, on a cold cache', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'svc-engines-cache-'));
    try {
      const up = await run(['up', 'kafka'], { SVC_ENGINES_CACHE: cache, PATH: '/nonexistent' });
      expect(up.code).toBe(1);
      expect(up.stderr).toContain('mvn not found on PATH');
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses an artifact whose sha256 is not the pinned one, and caches nothing of it', async () => {
    // One of Kafka's own dependencies: already in the cache's local repository, so no download.
    const coordinates = ['ch.qos.reload4j:reload4j:1.2.25'];
    const wrong = { 'reload4j-1.2.25.jar': '0'.repeat(64) };
    await expect(resolveMavenClasspath(coordinates, defaultCacheDir(), { sha256: wrong })).rejects.toThrow(/sha256 of reload4j-1\.2\.25\.jar is [0-9a-f]{64}, not the pinned 0{64}/);
    // Nothing was committed: the same call fails again rather than answering from the cache.
    await expect(resolveMavenClasspath(coordinates, defaultCacheDir(), { sha256: wrong })).rejects.toThrow(/not the pinned/);
  }, 120_000);
});

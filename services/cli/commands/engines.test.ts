import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { launch } from '../../../platform/local-engines/processes.ts';
import { enginesRoot, writeState } from '../../../platform/local-engines/state.ts';
import type { EngineName } from '../../../platform/local-engines/index.ts';
import { downExitCode, enginesCommand, EXIT_FAILED, EXIT_KILLED, portsOn } from './engines.ts';

describe('svc engines up', () => {
  it('puts the service on every engine it gives the address of, and on no other', () => {
    expect(portsOn({ KAFKA_BROKERS: '127.0.0.1:9092', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081', NEO4J_URI: 'bolt://127.0.0.1:7687', CLICKHOUSE_URL: 'http://127.0.0.1:8123' })).toEqual({
      SVC_BUS: 'kafka',
      SVC_GRAPH_STORE: 'neo4j',
      SVC_AGGREGATE_STORE: 'clickhouse',
    });
    // Kafka without its registry cannot carry the bus; Neo4j alone moves only the graph.
    expect(portsOn({ KAFKA_BROKERS: '127.0.0.1:9092', NEO4J_URI: 'bolt://127.0.0.1:7687' })).toEqual({ SVC_GRAPH_STORE: 'neo4j' });
    expect(portsOn({})).toEqual({});
  });
});

describe('svc engines down', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-engines-down-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  // Plain programs recorded as engines, as `up` records its servers: one that ends on SIGTERM, and
  // one that ignores it (the ignored signal survives the exec) and does nothing, as a hung engine.
  const record = async (engines: Partial<Record<EngineName, 'ends' | 'hangs'>>) => {
    const state: Parameters<typeof writeState>[1] = { engines: {} };
    for (const [name, how] of Object.entries(engines) as Array<[EngineName, 'ends' | 'hangs']>) {
      const engineDir = join(enginesRoot(dataDir), name);
      await mkdir(engineDir, { recursive: true });
      const script = how === 'ends' ? 'exec sleep 600' : `trap '' TERM; exec sleep 600`;
      const running = await launch({ command: 'sh', args: ['-c', script], cwd: engineDir, logFile: join(engineDir, 'server.log') }, engineDir, { detached: false });
      state.engines[name] = { version: 'test', ports: {}, process: { ...running, startedAt: new Date().toISOString() } };
    }
    await writeState(dataDir, state);
  };

  // Runs the command as the CLI does (SVC_DATA_DIR from the environment); its exit code and lines.
  const down = async (names: EngineName[]) => {
    const lines: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const before = { dir: process.env.SVC_DATA_DIR, code: process.exitCode };
    process.env.SVC_DATA_DIR = dataDir;
    process.exitCode = undefined;
    try {
      await enginesCommand(['down', ...names], () => {});
      return { code: process.exitCode ?? 0, lines: lines.join('') };
    } finally {
      stderr.mockRestore();
      process.exitCode = before.code;
      if (before.dir === undefined) delete process.env.SVC_DATA_DIR;
      else process.env.SVC_DATA_DIR = before.dir;
    }
  };

  it('exits 0 when every engine ended on SIGTERM', async () => {
    await record({ kafka: 'ends', neo4j: 'ends' });
    const { code, lines } = await down(['kafka', 'neo4j']);
    expect(code).toBe(0);
    expect(lines).toMatch(/^engines: kafka: stopped in \d+\.\d s$/m);
    expect(lines).toMatch(/^engines: neo4j: stopped in \d+\.\d s$/m);
  });

  // The default grace: 20 s of nothing after SIGTERM before the kill.
  it(`exits ${EXIT_KILLED} when an engine had to be killed, and still says how each one ended`, { timeout: 60_000 }, async () => {
    await record({ kafka: 'ends', neo4j: 'hangs' });
    const { code, lines } = await down(['kafka', 'neo4j']);
    expect(code).toBe(EXIT_KILLED);
    expect(lines).toMatch(/^engines: kafka: stopped in \d+\.\d s$/m);
    expect(lines).toMatch(/^engines: neo4j: killed \(SIGKILL\): it did nothing for 20\.0 s after SIGTERM; it may recover its data on the next start$/m);
    // Stopped, either way: a second down finds nothing to stop.
    expect(await down(['kafka', 'neo4j'])).toMatchObject({ code: 0 });
  });

  it('tells a forced stop, and one that left an engine running, from a clean one', () => {
    expect(downExitCode([{ outcome: 'stopped' }, { outcome: 'not running' }])).toBe(0);
    expect(downExitCode([])).toBe(0);
    expect(downExitCode([{ outcome: 'stopped' }, { outcome: 'killed' }])).toBe(EXIT_KILLED);
    expect(downExitCode([{ outcome: 'killed' }, { outcome: 'still running' }])).toBe(EXIT_FAILED);
  });
});

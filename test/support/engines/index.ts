// The scale-out engines the test run can reach. Each is either pointed at by its environment
// variable (an operator proving a real deployment with `npm run test:engines`), or started on this
// machine for the run through platform/local-engines (real Kafka 3.9 in KRaft mode, Apicurio
// Registry's Confluent-compatible API, ClickHouse from Debian's package, Neo4j 5.26 community
// from Maven Central's jars), or absent when it cannot be, saying why on stderr.
//
// The engines' data lives in a temporary directory of the run, thrown away at the end; the
// downloads stay in the shared cache (SVC_ENGINES_CACHE, ~/.cache/svc-engines). The servers are
// tied to this process: should the run be killed, the kernel kills them too.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive } from '../../../platform/local-engines/file-lock.ts';
import { readState } from '../../../platform/local-engines/state.ts';
import { startLocalEngines, type EngineName, type StartedEngines } from '../../../platform/local-engines/index.ts';

export interface TestEngines {
  clickhouseUrl: string;
  kafkaBrokers: string;
  schemaRegistryUrl: string;
  neo4jUri: string;
  // The Neo4j started here has auth on, with a password generated into its data directory.
  neo4jUser: string;
  neo4jPassword: string;
  neo4jDatabase: string;
  stop: () => Promise<void>;
}

const PREFIX = 'svc-test-engines-';
// The test process that made the directory: another run's directory is never swept while it lives.
const OWNER = 'owner.pid';
// Within vitest's 10 s teardown: the data is thrown away, so a kill after this loses nothing.
const STOP_GRACE_MS = 4_000;

export async function startTestEngines(env: NodeJS.ProcessEnv = process.env): Promise<TestEngines> {
  await sweep();
  const root = await mkdtemp(join(tmpdir(), PREFIX));
  await writeFile(join(root, OWNER), `${process.pid}\n`);
  const log = (line: string) => process.stderr.write(`engines: ${line}\n`);
  // Started as separate sets, each with a data directory of its own, so a set that cannot start
  // (no network for Maven Central, no apt-get) leaves the others running, and the sets stop side
  // by side in the teardown.
  const wanted: EngineName[][] = [
    [...(env.KAFKA_BROKERS ? [] : ['kafka' as const]), ...(env.SCHEMA_REGISTRY_URL ? [] : ['schema-registry' as const])],
    env.CLICKHOUSE_URL ? [] : ['clickhouse'],
    env.NEO4J_URI ? [] : ['neo4j'],
  ];
  const sets = await Promise.all(
    wanted.filter((engines) => engines.length > 0).map(async (engines): Promise<StartedEngines | undefined> => {
      // Twice at most, the second time on a directory (and so ports) of its own: a server that
      // dies on its first start on a loaded 2-core machine (seen, rarely, with nothing in its log)
      // must not cost the whole run its engine. A start that fails for a reason (no JDK, no
      // network) fails the same way twice.
      for (let attempt = 1; ; attempt++) {
        try {
          return await startLocalEngines({ dataDir: join(root, `${engines.join('+')}${attempt > 1 ? `-${attempt}` : ''}`), engines, detached: false, log });
        } catch (error) {
          log(`${engines.join(', ')}: ${attempt < 2 ? 'did not start, trying once more' : 'not available'} (${(error as Error).message})`);
          if (attempt >= 2) return undefined;
        }
      }
    }),
  );
  const started = Object.assign({}, ...sets.map((set) => set?.env ?? {})) as Record<string, string>;
  return {
    clickhouseUrl: env.CLICKHOUSE_URL ?? started.CLICKHOUSE_URL ?? '',
    kafkaBrokers: env.KAFKA_BROKERS ?? started.KAFKA_BROKERS ?? '',
    // Without one, the Kafka suites fail in CI and are skipped elsewhere.
    schemaRegistryUrl: env.SCHEMA_REGISTRY_URL ?? started.SCHEMA_REGISTRY_URL ?? '',
    neo4jUri: env.NEO4J_URI ?? started.NEO4J_URI ?? '',
    neo4jUser: (env.NEO4J_URI ? env.NEO4J_USER : started.NEO4J_USER) ?? 'neo4j',
    neo4jPassword: (env.NEO4J_URI ? env.NEO4J_PASSWORD : started.NEO4J_PASSWORD) ?? '',
    neo4jDatabase: (env.NEO4J_URI ? env.NEO4J_DATABASE : started.NEO4J_DATABASE) ?? 'neo4j',
    stop: async () => {
      await Promise.allSettled(sets.flatMap((set) => (set ? [set.stop({ graceMs: STOP_GRACE_MS })] : [])));
      await rm(root, { recursive: true, force: true });
    },
  };
}

// Directories of earlier runs killed outright (their servers died with them, by the parent-death
// signal): removed once neither the run nor any server recorded in them is alive.
async function sweep(): Promise<void> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of entries.filter((entry) => entry.startsWith(PREFIX))) {
    const root = join(tmpdir(), name);
    const owner = Number((await readFile(join(root, OWNER), 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    const sets = (await readdir(root).catch(() => [] as string[])).filter((set) => set !== OWNER);
    const states = await Promise.all(sets.map((set) => readState(join(root, set)).catch(() => undefined)));
    const pids = states.flatMap((state) => Object.values(state?.engines ?? {}).map((record) => record?.process?.pid));
    if (pids.some((pid) => pid !== undefined && alive(pid))) continue;
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}

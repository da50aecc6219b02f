// An engine lost while the service runs: `svc up` with one port on a scale-out engine of this
// file's own (platform/local-engines on a temporary directory, not the run's shared one), the
// engine stopped while movements are on their way through, more movements sent while it is down,
// then started again on the same data and port. Once for each engine a pipeline writes to:
//   - ClickHouse (SVC_AGGREGATE_STORE): the aggregates and detect pipelines read and write it;
//   - Neo4j (SVC_GRAPH_STORE): the graph and detect pipelines, and the API's graph reads.
//   - Kafka (SVC_BUS): every pipeline reads it; while it is down the API still accepts (it writes PostgreSQL only) and the relay keeps
//     the outbox until the broker is back;
//   - the schema registry (SCHEMA_REGISTRY_URL), beside a Kafka of the test's own that stays up:
//     schemas already known are cached by id, anything else waits for the registry.
// While it is down, `svc status` and /metrics say so, and the processes retry (a lost connection
// is transient: retried in place, never parked, docs/decisions/0021). Once it is back every
// movement's effect is in the store exactly once, and nothing was parked.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BatchItem, SvcClient } from '../clients/typescript/src/index.ts';
import { ClickHouseAggregateStore } from '../platform/aggregates/clickhouse.ts';
import { PostgresAggregateStore } from '../platform/aggregates/postgres.ts';
import type { AggregateStore } from '../platform/aggregates/port.ts';
import type { EngineHealth } from '../platform/engine-probes.ts';
import { Neo4jGraphStore } from '../platform/graph/neo4j/store.ts';
import { startLocalEngines, stopLocalEngines } from '../platform/local-engines/index.ts';
import type { EngineName } from '../platform/local-engines/types.ts';
import { ringEntities, ringMovement, RING_ACCOUNTS, type PlannedMovement } from './fixtures/ring.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';
import { createTenantClients, waitFor } from './support/svc-tenant.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

interface StatusReport {
  engines: EngineHealth[];
  groups: Array<{ group: string; lag: number | null; lag_unknown_reason: string | null; parked: number }>;
  events: Record<string, number>;
}

interface Context {
  tenant: string;
  env: NodeJS.ProcessEnv;
  db: TestDatabase;
}

// What differs between the engines.
interface Outage {
  engine: EngineName;
  variable: string;
  // Engines of the test's own started beside it, and left running throughout.
  companions?: EngineName[];
  // Whether events still become canonical while it is down: yes, no (the bus), or not asserted
  // (the registry: a process that already holds every schema it needs goes on, another waits).
  canonicalWhileDown?: boolean;
  // Whether a process necessarily fails an attempt on it while it is down (not the registry's
  // cached schemas).
  attemptsFail: boolean;
  // The service's settings for the engines started (their env, e.g. CLICKHOUSE_URL).
  settings: (engines: Record<string, string>) => NodeJS.ProcessEnv;
  // True once the first movement's effect is in the engine (it is then stopped mid-flow).
  firstEffect: (ctx: Context) => Promise<boolean>;
  // The group that falls behind while the engine is down (none to name when the bus is down: its
  // lag is the bus's to tell, and status says the bus is down instead).
  behind?: string;
  // Every movement's effect is there exactly once.
  verify: (ctx: Context, planned: PlannedMovement[]) => Promise<void>;
  // An API read served by the engine: 503 svc:service/unavailable while it is down (decision
  // 0055), answered again once it is back.
  apiRead?: (read: SvcClient) => Promise<unknown>;
}

const windowsOnce = async (store: AggregateStore, tenant: string, planned: PlannedMovement[]) => {
  const at = new Date(Date.now() + 60_000);
  for (const account of RING_ACCOUNTS) {
    const outgoing = planned.filter((m) => m.from === account);
    const incoming = planned.filter((m) => m.to === account);
    const subject = { tenantId: tenant, kind: 'account' as const, id: account };
    const [day] = await store.windows(subject, at, { windows: ['24h'] });
    expect(day!.out).toMatchObject({ count: outgoing.length, sum: outgoing.reduce((n, m) => n + m.value, 0n) });
    expect(day!.in).toMatchObject({ count: incoming.length, sum: incoming.reduce((n, m) => n + m.value, 0n) });
    const listed = await store.activities(subject, new Date(Date.now() - 86_400_000), at, { limit: 1000 });
    expect(listed.map((a) => `${a.direction} ${a.movementId}`).sort()).toEqual([...outgoing.map((m) => `out ${m.id}`), ...incoming.map((m) => `in ${m.id}`)].sort());
  }
};

const clickhouseDatabase = `svc_outage_${randomBytes(4).toString('hex')}`;
let neo4jConnection = { uri: '', user: '', password: '', database: 'neo4j' };

// With the bus's engine lost, the effects to look for are in PostgreSQL: the aggregates (the
// default store) and the canonical movements.
const onPostgres: Pick<Outage, 'firstEffect' | 'verify'> = {
  firstEffect: async ({ tenant, db }) => {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM agg_activity WHERE tenant_id = $1', [tenant]);
    return rows[0]!.n > 0;
  },
  verify: async ({ tenant, db }, planned) => {
    await windowsOnce(new PostgresAggregateStore(db.pool), tenant, planned);
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM canonical_movements WHERE tenant_id = $1', [tenant]);
    expect(rows[0]!.n).toBe(planned.length);
  },
};

const OUTAGES: Outage[] = [
  {
    engine: 'clickhouse',
    variable: 'CLICKHOUSE_URL',
    canonicalWhileDown: true,
    attemptsFail: true,
    settings: (engines) => ({ SVC_AGGREGATE_STORE: 'clickhouse', CLICKHOUSE_URL: engines.CLICKHOUSE_URL, CLICKHOUSE_DATABASE: clickhouseDatabase }),
    firstEffect: async ({ tenant, env }) => {
      const reader = createClient({ url: env.CLICKHOUSE_URL! });
      try {
        const rows = await reader.query({ query: `SELECT count() AS n FROM ${clickhouseDatabase}.agg_activity WHERE tenant_id = '${tenant}'`, format: 'JSONEachRow' });
        const [row] = await rows.json<{ n: string }>();
        return Number(row?.n ?? 0) > 0;
      } catch {
        return false;
      } finally {
        await reader.close();
      }
    },
    behind: 'aggregates',
    verify: async ({ tenant, env }, planned) => {
      const reader = createClient({ url: env.CLICKHOUSE_URL! });
      try {
        await windowsOnce(new ClickHouseAggregateStore(reader, clickhouseDatabase), tenant, planned);
      } finally {
        await reader.close();
      }
    },
  },
  {
    engine: 'neo4j',
    variable: 'NEO4J_URI',
    canonicalWhileDown: true,
    attemptsFail: true,
    settings: (engines) => {
      neo4jConnection = { uri: engines.NEO4J_URI!, user: engines.NEO4J_USER!, password: engines.NEO4J_PASSWORD!, database: engines.NEO4J_DATABASE ?? 'neo4j' };
      return { SVC_GRAPH_STORE: 'neo4j', NEO4J_URI: engines.NEO4J_URI, NEO4J_USER: engines.NEO4J_USER, NEO4J_PASSWORD: engines.NEO4J_PASSWORD, NEO4J_DATABASE: engines.NEO4J_DATABASE };
    },
    firstEffect: async ({ tenant }) => {
      const store = Neo4jGraphStore.connect(neo4jConnection);
      try {
        const network = await store.egoNetwork(tenant, { kind: 'account', key: RING_ACCOUNTS[0]! }, { depth: 1, nodeCap: 100 });
        return network.edges.some((e) => e.type === 'transfer');
      } catch {
        return false;
      } finally {
        await store.close();
      }
    },
    behind: 'graph',
    apiRead: (read) => read.graph.network('PA1'),
    verify: async ({ tenant }, planned) => {
      const store = Neo4jGraphStore.connect(neo4jConnection);
      try {
        for (const account of RING_ACCOUNTS) {
          // A read has a time budget; a cold server just restarted may spend it and answer part.
          const network = await waitFor(`${account}'s whole network`, async () => {
            const answer = await store.egoNetwork(tenant, { kind: 'account', key: account }, { depth: 1, nodeCap: 100 });
            return answer.truncated ? undefined : answer;
          });
          const outgoing = planned.filter((m) => m.from === account);
          const next = outgoing[0]!.to;
          const edge = network.edges.find((e) => e.id === `transfer:account:${account}>account:${next}`);
          expect(edge, `${account} > ${next} in ${JSON.stringify(network.edges.map((e) => [e.id, e.count]))}`).toMatchObject({ count: outgoing.length, sum: outgoing.reduce((n, m) => n + m.value, 0n) });
        }
      } finally {
        await store.close();
      }
    },
  },
  {
    engine: 'kafka',
    variable: 'KAFKA_BROKERS',
    canonicalWhileDown: false,
    attemptsFail: true,
    // A broker of the test's own, and the run's registry (it keeps its schemas in its own storage).
    settings: (engines) => ({ SVC_BUS: 'kafka', KAFKA_BROKERS: engines.KAFKA_BROKERS, SCHEMA_REGISTRY_URL: inject('schemaRegistryUrl') }),
    ...onPostgres,
  },
  {
    engine: 'schema-registry',
    variable: 'SCHEMA_REGISTRY_URL',
    companions: ['kafka'],
    attemptsFail: false,
    settings: (engines) => ({ SVC_BUS: 'kafka', KAFKA_BROKERS: engines.KAFKA_BROKERS, SCHEMA_REGISTRY_URL: engines.SCHEMA_REGISTRY_URL }),
    ...onPostgres,
  },
];

const available: Record<Outage['engine'], boolean> = {
  clickhouse: inject('clickhouseUrl') !== '',
  neo4j: inject('neo4jUri') !== '',
  kafka: inject('kafkaBrokers') !== '' && inject('schemaRegistryUrl') !== '',
  'schema-registry': inject('kafkaBrokers') !== '' && inject('schemaRegistryUrl') !== '',
};

// The end of each of an engine's logs (its own, and the stdout where a JVM's last words and
// launch's record of how the process ended go), for a failure that may be the engine's.
async function engineLogs(engineDir: string, engine: string): Promise<string> {
  const dir = join(engineDir, 'engines', engine, 'logs');
  const files = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.log'));
  const tails = await Promise.all(files.map(async (name) => `--- ${engine} ${name} (last 3000 characters) ---\n${(await readFile(join(dir, name), 'utf8').catch(() => '')).slice(-3000)}`));
  return tails.join('\n');
}

for (const outage of OUTAGES) {
  describe.skipIf(!available[outage.engine])(`${outage.engine} lost while svc up runs on it`, () => {
    const tenant = `outage${randomBytes(4).toString('hex')}`;
    let engineDir: string;
    let dataDir: string;
    // What reaches the engines of the test's own (the one stopped and started again, and its
    // companions).
    let engines: Record<string, string> = {};
    let ctx: Context;
    let server: SvcUp | undefined;
    let ingest: SvcClient;
    let read: SvcClient;
    let serverErrors = '';

    const startEngines = async (names: EngineName[]) => (engines = { ...engines, ...(await startLocalEngines({ dataDir: engineDir, engines: names, detached: false, log: () => {} })).env });
    const status = async () => {
      const result = await runSvc(['status', '--json'], ctx.env);
      // svc status always reports, whatever an engine is doing; its stderr when it did not.
      if (!result.stdout.trim()) throw new Error(`svc status --json printed no report (exit code ${result.code}): ${result.stderr.slice(-2000)}`);
      return { code: result.code, report: JSON.parse(result.stdout) as StatusReport };
    };
    const engineUp = async (name: string) => {
      const metrics = await (await fetch(`${server!.baseUrl}/metrics`)).text();
      return new RegExp(`^svc_engine_up\\{engine="${name}"\\} (\\d)$`, 'm').exec(metrics)?.[1];
    };
    const send = async (items: BatchItem[]) => expect((await ingest.batches.create({ events: items })).accepted).toBe(items.length);

    beforeAll(async () => {
      engineDir = await mkdtemp(join(tmpdir(), 'svc-outage-engines-'));
      dataDir = await mkdtemp(join(tmpdir(), 'svc-outage-'));
      await chmod(dataDir, 0o755);
      await startEngines([outage.engine, ...(outage.companions ?? [])]);
      const db = await createTestDatabase();
      const { KAFKA_BROKERS: _k, SCHEMA_REGISTRY_URL: _s, NEO4J_URI: _n, CLICKHOUSE_URL: _c, ...inherited } = process.env;
      const env: NodeJS.ProcessEnv = {
        ...inherited,
        DATABASE_URL: db.url,
        SVC_MASTER_KEY: randomBytes(32).toString('base64url'),
        SVC_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...outage.settings(engines),
      };
      ctx = { tenant, env, db };
      server = await startSvcUp(env);
      server.process.stderr!.on('data', (chunk) => (serverErrors += chunk));
      ({ ingest, read } = await createTenantClients(server.baseUrl, env, tenant));
    }, 240_000);

    afterAll(async () => {
      await server?.stop();
      // Every engine under the test's own directory is the test's.
      if (engineDir) await stopLocalEngines({ dataDir: engineDir, graceMs: 5_000 }).catch(() => undefined);
      await ctx?.db.drop();
      for (const dir of [engineDir, dataDir]) if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    });

    it('retries while it is down, says so in status and metrics, and resumes with every effect exactly once', async () => {
      try {
        await outageRun();
      } catch (error) {
        // What the service said, for a failure that is the service's own (e.g. it exited).
        (error as Error).message += `\n--- svc up stderr (last 4000 characters) ---\n${serverErrors.slice(-4000)}\n${await engineLogs(engineDir, outage.engine)}`;
        throw error;
      }
    }, 420_000);

    async function outageRun(): Promise<void> {
      const entities = ringEntities();
      const before = Array.from({ length: 30 }, (_, i) => ringMovement(i));
      const during = Array.from({ length: 30 }, (_, i) => ringMovement(30 + i));
      const address = engines[outage.variable];

      // 1. Movements on their way: three batches, and the engine stopped as soon as the first of
      // their effects is in it, so the rest are in flight or not yet read.
      await send(entities);
      for (let i = 0; i < before.length; i += 10) await send(before.slice(i, i + 10).map((m) => m.item));
      await waitFor(`the first effect in ${outage.engine}`, async () => ((await outage.firstEffect(ctx)) ? true : undefined));
      await stopLocalEngines({ dataDir: engineDir, engines: [outage.engine], graceMs: 15_000 });
      const errorsBefore = serverErrors.length;

      // 2. More movements while it is down: accepted (the API writes PostgreSQL only) and, unless
      // the bus is what is down, made canonical.
      for (let i = 0; i < during.length; i += 10) await send(during.slice(i, i + 10).map((m) => m.item));
      const total = entities.length + before.length + during.length;
      const down = await waitFor(`svc status to see ${outage.engine} down${outage.canonicalWhileDown ? ' and canonical take in every event' : ''}`, async () => {
        const current = await status();
        const seen = current.report.engines.find((e) => e.engine === outage.engine)?.up === false;
        return seen && (!outage.canonicalWhileDown || current.report.events.processed === total) ? current : undefined;
      });
      if (outage.canonicalWhileDown === false) expect(down.report.events.processed).toBeLessThan(total);

      // 3. Down, and said so: svc status (exit code 1, the engine and its variable, the group
      // behind, nothing parked) and the API's metrics.
      expect(down.code).toBe(1);
      expect(down.report.engines.find((e) => e.engine === outage.engine)).toMatchObject({ up: false, variable: outage.variable });
      expect(down.report.engines.find((e) => e.engine === 'postgresql')).toMatchObject({ up: true });
      if (outage.behind) expect(down.report.groups.find((g) => g.group === outage.behind)!.lag).toBeGreaterThan(0);
      // The bus down: no group's lag can be read, and status says why rather than guessing.
      if (outage.engine === 'kafka') expect(down.report.groups.every((g) => g.lag === null && g.lag_unknown_reason === 'kafka does not answer')).toBe(true);
      expect(down.report.groups.every((g) => g.parked === 0)).toBe(true);
      const text = await runSvc(['status'], ctx.env);
      expect(text.stdout).toMatch(new RegExp(`^engine ${outage.engine}: DOWN \\(${outage.variable} `, 'm'));
      expect(await engineUp(outage.engine)).toBe('0');
      expect(await engineUp('postgresql')).toBe('1');
      if (outage.apiRead) await expect(outage.apiRead(read)).rejects.toMatchObject({ status: 503, code: 'svc:service/unavailable' });
      // The processes are trying: their failures are reported as they retry.
      if (outage.attemptsFail) await waitFor(`a failed attempt on ${outage.engine}`, async () => (/ECONNREFUSED|Connection error|ServiceUnavailable/.test(serverErrors.slice(errorsBefore)) ? true : undefined));

      // 4. Back on the same port and data.
      await startEngines([outage.engine]);
      expect(engines[outage.variable]).toBe(address);
      // The last report seen goes in the failure: which group stopped short, and where.
      let last: StatusReport | undefined;
      const up = await waitFor('every event processed and every group caught up', async () => {
        const current = await status();
        last = current.report;
        return current.report.events.processed === total && current.report.groups.every((g) => g.lag === 0) ? current : undefined;
      }, 180_000).catch((error: Error) => {
        error.message += `\nlast svc status: ${JSON.stringify(last)}`;
        throw error;
      });
      expect(up.code).toBe(0);
      expect(up.report.engines.every((e) => e.up)).toBe(true);
      // The gauge is the probe of the scrape: one made while the engine was still starting may say
      // 0, the next ones 1.
      await waitFor(`${outage.engine} up in the metrics`, async () => ((await engineUp(outage.engine)) === '1' ? true : undefined), 30_000);
      if (outage.apiRead) await outage.apiRead(read);

      // 5. Every movement's effect, once each.
      await outage.verify(ctx, [...before, ...during].map((m) => m.planned));

      // 6. Nothing parked, no event with a failed stage.
      const { rows } = await ctx.db.pool.query<{ parked: number; failed: number }>(
        `SELECT (SELECT count(*)::int FROM parked_records) AS parked, (SELECT count(*)::int FROM event_stages WHERE status = 'failed') AS failed`,
      );
      expect(rows[0]).toEqual({ parked: 0, failed: 0 });
    }
  });
}

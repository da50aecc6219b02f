// An engine lost while the service runs: `svc up` with its aggregates on a ClickHouse server of
// this file's own (platform/local-engines on a temporary directory, not the run's shared one),
// stopped while movements are on their way through, more movements sent while it is down, then
// started again on the same data and port. While it is down, `svc status` and /metrics say so;
// the aggregates and detect pipelines, which read and write it, retry (a lost connection is
// transient: retried in place, never parked, docs/decisions/0021). Once it is back every
// movement's activities are in the store exactly once, and nothing was parked.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BatchItem, SvcClient } from '../clients/typescript/src/index.ts';
import { ClickHouseAggregateStore } from '../platform/aggregates/clickhouse.ts';
import type { EngineHealth } from '../platform/engine-probes.ts';
import { startLocalEngines, type StartedEngines } from '../platform/local-engines/index.ts';
import { accountEvent, partyEvent } from './fixtures/events.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';
import { createTenantClients, waitFor } from './support/svc-tenant.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

// The run could start ClickHouse: this machine can run one of its own too.
const clickhouseAvailable = inject('clickhouseUrl') !== '';

const ACCOUNTS = ['A1', 'A2', 'A3', 'A4'];
const tenant = `outage${randomBytes(4).toString('hex')}`;
const database = `svc_outage_${randomBytes(4).toString('hex')}`;

interface Planned {
  id: string;
  from: string;
  to: string;
  value: bigint;
}

// Movement i goes round the four accounts, each amount different, all within the last hour.
function movement(i: number): { item: BatchItem; planned: Planned } {
  const planned = { id: `MV${String(i).padStart(3, '0')}`, from: ACCOUNTS[i % 4]!, to: ACCOUNTS[(i + 1) % 4]!, value: BigInt(1000 + i) };
  const at = new Date(Date.now() - 3_600_000 + i * 1000).toISOString();
  const item = {
    object: 'movement',
    event: {
      external_id: planned.id,
      schema_version: '2026-09-01',
      occurred_at: at,
      recorded_at: at,
      data: { type: 'p2p', status: 'completed', amount: { value: String(planned.value), asset: 'USD', scale: 2 }, debit: { account_id: planned.from }, credit: { account_id: planned.to } },
    },
  } as BatchItem;
  return { item, planned };
}

interface StatusReport {
  engines: EngineHealth[];
  groups: Array<{ group: string; lag: number | null; parked: number }>;
  events: Record<string, number>;
}

describe.skipIf(!clickhouseAvailable)('ClickHouse lost while svc up runs on it', () => {
  let engineDir: string;
  let dataDir: string;
  let clickhouse: StartedEngines | undefined;
  let clickhouseUrl: string;
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let server: SvcUp | undefined;
  let ingest: SvcClient;
  let reader: ClickHouseClient;
  let serverErrors = '';

  const startClickHouse = () => startLocalEngines({ dataDir: engineDir, engines: ['clickhouse'], detached: false, log: () => {} });
  const status = async () => {
    const result = await runSvc(['status', '--json'], env);
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
    clickhouse = await startClickHouse();
    clickhouseUrl = clickhouse.env.CLICKHOUSE_URL!;
    db = await createTestDatabase();
    const { KAFKA_BROKERS: _k, SCHEMA_REGISTRY_URL: _s, NEO4J_URI: _n, ...rest } = process.env;
    env = {
      ...rest,
      DATABASE_URL: db.url,
      SVC_MASTER_KEY: randomBytes(32).toString('base64url'),
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SVC_AGGREGATE_STORE: 'clickhouse',
      CLICKHOUSE_URL: clickhouseUrl,
      CLICKHOUSE_DATABASE: database,
    };
    server = await startSvcUp(env);
    server.process.stderr!.on('data', (chunk) => (serverErrors += chunk));
    ({ ingest } = await createTenantClients(server.baseUrl, env, tenant));
    reader = createClient({ url: clickhouseUrl });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await reader?.close();
    await clickhouse?.stop({ graceMs: 5_000 });
    await db?.drop();
    for (const dir of [engineDir, dataDir]) if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  it('retries while it is down, says so in status and metrics, and resumes with every effect exactly once', async () => {
    const entities = ACCOUNTS.flatMap((id) => [{ object: 'party', event: partyEvent(`P${id}`) }, { object: 'account', event: accountEvent(id, `P${id}`) }]) as BatchItem[];
    const before = Array.from({ length: 30 }, (_, i) => movement(i));
    const during = Array.from({ length: 30 }, (_, i) => movement(30 + i));

    // 1. Movements on their way: three batches, and ClickHouse stopped as soon as the first of
    // their activities is in it, so the rest are in flight or not yet read.
    await send(entities);
    for (let i = 0; i < before.length; i += 10) await send(before.slice(i, i + 10).map((m) => m.item));
    await waitFor('the first activity in ClickHouse', async () => {
      const rows = await reader.query({ query: `SELECT count() AS n FROM ${database}.agg_activity WHERE tenant_id = '${tenant}'`, format: 'JSONEachRow' }).catch(() => undefined);
      const [row] = rows ? await rows.json<{ n: string }>() : [];
      return Number(row?.n ?? 0) > 0 ? true : undefined;
    });
    await clickhouse!.stop({ graceMs: 15_000 });
    const errorsBefore = serverErrors.length;

    // 2. More movements while it is down: accepted and made canonical (PostgreSQL is up).
    for (let i = 0; i < during.length; i += 10) await send(during.slice(i, i + 10).map((m) => m.item));
    const total = entities.length + before.length + during.length;
    const down = await waitFor('canonical to take in every event', async () => {
      const current = await status();
      return current.report.events.processed === total ? current : undefined;
    });

    // 3. Down, and said so: svc status (exit code 1, the engine and its variable, the aggregates
    // group behind, nothing parked) and the API's metrics.
    expect(down.code).toBe(1);
    expect(down.report.engines.find((e) => e.engine === 'clickhouse')).toMatchObject({ up: false, variable: 'CLICKHOUSE_URL', reason: expect.stringContaining('ECONNREFUSED') });
    expect(down.report.engines.find((e) => e.engine === 'postgresql')).toMatchObject({ up: true });
    expect(down.report.groups.find((g) => g.group === 'aggregates')!.lag).toBeGreaterThan(0);
    expect(down.report.groups.every((g) => g.parked === 0)).toBe(true);
    const text = await runSvc(['status'], env);
    expect(text.stdout).toMatch(/^engine clickhouse: DOWN \(CLICKHOUSE_URL http:\/\/127\.0\.0\.1:\d+\): .*ECONNREFUSED/m);
    expect(await engineUp('clickhouse')).toBe('0');
    expect(await engineUp('postgresql')).toBe('1');
    // The pipelines are trying: their failures are reported as they retry.
    await waitFor('a failed attempt on ClickHouse', async () => (serverErrors.slice(errorsBefore).includes('ECONNREFUSED') ? true : undefined));

    // 4. Back on the same port and data.
    clickhouse = await startClickHouse();
    expect(clickhouse.env.CLICKHOUSE_URL).toBe(clickhouseUrl);
    const up = await waitFor('every group to catch up', async () => {
      const current = await status();
      return current.report.groups.every((g) => g.lag === 0) ? current : undefined;
    });
    expect(up.code).toBe(0);
    expect(up.report.engines.every((e) => e.up)).toBe(true);
    expect(await engineUp('clickhouse')).toBe('1');

    // 5. Every movement's two activities, once each: counts, sums and the listing per account.
    const store = new ClickHouseAggregateStore(reader, database);
    const planned = [...before, ...during].map((m) => m.planned);
    const at = new Date(Date.now() + 60_000);
    for (const account of ACCOUNTS) {
      const outgoing = planned.filter((m) => m.from === account);
      const incoming = planned.filter((m) => m.to === account);
      const subject = { tenantId: tenant, kind: 'account' as const, id: account };
      const [day] = await store.windows(subject, at, { windows: ['24h'] });
      expect(day!.out).toMatchObject({ count: outgoing.length, sum: outgoing.reduce((n, m) => n + m.value, 0n) });
      expect(day!.in).toMatchObject({ count: incoming.length, sum: incoming.reduce((n, m) => n + m.value, 0n) });
      const listed = await store.activities(subject, new Date(Date.now() - 86_400_000), at, { limit: 1000 });
      expect(listed.map((a) => `${a.direction} ${a.movementId}`).sort()).toEqual([...outgoing.map((m) => `out ${m.id}`), ...incoming.map((m) => `in ${m.id}`)].sort());
    }

    // 6. Nothing parked, no event with a failed stage.
    const { rows } = await db.pool.query<{ parked: number; failed: number }>(
      `SELECT (SELECT count(*)::int FROM parked_records) AS parked, (SELECT count(*)::int FROM event_stages WHERE status = 'failed') AS failed`,
    );
    expect(rows[0]).toEqual({ parked: 0, failed: 0 });
  }, 300_000);
});

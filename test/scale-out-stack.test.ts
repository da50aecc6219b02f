// The whole service on every scale-out engine at once: `svc up` with the Kafka bus (Kafka 3.9 and
// Apicurio's Confluent-compatible registry), the network graph on Neo4j 5.26 and the behavioural
// aggregates on ClickHouse, all started by the test set-up (platform/local-engines), beside a
// second `svc up` on the embedded defaults (PostgreSQL only) given the same events. A planted
// fan-in sent through the SDK must come out as an alert a compliance key reads; the party's
// network must be the same on Neo4j as on PostgreSQL; one movement's event status must show its
// way through the stages, and its effects must be in each engine.
//
// Neither service can be given a Kafka namespace of its own, so this is the one `svc up` on the
// run's Kafka (it replaced the separate Kafka and Neo4j stack tests); it has a tenant of its own
// (Neo4j's data is shared by the run) and a ClickHouse database of its own.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BatchItem, SvcClient } from '../clients/typescript/src/index.ts';
import { ClickHouseAggregateStore } from '../platform/aggregates/clickhouse.ts';
import { Neo4jGraphStore } from '../platform/graph/neo4j/store.ts';
import { accountEvent, partyEvent } from './fixtures/events.ts';
import { movementMapping } from './fixtures/import-mappings.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';
import { createTenantClients, waitFor, type ClientScope } from './support/svc-tenant.ts';

const kafkaBrokers = inject('kafkaBrokers');
const schemaRegistryUrl = inject('schemaRegistryUrl');
const clickhouseUrl = inject('clickhouseUrl');
const neo4j = { uri: inject('neo4jUri'), user: inject('neo4jUser'), password: inject('neo4jPassword'), database: inject('neo4jDatabase') };
const reachable = [kafkaBrokers, schemaRegistryUrl, clickhouseUrl, neo4j.uri].every((value) => value !== '');
if (!reachable && process.env.CI) throw new Error('the test set-up must start Kafka, the schema registry, Neo4j and ClickHouse in CI');

const suffix = randomBytes(4).toString('hex');
const tenant = `scale${suffix}`;
const clickhouseDatabase = `svc_scale_${suffix}`;
// Both services hash identifiers, devices and ips into node keys under their master key: given the
// same key, their networks can be compared with nothing normalised.
const masterKey = randomBytes(32).toString('base64url');

// The fan-in the default ruleset's fan_in detector alerts on (defaults: 8 new senders within 7
// days, like-sized amounts adding up to at least 500.00): ten parties never seen before, each
// paying 1,000.00 USD from its own account into one hub account within ten minutes, an hour ago.
// Keys are upper-case ASCII so that no tie-break depends on collation (PostgreSQL's embedded
// server uses C, Neo4j code points: the same for these).
const SENDERS = Array.from({ length: 10 }, (_, i) => `S${String(i + 1).padStart(2, '0')}`);
const HUB = 'HUB';
const HUB_ACCOUNT = 'HUBACCT';
const movementIds = SENDERS.map((sender) => `M${sender}`);

function plantedFanIn(): BatchItem[] {
  const party = (id: string): BatchItem => {
    const base = partyEvent(id);
    // Each party its own e-mail: identifier nodes are hashed keys, so the comparison covers them.
    return { object: 'party', event: { ...base, data: { ...base.data, identifiers: [{ type: 'email', value: `${id.toLowerCase()}@example.com`, verification_status: 'verified' }] } } } as BatchItem;
  };
  const account = (id: string, holder: string) => ({ object: 'account', event: accountEvent(id, holder) }) as BatchItem;
  const start = Date.now() - 3_600_000;
  const movements = SENDERS.map((sender, i) => {
    const at = new Date(start + i * 60_000).toISOString();
    return {
      object: 'movement',
      event: {
        external_id: `M${sender}`,
        schema_version: '2026-09-01',
        occurred_at: at,
        recorded_at: at,
        data: {
          type: 'p2p',
          status: 'completed',
          amount: { value: '100000', asset: 'USD', scale: 2 },
          debit: { account_id: `${sender}ACCT`, party_id: sender },
          credit: { account_id: HUB_ACCOUNT, party_id: HUB },
          channel: 'app',
          // One ip behind every sender: an observed node (hashed) the two networks must share.
          ip: '203.0.113.7',
        },
      },
    } as BatchItem;
  });
  return [party(HUB), account(HUB_ACCOUNT, HUB), ...SENDERS.flatMap((s) => [party(s), account(`${s}ACCT`, s)]), ...movements];
}

interface Service {
  server: SvcUp;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  clients: Record<ClientScope, SvcClient>;
}

async function startService(name: string, engines: NodeJS.ProcessEnv): Promise<Service> {
  const dataDir = await mkdtemp(join(tmpdir(), `svc-${name}-`));
  await chmod(dataDir, 0o755);
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  const env = { ...rest, SVC_DATA_DIR: dataDir, SVC_MASTER_KEY: masterKey, LOG_LEVEL: 'warn', ...engines };
  const server = await startSvcUp(env);
  return { server, env, dataDir, clients: await createTenantClients(server.baseUrl, env, tenant) };
}

async function groupLag(service: Service, group: string): Promise<number | null> {
  const status = await runSvc(['status', '--json'], service.env);
  const report = JSON.parse(status.stdout) as { groups: Array<{ group: string; lag: number | null }> };
  return report.groups.find((g) => g.group === group)!.lag;
}

describe.skipIf(!reachable)('svc up on Kafka, Neo4j and ClickHouse', () => {
  let scaled: Service | undefined;
  let embedded: Service | undefined;
  const accepted = new Map<string, string>(); // movement external id → event id (scale-out service)

  beforeAll(async () => {
    // Side by side: each is a few processes' start-up on a 2-core machine.
    [scaled, embedded] = await Promise.all([
      startService('scale-out', {
        SVC_BUS: 'kafka',
        KAFKA_BROKERS: kafkaBrokers,
        KAFKA_IDEMPOTENT_PRODUCER: 'true',
        SCHEMA_REGISTRY_URL: schemaRegistryUrl,
        SVC_GRAPH_STORE: 'neo4j',
        NEO4J_URI: neo4j.uri,
        NEO4J_USER: neo4j.user,
        NEO4J_PASSWORD: neo4j.password,
        NEO4J_DATABASE: neo4j.database,
        SVC_AGGREGATE_STORE: 'clickhouse',
        CLICKHOUSE_URL: clickhouseUrl,
        CLICKHOUSE_DATABASE: clickhouseDatabase,
      }),
      startService('embedded', {}),
    ]);
    // The same events, in the same batch, to both.
    const events = plantedFanIn();
    const [toScaled, toEmbedded] = await Promise.all([scaled.clients.ingest.batches.create({ events }), embedded.clients.ingest.batches.create({ events })]);
    expect([toScaled.accepted, toEmbedded.accepted]).toEqual([events.length, events.length]);
    for (const result of toScaled.results) if (result.receipt?.object === 'movement') accepted.set(result.receipt.external_id, result.receipt.event_id);
  }, 240_000);

  afterAll(async () => {
    await Promise.allSettled([scaled?.server.stop(), embedded?.server.stop()]);
    const store = Neo4jGraphStore.connect(neo4j);
    const clickhouse = createClient({ url: clickhouseUrl });
    await Promise.allSettled([
      store.deleteTenant(tenant).finally(() => store.close()),
      clickhouse.command({ query: `DROP DATABASE IF EXISTS ${clickhouseDatabase}` }).finally(() => clickhouse.close()),
    ]);
    // The servers may still be writing their last WAL.
    for (const service of [scaled, embedded]) if (service) await rm(service.dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  it('raises the planted fan-in as an alert a compliance key reads through GET /v1/alerts', async () => {
    const { compliance, read } = scaled!.clients;
    const alert = await waitFor('the fan_in alert on the hub account', async () => {
      const page = await compliance.alerts.list({ subject: HUB_ACCOUNT, detector: 'fan_in' }).firstPage();
      return page.data[0];
    });
    expect(alert).toMatchObject({ detector: 'fan_in', status: 'open', subject: { kind: 'account', external_id: HUB_ACCOUNT }, party_id: HUB });
    expect(alert.evidence.movements).toEqual(expect.arrayContaining(movementIds));
    expect(alert.evidence.amounts).toMatchObject({ total: '1000000', count: 10, asset: 'USD' });
    // Restricted AML content: a read key is refused.
    await expect(read.alerts.list({ subject: HUB_ACCOUNT }).firstPage()).rejects.toMatchObject({ status: 403 });
  }, 240_000);

  it("answers a party's network from Neo4j exactly as the PostgreSQL graph store answers it", async () => {
    const complete = (service: Service) =>
      waitFor(`every transfer in the network (${service === scaled ? 'Neo4j' : 'PostgreSQL'})`, async () => {
        const network = await service.clients.read.graph.network(HUB, { depth: 3 });
        return network.edges.filter((e) => e.type === 'transfer').length === SENDERS.length ? network : undefined;
      });
    await Promise.all([complete(scaled!), complete(embedded!)]);
    // Nothing left for either graph pipeline to apply: the answers compared are final.
    for (const service of [scaled!, embedded!]) await waitFor('the graph group to catch up', async () => ((await groupLag(service, 'graph')) === 0 ? true : undefined));

    // A read has a time budget (2 s): on a busy machine it may be spent before the last level,
    // and the answer is then what was found, marked truncated. Those differ by design; complete
    // answers are asked for again until both are.
    const [onNeo4j, onPostgres] = await waitFor('complete answers from both stores', async () => {
      const neo4jAnswer = await scaled!.clients.read.graph.network(HUB, { depth: 3 });
      const postgresAnswer = await embedded!.clients.read.graph.network(HUB, { depth: 3 });
      return neo4jAnswer.truncated || postgresAnswer.truncated ? undefined : [neo4jAnswer, postgresAnswer];
    });
    // Every field of every node and edge, in the same order.
    expect(onNeo4j).toEqual(onPostgres);
    // And the answer is the planted pattern, not two equally empty ones.
    const ids = onNeo4j.nodes.map((n) => n.id);
    expect(ids).toEqual(expect.arrayContaining([`party:${HUB}`, `account:${HUB_ACCOUNT}`, ...SENDERS.map((s) => `account:${s}ACCT`), ...SENDERS.map((s) => `party:${s}`)]));
    expect(onNeo4j.nodes.filter((n) => n.kind === 'identifier' || n.kind === 'ip').length).toBeGreaterThan(0);
    expect(onNeo4j.edges.find((e) => e.source === `account:${SENDERS[0]}ACCT` && e.type === 'transfer')).toMatchObject({
      target: `account:${HUB_ACCOUNT}`,
      count: 1,
      amount: { value: '100000', asset: 'USD', scale: 2 },
      recent_movements: [{ movement_id: movementIds[0] }],
    });

    // Written to Neo4j by the graph pipeline (not to PostgreSQL's graph tables).
    const store = Neo4jGraphStore.connect(neo4j);
    try {
      expect(await store.node(tenant, { kind: 'account', key: HUB_ACCOUNT })).toMatchObject({ attrs: { type: 'wallet' } });
    } finally {
      await store.close();
    }
  }, 240_000);

  it('shows one movement through every stage, with its effect in each engine', async () => {
    const { ingest, read } = scaled!.clients;
    const movement = movementIds[0]!;
    // Canonical: consumed from Kafka, readable through the API.
    expect((await waitFor('the canonical movement', () => read.movements.retrieve(movement))).external_id).toBe(movement);

    // Every pipeline writes its stage once it has done its part; detection runs last (it waits for
    // the graph's and the aggregates' offsets).
    const status = await waitFor('the detect stage of the movement', async () => {
      const record = await ingest.events.retrieve(accepted.get(movement)!);
      return record.stage_history.some((s) => s.stage === 'detect') ? record : undefined;
    });
    expect(status).toMatchObject({ object: 'movement', external_id: movement, status: 'processed', rejection: null });
    // Accepted at the API, then the canonical pipeline (through Kafka). On Kafka each family has a
    // topic of its own, so the movement may reach the canonical pipeline before its accounts: it is
    // then held, and released when they arrive (seen in this test). Then the graph (Neo4j) and the
    // aggregates (ClickHouse), in either order, and detection.
    const stages = status.stage_history.map((s) => `${s.stage}/${s.status}`);
    const canonical = stages.indexOf('canonical/ok');
    expect(stages[0]).toBe('received/ok');
    expect(stages.slice(1, canonical).every((stage) => stage === 'canonical/held')).toBe(true);
    if (canonical > 1) expect(status.stage_history[canonical]!.detail).toEqual({ released: true });
    expect(stages.slice(canonical + 1, -1).sort()).toEqual(['aggregates/ok', 'graph/ok']);
    expect(stages.at(-1)).toBe('detect/ok');
    for (const stage of status.stage_history.slice(canonical)) {
      expect(stage.worker).toMatch(/^(canonical|graph|aggregates|detect)\b/);
      expect(stage.duration_ms).toEqual(expect.any(Number));
    }

    // Aggregates: the movement's activities in ClickHouse, once each.
    const client = createClient({ url: clickhouseUrl });
    try {
      const aggregates = new ClickHouseAggregateStore(client, clickhouseDatabase);
      const at = new Date(Date.now() + 60_000);
      const [sender] = await aggregates.windows({ tenantId: tenant, kind: 'account', id: `${SENDERS[0]}ACCT` }, at, { windows: ['24h'] });
      expect(sender!.out).toMatchObject({ count: 1, sum: 100000n });
      const [hub] = await aggregates.windows({ tenantId: tenant, kind: 'account', id: HUB_ACCOUNT }, at, { windows: ['24h'] });
      expect(hub!.in).toMatchObject({ count: SENDERS.length, sum: 1000000n });
    } finally {
      await client.close();
    }
    // Graph and detection: the movement is a transfer in the network (above) and evidence of the
    // alert.
    const alert = await waitFor('the fan_in alert', async () => (await scaled!.clients.compliance.alerts.list({ subject: HUB_ACCOUNT, detector: 'fan_in' }).firstPage()).data[0]);
    expect(alert.evidence.movements).toContain(movement);
  }, 240_000);

  it('lands a historical import through Kafka as context: consumed by detection, not judged', async () => {
    const { ingest, read } = scaled!.clients;
    const mapping = movementMapping({ kind: 'jsonl' }, {
      'data.amount': { type: 'money', value: { from: 'minor' }, asset: { const: 'USD' }, units: 'minor' },
      'data.debit.account_id': { from: 'from' },
      'data.credit.account_id': { from: 'to' },
    });
    const goLive = new Date(Date.now() - 3 * 3_600_000);
    const created = await ingest.imports.create({ mapping, go_live_at: goLive.toISOString() });
    const line = JSON.stringify({ id: 'IMPORTED', at: new Date(goLive.getTime() - 3_600_000).toISOString(), minor: '250000', from: `${SENDERS[1]}ACCT`, to: `${SENDERS[2]}ACCT` });
    await ingest.imports.uploadChunk(created.import_id, 0, new TextEncoder().encode(`${line}\n`), { contentType: 'application/x-ndjson' });
    await ingest.imports.submit(created.import_id, { chunk_count: 1 });
    // The import worker of `svc up` lands it; the canonical pipeline reads it from Kafka.
    const view = await waitFor('the imported movement', async () => read.movements.retrieve('IMPORTED').catch(() => undefined));
    const status = await waitFor('the detect stage of the imported movement', async () => {
      const record = await ingest.events.retrieve(view.event_id);
      return record.stage_history.some((s) => s.stage === 'detect') ? record : undefined;
    });
    expect(status).toMatchObject({ historical: true, status: 'processed' });
    expect(status.stage_history.find((s) => s.stage === 'detect')!.detail).toEqual({ evaluated: false, reason: 'historical_import' });
    const alerts = await scaled!.clients.compliance.alerts.list({}).firstPage();
    for (const alert of alerts.data) expect(alert.evidence.movements).not.toContain('IMPORTED');
  }, 240_000);
});

// The whole service with its network graph on Neo4j: `svc up` with SVC_GRAPH_STORE=neo4j against
// the Neo4j 5.26 the test set-up started (platform/local-engines/neo4j.ts). Events sent to the API
// must come out of GET /v1/graph/parties/{id}/network, written by the graph pipeline into Neo4j and
// read back from it: the store opened as every process opens it (platform/engines.ts, constraints
// applied at start by each component at once), not only the adapter the contract suite checks.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SvcApiError, SvcClient, type BatchItem } from '../clients/typescript/src/index.ts';
import { Neo4jGraphStore } from '../platform/graph/neo4j/store.ts';
import { accountEvent, movementEvent, partyEvent } from './fixtures/events.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';

const uri = inject('neo4jUri');
const connection = { uri, user: inject('neo4jUser'), password: inject('neo4jPassword'), database: inject('neo4jDatabase') };
// A tenant of its own: a Neo4j given with NEO4J_URI may hold other runs' data.
const tenant = `neo4j${randomBytes(4).toString('hex')}`;

describe.skipIf(!uri)('svc up with the network graph on Neo4j', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: SvcUp | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-neo4j-stack-'));
    await chmod(dataDir, 0o755);
    const { DATABASE_URL: _ignored, SVC_MASTER_KEY: _alsoIgnored, ...rest } = process.env;
    env = {
      ...rest,
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SVC_GRAPH_STORE: 'neo4j',
      NEO4J_URI: connection.uri,
      NEO4J_USER: connection.user,
      NEO4J_PASSWORD: connection.password,
      NEO4J_DATABASE: connection.database,
    };
    server = await startSvcUp(env);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    const store = Neo4jGraphStore.connect(connection);
    await store.deleteTenant(tenant).finally(() => store.close());
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  it("answers a party's network from what the graph pipeline wrote to Neo4j", async () => {
    expect((await runSvc(['tenants', 'create', tenant, '--base-asset', 'USD'], env)).code).toBe(0);
    const client = async (scope: string) => {
      const issued = await runSvc(['keys', 'issue', '--tenant', tenant, '--scope', scope, '--json'], env);
      expect(issued.code, issued.stderr).toBe(0);
      const key = JSON.parse(issued.stdout) as { key_id: string; secret: string };
      return new SvcClient({ baseUrl: server!.baseUrl, keyId: key.key_id, secret: key.secret });
    };
    const ingest = await client('ingest');
    const read = await client('read');
    const events = [
      { object: 'party', event: partyEvent('party-1') },
      { object: 'party', event: partyEvent('party-2') },
      { object: 'account', event: accountEvent('acct-1', 'party-1') },
      { object: 'account', event: accountEvent('acct-2', 'party-2') },
      { object: 'movement', event: movementEvent('mv-1') },
    ] as BatchItem[];
    expect((await ingest.batches.create({ events })).accepted).toBe(5);

    // party-1 holds acct-1, which paid acct-2, held by party-2: three hops. A 404 until the
    // canonical pipeline has the party, then no transfer until the graph pipeline wrote it.
    const deadline = Date.now() + 60_000;
    const network = await (async function poll(): Promise<Awaited<ReturnType<typeof read.graph.network>>> {
      const answer = await read.graph.network('party-1', { depth: 3 }).catch((error: unknown) => {
        if (error instanceof SvcApiError && error.status === 404 && Date.now() < deadline) return undefined;
        throw error;
      });
      if (answer?.edges.some((e) => e.type === 'transfer') || (answer && Date.now() >= deadline)) return answer;
      await new Promise((resolve) => setTimeout(resolve, 250));
      return poll();
    })();
    expect(network.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(['party:party-1', 'account:acct-1', 'account:acct-2', 'party:party-2']));
    const transfer = network.edges.find((e) => e.type === 'transfer');
    expect(transfer).toMatchObject({ source: 'account:acct-1', target: 'account:acct-2', count: 1, amount: { value: '12550', asset: 'USD', scale: 2 } });
    expect(transfer!.recent_movements!.map((m) => m.movement_id)).toEqual(['mv-1']);
    expect(network.nodes.find((n) => n.id === 'party:party-1')).toMatchObject({ attributes: { type: 'person', status: 'active' } });

    // Written to Neo4j, not to PostgreSQL's graph tables.
    const store = Neo4jGraphStore.connect(connection);
    try {
      expect(await store.node(tenant, { kind: 'account', key: 'acct-1' })).toMatchObject({ attrs: { type: 'wallet' } });
    } finally {
      await store.close();
    }
  }, 120_000);
});

// The whole service on the scale-out engines this machine can run: `svc up` with the Kafka bus
// (Kafka 3.9 and Apicurio's Confluent-compatible registry, started by the test set-up) and the
// ClickHouse aggregate store. An
// event sent to the API must come out canonical (through Kafka) and in ClickHouse's aggregates.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SvcApiError, SvcClient, type BatchItem } from '../clients/typescript/src/index.ts';
import { ClickHouseAggregateStore } from '../platform/aggregates/clickhouse.ts';
import { accountEvent, movementEvent, partyEvent } from './fixtures/events.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';

const clickhouseUrl = inject('clickhouseUrl');
const kafkaBrokers = inject('kafkaBrokers');
const schemaRegistryUrl = inject('schemaRegistryUrl');
const reachable = clickhouseUrl !== '' && kafkaBrokers !== '' && schemaRegistryUrl !== '';
if (!reachable && process.env.CI) throw new Error('the test set-up must start ClickHouse, Kafka and the schema registry in CI');

describe.skipIf(!reachable)('svc up on Kafka and ClickHouse', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: SvcUp | undefined;
  let baseUrl: string;
  const database = `svc_stack_${randomBytes(4).toString('hex')}`;

  const run = (args: string[]) => runSvc(args, env);


  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-stack-'));
    await chmod(dataDir, 0o755);
    const { DATABASE_URL: _ignored, SVC_MASTER_KEY: _alsoIgnored, ...rest } = process.env;
    env = {
      ...rest,
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SVC_BUS: 'kafka',
      KAFKA_BROKERS: kafkaBrokers,
      KAFKA_IDEMPOTENT_PRODUCER: 'true',
      SCHEMA_REGISTRY_URL: schemaRegistryUrl,
      SVC_AGGREGATE_STORE: 'clickhouse',
      CLICKHOUSE_URL: clickhouseUrl,
      CLICKHOUSE_DATABASE: database,
    };
    server = await startSvcUp(env);
    baseUrl = server.baseUrl;

  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    const client = createClient({ url: clickhouseUrl });
    await client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).finally(() => client.close());
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }); // the server may still be writing its last WAL
  });

  const clientWith = async (scope: string) => {
    const issued = await run(['keys', 'issue', '--tenant', 'acme', '--scope', scope, '--json']);
    expect(issued.code, issued.stderr).toBe(0);
    const key = JSON.parse(issued.stdout) as { key_id: string; secret: string };
    return new SvcClient({ baseUrl, keyId: key.key_id, secret: key.secret });
  };

  it('carries an event from the API through Kafka to the canonical model and ClickHouse', async () => {
    expect((await run(['tenants', 'create', 'acme', '--base-asset', 'USD'])).code).toBe(0);
    const ingest = await clientWith('ingest');
    const read = await clientWith('read');
    const now = new Date().toISOString();
    const at = <T extends { occurred_at: string }>(event: T) => ({ ...event, occurred_at: now });
    const events = [
      { object: 'party', event: at(partyEvent('party-1')) },
      { object: 'party', event: at(partyEvent('party-2')) },
      { object: 'account', event: at(accountEvent('acct-1', 'party-1')) },
      { object: 'account', event: at(accountEvent('acct-2', 'party-2')) },
      { object: 'movement', event: { ...at(movementEvent('mv-1')), recorded_at: now } },
    ] as BatchItem[];
    const batch = await ingest.batches.create({ events });
    expect(batch.accepted).toBe(5);

    // Canonical: the movement is readable once the canonical group consumed it from Kafka.
    const movement = await eventually(() => read.movements.retrieve('mv-1'));
    expect(movement.external_id).toBe('mv-1');

    // Aggregates: the aggregates group wrote the movement's four activities to ClickHouse.
    const client = createClient({ url: clickhouseUrl });
    try {
      const store = new ClickHouseAggregateStore(client, database);
      const windows = await eventually(async () => {
        const stats = await store.windows({ tenantId: 'acme', kind: 'account', id: 'acct-1' }, new Date(Date.now() + 60_000), { windows: ['24h'] });
        if (stats[0]!.out.count === 0) throw new Error('not yet');
        return stats;
      });
      expect(windows[0]!.out).toMatchObject({ count: 1, sum: 12550n });
    } finally {
      await client.close();
    }
  }, 120_000);
});

// Retries `attempt` until it resolves (a 404 or a "not yet" means: not there yet), for up to 60 s.
async function eventually<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const waiting = (error instanceof SvcApiError && error.status === 404) || (error as Error).message === 'not yet';
      if (!waiting || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

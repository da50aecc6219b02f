import { mkdtemp, chmod, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../platform/postgres/embedded.ts';
import { createPool } from '../../platform/postgres/pool.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { ensureChromium } from '../browser/chromium.ts';
import { startTestEngines, type TestEngines } from './engines/index.ts';

export const TEMPLATE_DATABASE = 'svc_test_template';

declare module 'vitest' {
  export interface ProvidedContext {
    // Connection URL of the test server with `{database}` where each test file puts its own.
    databaseUrlPattern: string;
    templateDatabase: string;
    // The scale-out engines reachable in this run ('' when not): see engines/index.ts.
    clickhouseUrl: string;
    kafkaBrokers: string;
    schemaRegistryUrl: string;
    neo4jUri: string;
    neo4jUser: string;
    neo4jPassword: string;
    neo4jDatabase: string;
  }
}

let server: EmbeddedServer | undefined;
let engines: TestEngines | undefined;
let dataDir: string | undefined;

// One real PostgreSQL for the whole run (the embedded one, or TEST_DATABASE_URL's server), with
// a migrated template database that every test file clones into a database of its own.
export async function setup(project: TestProject): Promise<void> {
  let adminUrl: string;
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    adminUrl = external;
  } else {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-test-'));
    // The server runs as the postgres user when we are root; it must be able to reach its directory.
    await chmod(dataDir, 0o755);
    // Test files run in parallel, each with its pools and some with child services of their own.
    server = await startEmbeddedPostgres({ dataDir, port: 0, settings: { max_connections: 300 } });
    adminUrl = server.url('postgres');
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE}`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();

  const url = new URL(adminUrl);
  url.pathname = `/${TEMPLATE_DATABASE}`;
  const pool = createPool(url.toString(), 2);
  await migrate(pool);
  await pool.end();

  url.pathname = '/{database}';
  project.provide('databaseUrlPattern', url.toString().replace('%7Bdatabase%7D', '{database}'));
  project.provide('templateDatabase', TEMPLATE_DATABASE);

  engines = await startTestEngines();
  // The browser tests' Chromium, installed here once rather than by each test file at once; when
  // it cannot be, the browser tests fail on launching it, with the reason, and nothing else does.
  await ensureChromium().catch((error: unknown) => process.stderr.write(`Chromium unavailable: ${(error as Error).message}\n`));
  project.provide('clickhouseUrl', engines.clickhouseUrl);
  project.provide('kafkaBrokers', engines.kafkaBrokers);
  project.provide('schemaRegistryUrl', engines.schemaRegistryUrl);
  project.provide('neo4jUri', engines.neo4jUri);
  project.provide('neo4jUser', engines.neo4jUser);
  project.provide('neo4jPassword', engines.neo4jPassword);
  project.provide('neo4jDatabase', engines.neo4jDatabase);
}

// The database and the engines stop side by side: vitest ends the process 10 s into the teardown
// (teardownTimeout), and ClickHouse alone may take that long to shut down. Stopped one after the
// other, every run that had started ClickHouse left its PostgreSQL running and its directory in
// /tmp.
export async function teardown(): Promise<void> {
  await Promise.allSettled([
    (async () => {
      await server?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    })(),
    engines?.stop(),
  ]);
}

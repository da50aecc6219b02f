import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { describe, inject, it } from 'vitest';
import { createClickHouseClient } from './clickhouse.ts';
import { identifier } from './clickhouse-escape.ts';

// What the ClickHouse test files share: the server of the run (test/support/engines: the one
// CLICKHOUSE_URL names, or the private one the set-up started), and a database of their own.

// The server's URL, or undefined after declaring why there is none: in CI a failing test (the
// suites must not pass by skipping), elsewhere a skipped suite whose name says why.
export function clickhouseUrlOr(suite: string): string | undefined {
  const url = inject('clickhouseUrl');
  if (url) return url;
  const why = 'no ClickHouse server: CLICKHOUSE_URL is unset and the test set-up could not start one (see its log line)';
  if (process.env.CI) {
    describe(suite, () => {
      it('has a ClickHouse server to run against', () => {
        throw new Error(`${why}; CI must run the ClickHouse suites`);
      });
    });
  } else {
    console.warn(`${suite}: skipped, ${why}`);
    describe.skip(`${suite} (skipped: ${why})`, () => {
      it('needs ClickHouse', () => undefined);
    });
  }
  return undefined;
}

export interface TestClickHouse {
  client: ClickHouseClient;
  database: string;
  drop: () => Promise<void>;
}

// A client and a fresh database name (created by whoever migrates); drop() removes the database
// and closes the client.
export function testClickHouse(url: string): TestClickHouse {
  const client = createClickHouseClient({ url, username: process.env.CLICKHOUSE_USER, password: process.env.CLICKHOUSE_PASSWORD });
  const database = `svc_test_${randomBytes(6).toString('hex')}`;
  return {
    client,
    database,
    drop: async () => {
      try {
        await client.command({ query: `DROP DATABASE IF EXISTS ${identifier(database).text}` });
      } finally {
        await client.close();
      }
    },
  };
}

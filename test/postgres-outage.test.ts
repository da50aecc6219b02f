// PostgreSQL lost while the service runs: `svc up` on a PostgreSQL server of this file's own (the
// embedded server's binaries on a temporary directory, not the run's shared server), the server
// shut down while movements are on their way through, then started again on the same data and
// port. PostgreSQL is the system of record: while it is away nothing can be accepted, so the API
// answers 503 (a governed problem with Retry-After, never an internal error), /metrics still
// answers and says it is down, `svc status` names the server in one line, and `svc up` stays up.
// Once it is back the same request is accepted, and every movement's effects are there exactly
// once with nothing parked.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcApiError, type MovementEvent, type SvcClient } from '../clients/typescript/src/index.ts';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '../platform/postgres/embedded.ts';
import { ringEntities, ringMovement } from './fixtures/ring.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';
import { createTenantClients, waitFor } from './support/svc-tenant.ts';

describe('PostgreSQL lost while svc up runs on it', () => {
  const tenant = `pgout${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  let pgDir: string;
  let port: number;
  let database: EmbeddedServer | undefined;
  let server: SvcUp | undefined;
  let ingest: SvcClient;
  let env: NodeJS.ProcessEnv;
  let serverErrors = '';
  let exited: number | null | undefined;

  const startDatabase = async () => (database = await startEmbeddedPostgres({ dataDir: pgDir, port }));
  const query = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: database!.url() });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const engineUp = async (name: string) => {
    const metrics = await (await fetch(`${server!.baseUrl}/metrics`)).text();
    return new RegExp(`^svc_engine_up\\{engine="${name}"\\} (\\d)$`, 'm').exec(metrics)?.[1];
  };
  // The movement the outage refuses, sent again once it is over, under the same Idempotency-Key.
  const retried = () => ingest.movements.ingest(ringMovement(20).item.event as MovementEvent, { idempotencyKey: 'retried-after-the-outage' });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-pg-outage-'));
    pgDir = await mkdtemp(join(tmpdir(), 'svc-pg-outage-db-'));
    for (const dir of [dataDir, pgDir]) await chmod(dir, 0o755);
    port = await freePort();
    await startDatabase();
    env = {
      ...process.env,
      DATABASE_URL: database!.url(),
      SVC_MASTER_KEY: randomBytes(32).toString('base64url'),
      SVC_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    for (const name of ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'NEO4J_URI', 'CLICKHOUSE_URL']) delete env[name];
    server = await startSvcUp(env);
    server.process.stderr!.on('data', (chunk) => (serverErrors += chunk));
    server.process.on('exit', (code) => (exited = code));
    // No retries: each refusal is seen as the service answered it.
    ({ ingest } = await createTenantClients(server.baseUrl, env, tenant, { retry: { maxRetries: 0 } }));
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await database?.stop();
    for (const dir of [dataDir, pgDir]) if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  it('answers 503 while it is away, stays up, and resumes with every effect exactly once', async () => {
    try {
      const entities = ringEntities();
      expect((await ingest.batches.create({ events: entities })).accepted).toBe(entities.length);
      // On their way through the pipelines when the server goes.
      const before = Array.from({ length: 20 }, (_, i) => ringMovement(i).item);
      expect((await ingest.batches.create({ events: before })).accepted).toBe(before.length);

      await database!.stop();
      const errorsBefore = serverErrors.length;

      // 1. Nothing can be accepted: 503, a governed problem with Retry-After, for a single event
      // and a batch alike; readiness says so, liveness and /metrics still answer.
      const refused = await retried().then(() => undefined, (error: SvcApiError) => error);
      expect(refused).toBeInstanceOf(SvcApiError);
      expect(refused).toMatchObject({ status: 503, code: 'svc:service/unavailable', attempts: 1 });
      expect(refused!.retryAfterMs).toBeGreaterThan(0);
      const batch = await ingest.batches.create({ events: [ringMovement(21).item] }).then(
        () => undefined,
        (error: SvcApiError) => error,
      );
      expect(batch).toBeInstanceOf(SvcApiError);
      expect(batch).toMatchObject({ status: 503, code: 'svc:service/unavailable', attempts: 1 });
      const ready = await fetch(`${server!.baseUrl}/ready`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).not.toBeNull();
      expect((await fetch(`${server!.baseUrl}/health`)).status).toBe(200);
      expect(await engineUp('postgresql')).toBe('0');
      // An operator's command says which server, in one line without its password (exit code 1).
      const status = await runSvc(['status'], env);
      expect(status.code).toBe(1);
      expect(status.stderr).toMatch(/^svc: DATABASE_URL: PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/svc does not answer: connect ECONNREFUSED/m);
      expect(status.stderr).not.toContain(decodeURIComponent(new URL(env.DATABASE_URL!).password));
      expect(status.stderr).not.toMatch(/^\s+at /m);

      // 2. The processes retry, each failure reported on one line that says why, not a stack
      // trace per attempt; none of them gives up.
      await waitFor('a failed attempt reported', async () => (/ECONNREFUSED/.test(serverErrors.slice(errorsBefore)) ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(exited).toBeUndefined();
      const reported = serverErrors.slice(errorsBefore);
      expect(reported).toMatch(/^svc: transient failure, retried: connect ECONNREFUSED 127\.0\.0\.1:\d+$/m);
      expect(reported).not.toMatch(/^\s+at /m);

      // 3. Back on the same port and data: the refused request, sent again with its key, is
      // accepted at once and as new (nothing of it was written; no connection the outage broke is
      // handed out again), and so are the rest.
      await startDatabase();
      const accepted = await retried();
      expect(accepted.lastResponse.status).toBe(202);
      expect(accepted).toMatchObject({ external_id: 'MV020', idempotent_replay: false });
      expect(accepted.lastResponse.idempotentReplayed).toBe(false);
      const after = Array.from({ length: 10 }, (_, i) => ringMovement(21 + i).item);
      expect((await ingest.batches.create({ events: after })).accepted).toBe(after.length);
      expect((await fetch(`${server!.baseUrl}/ready`)).status).toBe(200);
      expect(await engineUp('postgresql')).toBe('1');

      // 4. Every event processed once: each movement canonical once, nothing parked, no stage
      // failed, and every group caught up.
      const movements = before.length + 1 + after.length;
      await waitFor('every event processed', async () => {
        const [row] = await query<{ processed: number; other: number }>(
          `SELECT count(*) FILTER (WHERE status = 'processed')::int AS processed, count(*) FILTER (WHERE status <> 'processed')::int AS other
             FROM inbox_events WHERE tenant_id = $1`,
          [tenant],
        );
        return row!.processed === entities.length + movements && row!.other === 0 ? true : undefined;
      }, 90_000);
      const [canonical] = await query<{ rows: number; distinct: number }>(
        'SELECT count(*)::int AS rows, count(DISTINCT external_id)::int AS distinct FROM canonical_movements WHERE tenant_id = $1',
        [tenant],
      );
      expect(canonical).toEqual({ rows: movements, distinct: movements });
      const [faults] = await query<{ parked: number; failed: number }>(
        `SELECT (SELECT count(*)::int FROM parked_records) AS parked, (SELECT count(*)::int FROM event_stages WHERE status = 'failed') AS failed`,
      );
      expect(faults).toEqual({ parked: 0, failed: 0 });
      await waitFor('every group caught up', async () => {
        const report = JSON.parse((await runSvc(['status', '--json'], env)).stdout) as { groups: Array<{ lag: number | null }> };
        return report.groups.every((g) => g.lag === 0) ? true : undefined;
      }, 90_000);
    } catch (error) {
      (error as Error).message += `\n--- svc up stderr (last 6000 characters) ---\n${serverErrors.slice(-6000)}`;
      throw error;
    }
  }, 300_000);
});

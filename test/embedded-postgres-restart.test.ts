// The embedded PostgreSQL server killed under `svc up` (the default: no DATABASE_URL, the server
// of the data directory): it is a daemon of its own, so `svc up` watches for it and starts it again
// on the same port and data (its crash recovery replays the WAL). The processes retry meanwhile;
// once it is back, what was accepted before the kill and what is sent after are all processed,
// once each, nothing parked; and `svc up` stops the server it started again when it stops.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcApiError, type BatchItem, type SvcClient } from '../clients/typescript/src/index.ts';
import { ringEntities, ringMovement } from './fixtures/ring.ts';
import { runSvc, startSvcUp, type SvcUp } from './support/svc-process.ts';
import { createTenantClients, waitFor } from './support/svc-tenant.ts';

interface Status {
  groups: Array<{ group: string; lag: number | null; parked: number }>;
  events: Record<string, number>;
}

describe('the embedded PostgreSQL server killed under svc up', () => {
  const tenant = `pgkill${randomBytes(4).toString('hex')}`;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: SvcUp | undefined;
  let ingest: SvcClient;
  let serverErrors = '';
  let exited: number | null | undefined;

  const postmasterPid = async () => Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const status = async (): Promise<Status> => {
    const result = await runSvc(['status', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Status;
  };
  // Sent until the service takes it: right after the restart a request can still meet a
  // connection the kill broke (503, nothing written).
  const send = (items: BatchItem[]) =>
    waitFor('the batch accepted', async () => {
      try {
        return (await ingest.batches.create({ events: items })).accepted;
      } catch (error) {
        if (error instanceof SvcApiError && error.status === 503) return undefined;
        throw error;
      }
    }, 60_000);
  const processed = (count: number) =>
    waitFor(`${count} events processed`, async () => {
      const report = await status();
      return report.events.processed === count && Object.keys(report.events).length === 1 ? report : undefined;
    }, 90_000);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-pg-kill-'));
    await chmod(dataDir, 0o755);
    env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_MASTER_KEY: randomBytes(32).toString('base64url'), LOG_LEVEL: 'warn' };
    for (const name of ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'NEO4J_URI', 'CLICKHOUSE_URL']) delete env[name];
    server = await startSvcUp(env);
    server.process.stderr!.on('data', (chunk) => (serverErrors += chunk));
    server.process.on('exit', (code) => (exited = code));
    ({ ingest } = await createTenantClients(server.baseUrl, env, tenant));
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  it('starts it again on its port and data, and every event is processed once', async () => {
    try {
      const entities = ringEntities();
      expect(await send(entities)).toBe(entities.length);
      const before = Array.from({ length: 10 }, (_, i) => ringMovement(i).item);
      expect(await send(before)).toBe(before.length);

      // Killed: no shutdown, no checkpoint; the pid file stays behind.
      const killed = await postmasterPid();
      process.kill(killed, 'SIGKILL');
      await waitFor('svc up starting the server again', async () => (/started it again on its port and data/.test(serverErrors) ? true : undefined), 90_000);
      expect(await postmasterPid()).not.toBe(killed);
      expect(exited).toBeUndefined();

      const after = Array.from({ length: 10 }, (_, i) => ringMovement(10 + i).item);
      expect(await send(after)).toBe(after.length);
      const report = await processed(entities.length + before.length + after.length);
      expect(report.groups.every((g) => g.parked === 0)).toBe(true);
      await waitFor('every group caught up', async () => ((await status()).groups.every((g) => g.lag === 0) ? true : undefined), 90_000);

      // The server it started again is its own: stopping svc up stops it.
      await server!.stop();
      expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    } catch (error) {
      (error as Error).message += `\n--- svc up stderr (last 6000 characters) ---\n${serverErrors.slice(-6000)}`;
      throw error;
    }
  }, 300_000);
});

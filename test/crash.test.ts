import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../clients/typescript/src/index.ts';
import { SecretBox } from '../platform/crypto/secret-box.ts';
import { issueKey } from '../platform/keys/api-keys.ts';
import { freePort } from '../platform/postgres/embedded.ts';
import { setTenantRateLimit } from '../platform/rate-limit/token-buckets.ts';
import { createTenant } from '../platform/tenants/tenants.ts';
import { movementEvent } from './fixtures/events.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

// No acknowledged-but-lost state: a server killed with SIGKILL under concurrent ingest loses no
// event it answered 202 for, and holds no event twice.
const SVC = join(import.meta.dirname, '../bin/svc.js');
const WORKERS = 16;

let db: TestDatabase;
let key: { keyId: string; secret: string };
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;

async function startServer(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SVC, 'up'], { env: { ...env, PORT: String(port), SVC_CONSOLE_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('svc is up at')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`svc up exited with ${code}`)));
  });
  return child;
}

async function ingest(base: string, externalId: string): Promise<{ status: number; eventId?: string; body?: unknown } | 'transport_error'> {
  const body = JSON.stringify({ ...movementEvent(externalId), occurred_at: new Date(Date.now() - 60_000).toISOString() });
  const headers = signRequest({ keyId: key.keyId, secret: key.secret, method: 'POST', target: '/v1/movements', body });
  try {
    const res = await fetch(`${base}/v1/movements`, { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } });
    const json = (await res.json()) as { event_id?: string };
    return { status: res.status, eventId: json.event_id, body: json };
  } catch {
    return 'transport_error';
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  const masterKey = randomBytes(32);
  await createTenant(db.pool, 'crash', 'USD');
  await setTenantRateLimit(db.pool, 'crash', { capacity: 1_000_000, refillPerS: 1_000_000 });
  const issued = await issueKey(db.pool, new SecretBox(masterKey), { tenantId: 'crash', scope: 'ingest', environment: 'test' });
  if (issued.kind !== 'issued') throw new Error('no key');
  key = { keyId: issued.key.key_id, secret: issued.key.secret };
  env = { ...process.env, DATABASE_URL: db.url, SVC_MASTER_KEY: masterKey.toString('base64url'), LOG_LEVEL: 'silent', HOST: '127.0.0.1' };
});

afterAll(async () => {
  server?.kill('SIGKILL');
  await db?.drop();
});

describe('crash safety', () => {
  it('keeps every 202-acknowledged event across a SIGKILL, and none twice', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = await startServer(port);

    const acknowledged = new Map<string, string>();
    const unknown = new Set<string>();
    let next = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const externalId = `crash-${next++}`;
        const result = await ingest(base, externalId);
        if (result === 'transport_error') unknown.add(externalId);
        else if (result.status === 202) acknowledged.set(externalId, result.eventId!);
        else throw new Error(`unexpected ${result.status}: ${JSON.stringify(result.body)}`);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));
    while (acknowledged.size < 300) await new Promise((r) => setTimeout(r, 20));
    server.kill('SIGKILL');
    killed = true;
    await load;
    expect(acknowledged.size).toBeGreaterThanOrEqual(300);

    server = await startServer(port);
    for (const [externalId, eventId] of acknowledged) {
      const headers = signRequest({ keyId: key.keyId, secret: key.secret, method: 'GET', target: `/v1/events/${eventId}` });
      const res = await fetch(`${base}/v1/events/${eventId}`, { headers });
      expect(res.status, externalId).toBe(200);
      expect(((await res.json()) as { external_id: string }).external_id).toBe(externalId);
    }

    // Clients retry what they could not confirm: each lands once (or coalesces onto its original).
    for (const externalId of unknown) {
      const result = await ingest(base, externalId);
      expect(result).not.toBe('transport_error');
    }
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS events, count(DISTINCT external_id)::int AS distinct_ids,
              (SELECT count(*)::int FROM outbox) AS obligations,
              (SELECT count(*)::int FROM event_stages WHERE stage = 'received') AS received
         FROM inbox_events`,
    );
    expect(rows[0].events).toBe(rows[0].distinct_ids);
    expect(rows[0].obligations).toBe(rows[0].events);
    expect(rows[0].received).toBe(rows[0].events);
    expect(rows[0].events).toBe(acknowledged.size + [...unknown].filter((id) => !acknowledged.has(id)).length);
  }, 120_000);
});

import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAsset } from '../../../platform/assets/tenant-registry.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { consoleAssetsResponseSchema } from '../../../schemas/console/assets.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../app.ts';
import { createConsoleUser } from '../users.ts';
import { createConsole } from '../wiring.ts';

let db: TestDatabase;
let app: FastifyInstance;
const clock = new ManualClock('2026-09-01T12:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  await createTenant(db.pool, 'other', 'EUR');
  await registerAsset(db.pool, 'acme', 'X-PTS', 4);
  await registerAsset(db.pool, 'other', 'X-MILES', 0);
  ({ app } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool: db.pool, masterKey: randomBytes(32), clock, logger: false }));
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

async function cookieFor(tenant: string): Promise<string> {
  const created = await createConsoleUser(db.pool, { tenantId: tenant, email: `ana@${tenant}.example`, role: 'analyst' }, clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
  const login = await app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ tenant, email: `ana@${tenant}.example`, password: created.password }) });
  const cookie = /svc_console=([^;]*)/.exec(String(login.headers['set-cookie']))![1]!;
  // A one-time password must be changed before any other route answers.
  const changed = await app.inject({
    method: 'POST',
    url: '/console/v1/password',
    headers: { cookie: `${SESSION_COOKIE}=${cookie}`, [CSRF_HEADER]: login.json().csrf_token, 'content-type': 'application/json' },
    payload: JSON.stringify({ current_password: created.password, new_password: 'correct horse battery staple' }),
  });
  expect(changed.statusCode).toBe(200);
  return cookie;
}

describe('GET /console/v1/assets', () => {
  it("lists ISO 4217 and the session tenant's own assets with their scales, and no other tenant's", async () => {
    const res = await app.inject({ method: 'GET', url: '/console/v1/assets', headers: { cookie: `${SESSION_COOKIE}=${await cookieFor('acme')}` } });
    expect(res.statusCode, res.body).toBe(200);
    const body = consoleAssetsResponseSchema.parse(res.json());
    const scales = new Map(body.assets.map((a) => [a.asset, a.scale]));
    expect(scales.get('USD')).toBe(2);
    expect(scales.get('JPY')).toBe(0);
    expect(scales.get('BHD')).toBe(3);
    expect(scales.get('X-PTS')).toBe(4);
    expect(scales.has('X-MILES')).toBe(false);
    expect(body.base_asset).toEqual({ asset: 'USD', scale: 2 });
    const names = body.assets.map((a) => a.asset);
    expect(names).toEqual([...names].sort());
  });

  it("gives the session tenant's base asset", async () => {
    const res = await app.inject({ method: 'GET', url: '/console/v1/assets', headers: { cookie: `${SESSION_COOKIE}=${await cookieFor('other')}` } });
    const body = consoleAssetsResponseSchema.parse(res.json());
    expect(body.base_asset).toEqual({ asset: 'EUR', scale: 2 });
    expect(body.assets.some((a) => a.asset === 'X-MILES' && a.scale === 0)).toBe(true);
    expect(body.assets.some((a) => a.asset === 'X-PTS')).toBe(false);
  });

  it('needs a session', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/v1/assets' });
    expect(res.statusCode).toBe(401);
  });
});

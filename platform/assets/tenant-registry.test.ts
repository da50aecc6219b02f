import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { ManualClock } from '../clock.ts';
import { createTenant } from '../tenants/tenants.ts';
import { registerAsset, TenantAssetRegistry } from './tenant-registry.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'EUR');
});
afterAll(async () => db?.drop());

describe('TenantAssetRegistry', () => {
  it('sees an asset registered after its last read once its cache has expired on the injected clock', async () => {
    const clock = new ManualClock('2026-11-29T03:00:00Z');
    const registry = new TenantAssetRegistry(db.pool, clock);
    expect((await registry.forTenant('acme')).scaleOf('X-PTS')).toBeUndefined();
    expect(await registerAsset(db.pool, 'acme', 'X-PTS', 2)).toEqual({ kind: 'registered' });
    clock.advance(29);
    expect((await registry.forTenant('acme')).scaleOf('X-PTS')).toBeUndefined();
    clock.advance(1);
    expect((await registry.forTenant('acme')).scaleOf('X-PTS')).toBe(2);
    expect(await registry.registeredFor('acme')).toEqual(new Map([['X-PTS', 2]]));
  });
});

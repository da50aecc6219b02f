import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { ManualClock } from '../clock.ts';
import { SecretBox } from '../crypto/secret-box.ts';
import { createTenant } from '../tenants/tenants.ts';
import { ApiKeyStore, issueKey, revokeKey } from './api-keys.ts';

let db: TestDatabase;
let box: SecretBox;
let keyId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  box = new SecretBox(randomBytes(32));
  await createTenant(db.pool, 'acme', 'USD');
  const issued = await issueKey(db.pool, box, { tenantId: 'acme', scope: 'read', environment: 'test' });
  if (issued.kind !== 'issued') throw new Error('no key');
  keyId = issued.key.key_id;
});
afterAll(async () => db?.drop());

// A store whose statements are counted.
function countedStore() {
  const counter = { queries: 0 };
  const pool = new Proxy(db.pool, {
    get(target, property, receiver) {
      if (property === 'query') return (...args: unknown[]) => (counter.queries++, (target.query as (...a: unknown[]) => unknown)(...args));
      return Reflect.get(target, property, receiver);
    },
  });
  return { store: new ApiKeyStore(pool, box), counter };
}

describe('ApiKeyStore', () => {
  it('finds an issued key once and then from its cache', async () => {
    const { store, counter } = countedStore();
    expect((await store.find(keyId))?.tenantId).toBe('acme');
    expect((await store.find(keyId))?.scopes).toEqual(['read']);
    expect(counter.queries).toBe(1);
  });

  it('answers an id of another shape than issued ones without the database', async () => {
    const { store, counter } = countedStore();
    for (const id of ['', 'nobody', 'svc_test_XYZ', `${keyId}0`, `svc_prod_${'0'.repeat(32)}`]) expect(await store.find(id)).toBeUndefined();
    expect(counter.queries).toBe(0);
  });

  it('keeps unknown ids off the database briefly, and never lets them push a real key out', async () => {
    const { store, counter } = countedStore();
    await store.find(keyId);
    const unknown = `svc_live_${'a'.repeat(32)}`;
    expect(await store.find(unknown)).toBeUndefined();
    expect(await store.find(unknown)).toBeUndefined();
    expect(counter.queries).toBe(2);
    // A flood of unknown ids of the right shape, more than the cache holds.
    for (let i = 0; i < 10_050; i++) await store.find(`svc_live_${i.toString(16).padStart(32, '0')}`);
    const before = counter.queries;
    expect((await store.find(keyId))?.tenantId).toBe('acme');
    expect(counter.queries).toBe(before);
  });

  it('does not find a revoked key once its cache has lapsed on the service\'s clock', async () => {
    const issued = await issueKey(db.pool, box, { tenantId: 'acme', scope: 'ingest', environment: 'live' });
    if (issued.kind !== 'issued') throw new Error('no key');
    const clock = new ManualClock();
    const store = new ApiKeyStore(db.pool, box, clock);
    expect((await store.find(issued.key.key_id))?.tenantId).toBe('acme');
    // Revoked by another process: this one answers from its cache for at most 30 s.
    await revokeKey(db.pool, issued.key.key_id, clock.now());
    expect((await store.find(issued.key.key_id))?.tenantId).toBe('acme');
    clock.advance(31);
    expect(await store.find(issued.key.key_id)).toBeUndefined();
  });
});

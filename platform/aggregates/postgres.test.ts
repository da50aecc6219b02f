import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAggregateStoreContract } from './contract.ts';
import { PostgresAggregateStore } from './postgres.ts';
import { RECORDING_LOCK_NAMESPACE } from './postgres-sql.ts';
import { lockTenants } from '../postgres/tenant-locks.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';

// A database of its own, with no tenants rows at all: the store keys everything by tenant id
// and has no foreign key to tenants.
describeAggregateStoreContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return { store: new PostgresAggregateStore(db.pool), tenantId: 'tenant-a', close: () => db.drop() };
});

// What only the PostgreSQL adapter does, on one database of its own.
describe('PostgresAggregateStore', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('makes a retraction wait for a recording of its tenant still running, and then delete what it recorded', async () => {
    const store = new PostgresAggregateStore(db.pool);
    const recorder = await db.pool.connect();
    try {
      // A recording of the original, locked as record() locks and not yet committed.
      await recorder.query('BEGIN');
      await lockTenants(recorder, 'agg-lock-tenants', RECORDING_LOCK_NAMESPACE, ['tenant-r'], new Set());
      await recorder.query(
        `INSERT INTO agg_activity (tenant_id, subject_kind, subject_id, occurred_at, movement_id, direction, event_id, amount_value, amount_scale, amount_asset, base_value, cash)
         VALUES ('tenant-r', 'account', 'A1', '2026-08-20T10:00:00Z', 'original', 'in', $1, 950000, 2, 'USD', 950000, false)`,
        [randomUUID()],
      );
      let settled = false;
      const retracting = store.record([], [{ tenantId: 'tenant-r', movementId: 'original', by: 'correction' }]).then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await recorder.query('COMMIT');
      await retracting;
    } finally {
      recorder.release();
    }
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM agg_activity WHERE tenant_id = 'tenant-r'`);
    expect(rows[0].n).toBe(0);
    const retraction = await db.pool.query(`SELECT subjects FROM agg_retraction WHERE tenant_id = 'tenant-r' AND movement_id = 'original'`);
    expect(retraction.rows).toEqual([{ subjects: ['account:A1'] }]);
  });

  it('orders movement ids by their bytes whatever the database collation, as ClickHouse and the snapshots do', async () => {
    const { rows } = await db.pool.query(`SELECT collation_name FROM information_schema.columns WHERE table_name = 'agg_activity' AND column_name = 'movement_id'`);
    expect(rows).toEqual([{ collation_name: 'C' }]);
    // What a linguistic collation would put the other way round.
    const store = new PostgresAggregateStore(db.pool);
    const who = { tenantId: 'tenant-c', kind: 'account' as const, id: 'A1' };
    const at = new Date('2026-08-20T10:00:00Z');
    const activity = (movementId: string) => ({ subject: who, movementId, eventId: randomUUID(), direction: 'in' as const, occurredAt: at, amount: { value: 1n, scale: 2, asset: 'USD' }, baseValue: 1n, cash: false, counterparty: null, counterpartyCountry: null, corridor: null });
    await store.record([activity('B1'), activity('a1')]);
    expect((await store.activities(who, new Date(at.getTime() - 1), at)).map((a) => a.movementId)).toEqual(['a1', 'B1']);
  });
});

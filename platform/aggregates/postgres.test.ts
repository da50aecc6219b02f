import { describeAggregateStoreContract } from './contract.ts';
import { PostgresAggregateStore } from './postgres.ts';
import { createTestDatabase } from '../../test/support/test-database.ts';

// A database of its own, with no tenants rows at all: the store keys everything by tenant id
// and has no foreign key to tenants.
describeAggregateStoreContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return { store: new PostgresAggregateStore(db.pool), tenantId: 'tenant-a', close: () => db.drop() };
});

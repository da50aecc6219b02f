import { describeBusContract } from './contract.test-kit.ts';
import { PostgresLogBus } from './postgres-log.ts';

// The embedded log keeps the whole contract (retry and dead-letter topics are Kafka's only: the
// embedded log retries a rejected batch in place for as long as it takes).
describeBusContract('PostgreSQL log', async ({ pool, errors }) => ({
  bus: new PostgresLogBus(pool, { onError: (error) => errors.push(error) }),
  settle: async () => {},
  close: async () => {},
}));

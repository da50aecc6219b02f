// An API process's tallies reach PostgreSQL every few seconds, and once more when it stops.
import { every } from '../../platform/periodic.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { ConformanceTally } from './tally.ts';
import { addTallies } from './store.ts';

const FLUSH_EVERY_MS = 5_000;

export function flushTallies(tally: ConformanceTally, pool: Pool, onError: (error: unknown) => void): { stop: () => Promise<void> } {
  const flush = async () => {
    const rows = tally.take();
    try {
      await addTallies(pool, rows);
    } catch (error) {
      // Kept for the next flush: a database that is briefly unavailable loses no counts.
      tally.restore(rows);
      throw error;
    }
  };
  const periodic = every(FLUSH_EVERY_MS, flush, onError);
  return {
    stop: async () => {
      await periodic.stop();
      await flush().catch(onError);
    },
  };
}

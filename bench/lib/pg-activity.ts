import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';

// What a service's database connections were doing over a run, from pg_stat_activity: to show
// where the time goes when the service falls short (waiting on WAL flushes, on locks, or idle).
// The service's connections are told from the bench's own by their application_name.

export interface Activity {
  samples: number;
  // What a connection was doing ("idle", "active claim (waiting on IO:WalSync)") → mean count.
  mean: Map<string, number>;
}

// Every intervalMs, how many of the connections of `application` were in each state (active in
// which statement, waiting on what), summed over the samples; stop() gives the means.
// statementKind: an SQL expression over pg_stat_activity's `query` that names the statement (a
// CASE on how its text begins, say).
export function sampleActivity(pool: pg.Pool, application: string, statementKind: string, intervalMs: number): { stop: () => Promise<Activity> } {
  const totals = new Map<string, number>();
  let samples = 0;
  let stopping = false;
  let failure: unknown;
  const loop = (async () => {
    while (!stopping) {
      const { rows } = await pool.query<{ what: string; n: number }>(
        `SELECT CASE WHEN state = 'active' THEN 'active ' || ${statementKind} || coalesce(' (waiting on ' || wait_event_type || ':' || wait_event || ')', '')
                     ELSE state END AS what, count(*)::int AS n
           FROM pg_stat_activity WHERE application_name = $1 GROUP BY 1`,
        [application],
      );
      samples++;
      for (const row of rows) totals.set(row.what, (totals.get(row.what) ?? 0) + row.n);
      await sleep(intervalMs);
    }
  })().catch((error: unknown) => {
    // Kept for stop(): a rejection nobody awaits yet would end the process before the cleanup.
    failure = error;
  });
  return {
    stop: async () => {
      stopping = true;
      await loop;
      if (failure !== undefined) throw failure;
      return { samples, mean: new Map([...totals].map(([what, n]) => [what, n / Math.max(1, samples)])) };
    },
  };
}

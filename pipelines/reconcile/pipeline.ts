// pipelines/reconcile: canonical change records in; a reconciliation of the same tenant and asset
// whose period holds a changed movement is marked stale, and stale ones are compared again on a
// short timer, a bounded number per tick, so a slow comparison never holds the bus back. Marking
// is idempotent, and comparing again appends nothing when nothing changed.
import type { Clock } from '../../platform/clock.ts';
import type { Bus, BusRecord } from '../../platform/bus/port.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { RECONCILE } from '../groups.ts';
import { Reconciliations } from './reconciliations.ts';

const RECHECK_EVERY_MS = 2000;
const RECHECKS_PER_TICK = 50;

export async function startReconcilePipeline(options: { bus: Bus; pool: Pool; clock: Clock; onError?: (error: unknown) => void }): Promise<{ stop: () => Promise<void> }> {
  const reconciliations = new Reconciliations(options.pool);
  const handle = async (records: BusRecord[]) => {
    const moved = records.flatMap((record) => {
      const change = JSON.parse(record.value.toString('utf8')) as CanonicalChange;
      return change.object === 'movement' ? [{ tenant: change.tenant_id, asset: change.amount.asset, at: change.occurred_at }] : [];
    });
    if (moved.length > 0) await markStale(options.pool, moved);
  };
  const consumer = await options.bus.consume({ ...RECONCILE, handle });
  let ticking: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    ticking = recheckStale(reconciliations, options.clock, RECHECKS_PER_TICK).catch((error) => options.onError?.(error));
  }, RECHECK_EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await consumer.stop();
      await ticking;
    },
  };
}

// Marks the reconciliations (not corrected since) whose tenant, asset and period hold a movement.
export async function markStale(pool: Pool, moved: Array<{ tenant: string; asset: string; at: string }>): Promise<void> {
  await pool.query(
    `UPDATE reconciliations r SET stale = true
       FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(tenant_id, asset, at)
      WHERE r.tenant_id = u.tenant_id AND r.asset = u.asset AND NOT r.stale
        AND u.at >= r.period_from AND u.at <= r.period_to
        AND NOT EXISTS (SELECT 1 FROM reconciliations c WHERE c.corrects = r.reconciliation_id)`,
    [moved.map((m) => m.tenant), moved.map((m) => m.asset), moved.map((m) => m.at)],
  );
}

// Compares stale reconciliations again, one transaction each, at most `max`. Returns how many.
export async function recheckStale(reconciliations: Reconciliations, clock: Clock, max: number): Promise<number> {
  let done = 0;
  while (done < max && (await reconciliations.recheckNextStale(clock.now()))) done += 1;
  return done;
}

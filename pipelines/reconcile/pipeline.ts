// pipelines/reconcile: canonical change records in; every reconciliation whose tenant and period
// hold a changed movement is compared again (a late movement can make or break a match). Marking
// and comparing are idempotent, so a redelivered batch only compares again and appends nothing.
import type { Clock } from '../../platform/clock.ts';
import type { Bus, BusRecord } from '../../platform/bus/port.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { RECONCILE } from '../groups.ts';
import { Reconciliations, type ReconciliationRow } from './reconciliations.ts';

const RECHECK_BATCH = 50;

export async function startReconcilePipeline(options: { bus: Bus; pool: Pool; clock: Clock }): Promise<{ stop: () => Promise<void> }> {
  const reconciliations = new Reconciliations(options.pool);
  const handle = async (records: BusRecord[]) => {
    const moved = records.flatMap((record) => {
      const change = JSON.parse(record.value.toString('utf8')) as CanonicalChange;
      return change.object === 'movement' ? [{ tenant: change.tenant_id, at: change.occurred_at }] : [];
    });
    if (moved.length === 0) return;
    await markStale(options.pool, moved);
    await recheckStale(options.pool, reconciliations, options.clock.now());
  };
  const consumer = await options.bus.consume({ ...RECONCILE, handle });
  return { stop: () => consumer.stop() };
}

export async function markStale(pool: Pool, moved: Array<{ tenant: string; at: string }>): Promise<void> {
  await pool.query(
    `UPDATE reconciliations r SET stale = true
       FROM unnest($1::text[], $2::timestamptz[]) AS u(tenant_id, at)
      WHERE r.tenant_id = u.tenant_id AND NOT r.stale
        AND u.at >= r.period_from AND u.at <= r.period_to`,
    [moved.map((m) => m.tenant), moved.map((m) => m.at)],
  );
}

// Compares the stale reconciliations again, oldest comparison first, until none is left.
export async function recheckStale(pool: Pool, reconciliations: Reconciliations, now: Date): Promise<number> {
  let done = 0;
  for (;;) {
    const { rows } = await pool.query<ReconciliationRow>(
      `UPDATE reconciliations SET stale = false
        WHERE reconciliation_id IN (SELECT reconciliation_id FROM reconciliations WHERE stale ORDER BY checked_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING tenant_id, reconciliation_id, subject_kind, subject_id, direction, asset, scale, period_from, from_inclusive, period_to, to_inclusive,
                  declared_count, declared_sum::text AS declared_sum, declared_statuses, corrects, created_at, status, checked_at`,
      [RECHECK_BATCH],
    );
    for (const row of rows) await reconciliations.recheck(row, now);
    done += rows.length;
    if (rows.length < RECHECK_BATCH) return done;
  }
}

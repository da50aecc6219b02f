// bench/stages: what an event's stage entry costs a pipeline (docs/decisions/0028).
//
//   npm run bench:stages
//
// On a fresh embedded PostgreSQL: BENCH_BATCHES batches (default 200) of BENCH_BATCH_SIZE
// movements (default 500, a partition's batch), each applied to the PostgreSQL graph store (the
// baseline: the graph pipeline's own work on a batch), then given its `graph` stage entries
// (appendStageOnce, one set-based statement). The two alternate batch by batch, so load on the
// machine falls on both alike. Printed: milliseconds and PostgreSQL CPU microseconds per event of
// each, and the stage entry's cost as a share of the store's; then the same stage entries written
// again (a redelivery), which must add no row.
import { randomUUID } from 'node:crypto';
import { PostgresGraphStore } from '../platform/graph/postgres/store.ts';
import type { GraphChange } from '../platform/graph/port.ts';
import { appendStageOnce } from '../platform/inbox/event-stages.ts';
import { migratedPostgres, pgMeasure } from './lib/bench-postgres.ts';
import { positiveInteger } from './lib/options.ts';
import { runBench } from './lib/teardown.ts';

const BATCHES = positiveInteger('BENCH_BATCHES', 200);
const BATCH_SIZE = positiveInteger('BENCH_BATCH_SIZE', 500);
const ACCOUNTS = 20_000;
const TENANT = 'bench';

const log = (line: string) => process.stderr.write(`${line}\n`);

function batch(n: number): GraphChange[] {
  const at = new Date(Date.UTC(2026, 0, 1) + n * 60_000);
  return Array.from({ length: BATCH_SIZE }, (_, i) => {
    const k = n * BATCH_SIZE + i;
    return {
      tenantId: TENANT,
      eventId: randomUUID(),
      occurredAt: at,
      transfer: { movementId: `M${k}`, from: `A${(k * 7919) % ACCOUNTS}`, to: `A${(k * 104_729 + 13) % ACCOUNTS}`, amount: BigInt(1000 + (k % 997)) },
    };
  });
}

await runBench('stages', log, async (teardown) => {
  const { pool, pgDir } = await migratedPostgres(teardown, 'stages');
  const store = new PostgresGraphStore(pool);

  const spent = { store: { ms: 0, cpu: 0 }, stages: { ms: 0, cpu: 0 } };
  const measure = pgMeasure(pgDir);
  const written: GraphChange[][] = [];
  for (let n = 0; n < BATCHES; n++) {
    const changes = batch(n);
    written.push(changes);
    await measure(spent.store, () => store.apply(changes));
    const entry = { at: new Date(), worker: `graph:${process.pid}`, durationMs: 1 };
    await measure(spent.stages, () => appendStageOnce(pool, 'graph', changes.map((c) => ({ tenantId: c.tenantId, eventId: c.eventId })), entry));
  }
  const events = BATCHES * BATCH_SIZE;
  const perEvent = (s: { ms: number; cpu: number }) => `${((s.ms * 1000) / events).toFixed(1)} µs wall, ${((s.cpu * 1e6) / events).toFixed(1)} µs PostgreSQL CPU per event`;
  log(`${events} events in ${BATCHES} batches of ${BATCH_SIZE}`);
  log(`graph store apply (baseline): ${perEvent(spent.store)}`);
  log(`stage entries:                ${perEvent(spent.stages)}`);
  log(`stage entries / store apply:  ${(spent.stages.ms / spent.store.ms).toFixed(3)} wall, ${(spent.stages.cpu / spent.store.cpu).toFixed(3)} PostgreSQL CPU`);

  const again = { ms: 0, cpu: 0 };
  for (const changes of written.slice(0, 20)) {
    await measure(again, () => appendStageOnce(pool, 'graph', changes.map((c) => ({ tenantId: c.tenantId, eventId: c.eventId })), { at: new Date(), worker: 'again', durationMs: 1 }));
  }
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM event_stages WHERE stage = 'graph'`);
  log(`redelivered 20 batches: ${((again.ms * 1000) / (20 * BATCH_SIZE)).toFixed(1)} µs wall per event; stage rows ${rows[0]!.n} for ${events} events${rows[0]!.n === events ? ' (none added)' : ' (DUPLICATES)'}`);
  if (rows[0]!.n !== events) throw new Error('a redelivery added stage entries');
});

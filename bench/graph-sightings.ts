// bench/graph-sightings: what a movement's sightings (its device, ip and instrument) cost the graph
// store, and what a windowed read of a party's observed edges costs (docs/decisions/0079).
//
//   npx tsx bench/graph-sightings.ts
//
// On a fresh embedded PostgreSQL: BENCH_BATCHES pairs of batches (default 100) of BENCH_BATCH_SIZE
// movements (default 500, a partition's batch) between 20,000 accounts. The baseline batch is
// transfers alone; the measured one is transfers that each also saw a device and an ip (of 2,000
// each, shared by the payer's party) and an instrument. The two alternate batch by batch, so load
// on the machine falls on both alike. Printed: milliseconds and PostgreSQL CPU microseconds per
// movement of each, and their ratio. Then BENCH_READS parties (default 300) that paid in the
// sighted batches are read at depth 1 over shares and uses edges: without a window (the baseline)
// and within a window of a tenth of the hours the batches span, alternating; printed: milliseconds
// and PostgreSQL CPU per read of each, and their ratio.
import { randomUUID } from 'node:crypto';
import { PostgresGraphStore } from '../platform/graph/postgres/store.ts';
import type { GraphChange } from '../platform/graph/port.ts';
import { migratedPostgres, pgMeasure } from './lib/bench-postgres.ts';
import { positiveInteger } from './lib/options.ts';
import { runBench } from './lib/teardown.ts';

const BATCHES = positiveInteger('BENCH_BATCHES', 100);
const BATCH_SIZE = positiveInteger('BENCH_BATCH_SIZE', 500);
const READS = positiveInteger('BENCH_READS', 300);
const ACCOUNTS = 20_000;
const DEVICES = 2_000;
const TENANT = 'bench';
const START = Date.UTC(2026, 0, 1);

const log = (line: string) => process.stderr.write(`${line}\n`);

// Batch n of one kind: movement k pays from account A<payer> (held by party P<payer>).
function batch(n: number, sighted: boolean): GraphChange[] {
  const at = new Date(START + n * 3_600_000);
  return Array.from({ length: BATCH_SIZE }, (_, i) => {
    const k = (n * 2 + (sighted ? 1 : 0)) * BATCH_SIZE + i;
    const payer = (k * 7919) % ACCOUNTS;
    const movementId = `M${k}`;
    const change: GraphChange = {
      tenantId: TENANT,
      eventId: randomUUID(),
      occurredAt: at,
      movement: movementId,
      transfer: { movementId, from: `A${payer}`, to: `A${(k * 104_729 + 13) % ACCOUNTS}`, amount: BigInt(1000 + (k % 997)) },
    };
    if (!sighted) return change;
    const party = { kind: 'party' as const, key: `P${payer}` };
    return {
      ...change,
      observed: [
        { type: 'uses', from: { kind: 'account', key: `A${payer}` }, to: { kind: 'instrument', key: `I${payer}` } },
        { type: 'shares', from: party, to: { kind: 'device', key: `D${payer % DEVICES}` } },
        { type: 'shares', from: party, to: { kind: 'ip', key: `IP${(payer * 31) % DEVICES}` } },
      ],
    };
  });
}

await runBench('graph-sightings', log, async (teardown) => {
  const { pool, pgDir } = await migratedPostgres(teardown, 'sightings');
  const store = new PostgresGraphStore(pool);

  const spent = { transfers: { ms: 0, cpu: 0 }, sighted: { ms: 0, cpu: 0 } };
  const measure = pgMeasure(pgDir);
  for (let n = 0; n < BATCHES; n++) {
    await measure(spent.transfers, () => store.apply(batch(n, false)));
    await measure(spent.sighted, () => store.apply(batch(n, true)));
  }
  const movements = BATCHES * BATCH_SIZE;
  const perMovement = (s: { ms: number; cpu: number }) =>
    `${((s.ms * 1000) / movements).toFixed(1)} µs wall, ${((s.cpu * 1e6) / movements).toFixed(1)} µs PostgreSQL CPU per movement`;
  log(`${movements} movements of each kind in ${BATCHES} batches of ${BATCH_SIZE}`);
  log(`transfers alone (baseline):       ${perMovement(spent.transfers)}`);
  log(`transfers with three sightings:   ${perMovement(spent.sighted)}`);
  log(`with sightings / baseline:        ${(spent.sighted.ms / spent.transfers.ms).toFixed(3)} wall, ${(spent.sighted.cpu / spent.transfers.cpu).toFixed(3)} PostgreSQL CPU`);

  await pool.query('ANALYZE');
  const reads = { all: { ms: 0, cpu: 0 }, windowed: { ms: 0, cpu: 0 } };
  // Batch n is at hour n: a window of a tenth of them, at a different start for each read. Each
  // sighted party paid in five batches, BATCHES / 5 hours apart.
  const windowHours = Math.max(1, Math.floor(BATCHES / 10));
  const edges = { all: 0, windowed: 0 };
  for (let r = 0; r < READS; r++) {
    // The payer of a sighted movement k (see batch).
    const k = (2 * ((r * 37) % BATCHES) + 1) * BATCH_SIZE + ((r * 101) % BATCH_SIZE);
    const party = { kind: 'party' as const, key: `P${(k * 7919) % ACCOUNTS}` };
    const options = { depth: 1, nodeCap: 200 };
    const since = new Date(START + ((r * 13 + 7) % Math.max(1, BATCHES - windowHours)) * 3_600_000);
    const filter = { types: ['shares' as const, 'uses' as const] };
    await measure(reads.all, async () => {
      edges.all += (await store.egoNetwork(TENANT, party, { ...options, filter })).edges.length;
    });
    await measure(reads.windowed, async () => {
      edges.windowed += (await store.egoNetwork(TENANT, party, { ...options, filter: { ...filter, since, until: new Date(since.getTime() + windowHours * 3_600_000) } })).edges.length;
    });
  }
  const perRead = (s: { ms: number; cpu: number }) => `${(s.ms / READS).toFixed(2)} ms wall, ${((s.cpu * 1e6) / READS).toFixed(0)} µs PostgreSQL CPU per read`;
  log(`${READS} parties read at depth 1 over shares and uses edges (${edges.all} and ${edges.windowed} edges answered)`);
  log(`without a window (baseline):      ${perRead(reads.all)}`);
  log(`${`within a window of ${windowHours} h:`.padEnd(34)}${perRead(reads.windowed)}`);
  log(`windowed / baseline:              ${(reads.windowed.ms / reads.all.ms).toFixed(3)} wall`);
});

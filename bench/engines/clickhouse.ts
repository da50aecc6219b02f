import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ClickHouseAggregateStore, createClickHouseClient } from '../../platform/aggregates/clickhouse.ts';
import { identifier, parseTabSeparated } from '../../platform/aggregates/clickhouse-escape.ts';
import type { Activity, AggregateStore, Subject, ThresholdBand } from '../../platform/aggregates/port.ts';
import { PostgresAggregateStore } from '../../platform/aggregates/postgres.ts';
import { startEmbeddedPostgres } from '../../platform/postgres/embedded.ts';
import { migrate } from '../../platform/postgres/migrate.ts';
import { createPool } from '../../platform/postgres/pool.ts';
import { startLocalEngines } from '../../platform/local-engines/index.ts';
import { watchEngineMemory, type EngineMemory, type EngineMemoryWatch } from '../lib/engine-memory.ts';
import { percentile } from '../lib/stats.ts';

// The ClickHouse aggregate store against the PostgreSQL one on the same data. A function, not a
// CLI (bench/engines.ts runs it and prints the figures).
//
//   Data. `subjects` accounts of tenant `bench`, each with `activitiesPerSubject` activities
//   drawn by a seeded PRNG (the same data every run) over the 120 days before AT: both
//   directions, amounts round and not, one in eight unpriced, one in six cash, 40 counterparties
//   per subject (some without), three countries and two corridors. The same activities are
//   recorded into a fresh embedded PostgreSQL (migrated; PostgresAggregateStore on a pool of 4)
//   and into a fresh database of the ClickHouse server (CLICKHOUSE_URL / options.clickhouseUrl,
//   else a private server started by platform/local-engines: Debian's 18.16), in batches of 2 000.
//   Parts are left as the load made them (no OPTIMIZE): reads dedup at query time as they would.
//   Reads. After a warm-up of 10 subjects, `rounds` subjects drawn by the PRNG; for each, one
//   after the other and on each store in turn: windows (all five, two threshold bands), the 90-day
//   baseline, and the snapshots of a batch of `snapshotBatch` subjects. Each call is timed from
//   the call to its answer. The answers of both stores are compared for the first 20 rounds
//   (a difference fails the bench: the figures would not be of the same work).
//   Figures. p50 and p95 (ms, nearest rank) over all reads of each store and per read; ratio =
//   ClickHouse p95 / PostgreSQL p95 (below 1: ClickHouse faster); version = SELECT version().
//   Memory: the peak resident memory of the ClickHouse server when it was started here
//   (bench/lib/engine-memory.ts), from its start to the end of the reads.

export interface ClickHouseBenchOptions {
  // Small data and few rounds (a smoke run, well under a minute).
  quick?: boolean;
  // The server to measure; default CLICKHOUSE_URL, else a private server started here.
  clickhouseUrl?: string;
  subjects?: number;
  activitiesPerSubject?: number;
  rounds?: number;
  snapshotBatch?: number;
  seed?: number;
  log?: (line: string) => void;
}

interface Latency {
  p50: number;
  p95: number;
}

type ReadName = 'windows' | 'baseline' | 'snapshots';

export interface ClickHouseBenchResult {
  postgres: Latency;
  clickhouse: Latency;
  ratio: number;
  version: string;
  reads: Record<ReadName, { postgres: Latency; clickhouse: Latency; ratio: number }>;
  subjects: number;
  activities: number;
  rounds: number;
  // Wall time of recording every activity, per store.
  loadMs: { postgres: number; clickhouse: number };
  // Active parts of agg_activity in ClickHouse when the reads ran.
  clickhouseParts: number;
  // The server started for the run (none when CLICKHOUSE_URL was given).
  engines: EngineMemory[];
}

const AT = new Date('2026-08-20T12:00:00.000Z');
const DAY = 86_400_000;
const TENANT = 'bench';
const BATCH = 2_000;
const THRESHOLDS: ThresholdBand[] = [
  { threshold: 1_000_000n, margin: 100_000n },
  { threshold: 300_000n, margin: 10_000n },
];

export async function benchClickHouseAggregates(options: ClickHouseBenchOptions = {}): Promise<ClickHouseBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const quick = options.quick ?? false;
  const subjects = options.subjects ?? (quick ? 100 : 2_000);
  const perSubject = options.activitiesPerSubject ?? (quick ? 80 : 250);
  const rounds = Math.min(options.rounds ?? (quick ? 60 : 500), subjects);
  const snapshotBatch = options.snapshotBatch ?? (quick ? 10 : 50);
  const random = prng(options.seed ?? 20_260_820);

  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    // PostgreSQL: a fresh embedded server on a directory of its own (reachable by the postgres
    // user the server runs as when this runs as root).
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-engines-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await chmod(dataDir, 0o755);
    log('engines/clickhouse: starting PostgreSQL...');
    const server = await startEmbeddedPostgres({ dataDir, port: 0 });
    cleanups.push(() => server.stop());
    const pool = createPool(server.url(), 4);
    cleanups.push(() => pool.end());
    await migrate(pool);
    const postgres = new PostgresAggregateStore(pool);

    // ClickHouse: the server given, or a private one.
    let url = options.clickhouseUrl ?? process.env.CLICKHOUSE_URL;
    let memory: EngineMemoryWatch | undefined;
    if (!url) {
      // Installs Debian's clickhouse-server when missing (as root); its data in the bench's directory.
      const local = await startLocalEngines({ dataDir: join(dataDir, 'local'), engines: ['clickhouse'], detached: false, log });
      cleanups.push(() => local.stop({ graceMs: 5_000 }));
      const watch = watchEngineMemory(local.engines);
      memory = watch;
      // Before the server stops (cleanups run newest first), also when the bench fails.
      cleanups.push(async () => watch.stop());
      url = local.env.CLICKHOUSE_URL!;
    }
    const client = createClickHouseClient({ url, username: process.env.CLICKHOUSE_USER, password: process.env.CLICKHOUSE_PASSWORD });
    cleanups.push(() => client.close());
    const database = `svc_bench_${randomBytes(6).toString('hex')}`;
    cleanups.push(() => client.command({ query: `DROP DATABASE IF EXISTS ${identifier(database).text}` }));
    const clickhouse = new ClickHouseAggregateStore(client, database);
    await clickhouse.migrate();
    const version = parseTabSeparated(await (await client.query({ query: 'SELECT version() AS v', format: 'TabSeparatedWithNames' })).text())[0]!.v!;

    // The data, then the same batches into each store.
    const who = Array.from({ length: subjects }, (_, i): Subject => ({ tenantId: TENANT, kind: 'account', id: `acct-${i}` }));
    const activities = who.flatMap((subject, i) => history(subject, i, perSubject, random));
    log(`engines/clickhouse: recording ${activities.length} activities of ${subjects} subjects into PostgreSQL and ClickHouse ${version}...`);
    const loadMs = { postgres: await load(postgres, activities), clickhouse: await load(clickhouse, activities) };
    const parts = parseTabSeparated(
      await (
        await client.query({
          query: `SELECT count() AS n FROM system.parts WHERE database = '${identifier(database).text}' AND table = 'agg_activity' AND active`,
          format: 'TabSeparatedWithNames',
        })
      ).text(),
    );

    const reads: Record<ReadName, (store: AggregateStore, subject: Subject, batch: Subject[]) => Promise<unknown>> = {
      windows: (store, subject) => store.windows(subject, AT, { thresholds: THRESHOLDS }),
      baseline: (store, subject) => store.baseline(subject, AT),
      snapshots: (store, _, batch) => store.snapshots(batch.map((s) => ({ subject: s, at: AT })), 10_000),
    };
    const names = Object.keys(reads) as ReadName[];
    const timings = { postgres: emptyTimings(names), clickhouse: emptyTimings(names) };
    const stores = { postgres, clickhouse } as const;
    const order = shuffle(who.map((_, i) => i), random);
    const batchOf = (start: number) => Array.from({ length: snapshotBatch }, (_, j) => who[order[(start + j) % subjects]!]!);
    log(`engines/clickhouse: warm-up, then ${rounds} rounds of ${names.join(', ')}...`);
    for (let round = -10; round < rounds; round++) {
      const index = round < 0 ? order[subjects - 1 + round]! : order[round]!;
      const subject = who[index]!;
      const batch = batchOf(round + 10);
      for (const name of names) {
        const answers: Record<string, unknown> = {};
        for (const side of ['postgres', 'clickhouse'] as const) {
          const t0 = performance.now();
          answers[side] = await reads[name](stores[side], subject, batch);
          const ms = performance.now() - t0;
          if (round >= 0) timings[side][name].push(ms);
        }
        if (round >= 0 && round < 20) compare(name, subject, answers.postgres, answers.clickhouse);
      }
    }

    const all = (side: 'postgres' | 'clickhouse') => latency(names.flatMap((name) => timings[side][name]));
    const pg = all('postgres');
    const ch = all('clickhouse');
    return {
      postgres: pg,
      clickhouse: ch,
      ratio: ch.p95 / pg.p95,
      version,
      reads: Object.fromEntries(
        names.map((name) => {
          const p = latency(timings.postgres[name]);
          const c = latency(timings.clickhouse[name]);
          return [name, { postgres: p, clickhouse: c, ratio: c.p95 / p.p95 }];
        }),
      ) as ClickHouseBenchResult['reads'],
      subjects,
      activities: activities.length,
      rounds,
      loadMs,
      clickhouseParts: Number(parts[0]?.n ?? 0),
      engines: memory?.stop() ?? [],
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => log(`engines/clickhouse cleanup: ${String(error)}`));
  }
}

async function load(store: AggregateStore, activities: Activity[]): Promise<number> {
  const t0 = performance.now();
  let added = 0;
  for (let i = 0; i < activities.length; i += BATCH) added += await store.record(activities.slice(i, i + BATCH));
  if (added !== activities.length) throw new Error(`recorded ${added} of ${activities.length} activities`);
  return performance.now() - t0;
}

function history(subject: Subject, index: number, count: number, random: (n: number) => number): Activity[] {
  return Array.from({ length: count }, (_, i): Activity => {
    const base = random(8) === 0 ? null : BigInt([100_00, 990_00, 1_234, 50_00, 999_99, 295_000, 950_000][random(7)]! + (i % 3 === 0 ? 0 : random(500)));
    return {
      subject,
      movementId: `bench-${index}-${i}`,
      eventId: randomUUID(),
      direction: random(2) === 0 ? 'in' : 'out',
      occurredAt: new Date(AT.getTime() - random(120 * DAY) + (random(20) === 0 ? DAY : 0)),
      amount: { value: base ?? 5_000n, scale: random(4) === 0 ? 0 : 2, asset: random(3) === 0 ? 'EUR' : 'USD' },
      baseValue: base,
      cash: random(6) === 0,
      counterparty: random(8) === 0 ? null : `party:C${random(40)}`,
      counterpartyCountry: random(3) === 0 ? null : ['GB', 'NG', 'US'][random(3)]!,
      corridor: random(4) === 0 ? null : ['GB>NG', 'US>GB'][random(2)]!,
    };
  });
}

// Both stores must give the same answer: maps and dates compared by value.
function compare(name: ReadName, subject: Subject, postgres: unknown, clickhouse: unknown): void {
  const text = (value: unknown) =>
    JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Map ? [...v.entries()].sort() : typeof v === 'number' ? Number(v.toPrecision(12)) : v));
  if (text(postgres) !== text(clickhouse)) throw new Error(`${name} of ${subject.id}: PostgreSQL and ClickHouse disagree`);
}

function emptyTimings(names: ReadName[]): Record<ReadName, number[]> {
  return Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<ReadName, number[]>;
}

function latency(values: number[]): Latency {
  const sorted = Float64Array.from(values).sort();
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return { p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)) };
}

function prng(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return Math.floor((state / 4_294_967_296) * n);
  };
}

function shuffle<T>(items: T[], random: (n: number) => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

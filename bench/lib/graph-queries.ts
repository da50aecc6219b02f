import { resolve } from 'node:path';
import { dataset } from '../../test/support/datasets.ts';

// The graph reads bench/graph.ts measures on PostgreSQL and bench/engines/neo4j.ts measures on
// both graph stores: one definition of the data set, the query shapes and the accounts asked
// about, so the figures of the two benches are of the same work.

// BENCH_DATASET_DIR, else IBM AMLSim 20K_fanin200 where the shared data sets are
// (test/support/datasets.ts: SVC_DATASETS_DIR, else shared/datasets beside the checkout).
export function amlsimDatasetDir(): string {
  return resolve(process.env.BENCH_DATASET_DIR || dataset('ibm_amlsim', '20K_fanin200'));
}

// Every AMLSim movement falls in this window (its steps are days from 2026-01-01).
export const SINCE = new Date('2026-01-01T00:00:00Z');
export const UNTIL = new Date('2026-06-01T00:00:00Z');
export const EGO = { depth: 2, nodeCap: 500 };
export const CYCLES = { since: SINCE, until: UNTIL, minLength: 2, maxLength: 6, tolerance: 0.1, limit: 50 };
export const FAN_IN = { since: SINCE, until: UNTIL, limit: 100 };
// Accounts queried once, untimed, before the measured ones: plans, caches and JIT warm.
export const WARMUP_QUERIES = 20;
const QUERY_SEED = 0x6a09e667;

// mulberry32: a small seeded PRNG, so every run asks about the same accounts.
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// `count` distinct nodes drawn with the fixed seed: the warm-up ones first, then the measured ones.
export function drawAccounts(nodes: number[], count: number): number[] {
  if (count > nodes.length) throw new Error(`cannot draw ${count} distinct accounts from ${nodes.length}`);
  const random = prng(QUERY_SEED);
  const drawn = new Set<number>();
  while (drawn.size < count) drawn.add(nodes[Math.floor(random() * nodes.length)]!);
  return [...drawn];
}

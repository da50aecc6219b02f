// An AMLSim data set taken in by a fresh service (API, canonical, graph and aggregates pipelines on
// its own embedded PostgreSQL; no detection pipeline: the learned model is judged by replay), with
// its labels and, per account, the instants a detector would judge it at. Used by the model
// evaluation (eval-model.ts) and the default model's training script (train-default-model.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import type { DetectionStores } from '../../services/detection/framework/context.ts';
import { accountItem, accountKey, loadDataset, movementItem, partyItem } from './amlsim.ts';
import type { BenchService } from './bench-service.ts';
import { startIngestedWorld } from './ingested-world.ts';
import type { Log, Teardown } from './teardown.ts';

const DAY_MS = 86_400_000;

export interface AmlsimWorld {
  name: string;
  dir: string;
  service: BenchService;
  pool: pg.Pool;
  stores: DetectionStores;
  // Account external id → labelled fraud.
  labels: Map<string, boolean>;
  // Account external id → the instant of its last movement on each day it had one, in time order:
  // where the pipeline, which judges an account at the latest movement of each batch touching it,
  // would judge it at least once a day.
  instants: Map<string, Date[]>;
  movements: number;
}

async function labelsOf(dir: string): Promise<Map<string, boolean>> {
  const labels = new Map<string, boolean>();
  for (const line of (await readFile(join(dir, 'nodes.csv'), 'utf8')).split(/\r?\n/).slice(1)) {
    const [node, fraud] = line.split(',');
    if (node) labels.set(accountKey(Number(node)), fraud === '1');
  }
  return labels;
}

export async function startAmlsimWorld(teardown: Teardown, log: Log, dir: string, movementLimit: number): Promise<AmlsimWorld> {
  const name = dir.split('/').filter(Boolean).pop()!;
  const dataset = await loadDataset(dir, movementLimit);
  const entities = dataset.nodes.flatMap((n) => [partyItem(n), accountItem(n)]);
  const { service, pool, stores } = await startIngestedWorld(teardown, log, name, entities, dataset.transactions.map(movementItem));

  const lastOfDay = new Map<string, Map<number, number>>();
  const note = (node: number, at: number) => {
    const account = accountKey(node);
    let days = lastOfDay.get(account);
    if (!days) lastOfDay.set(account, (days = new Map()));
    const day = Math.floor(at / DAY_MS);
    days.set(day, Math.max(days.get(day) ?? 0, at));
  };
  for (const t of dataset.transactions) {
    note(t.source, t.occurredAtMs);
    note(t.target, t.occurredAtMs);
  }
  const instants = new Map([...lastOfDay].map(([account, days]) => [account, [...days.values()].sort((a, b) => a - b).map((ms) => new Date(ms))]));
  return { name, dir, service, pool, stores, labels: await labelsOf(dir), instants, movements: dataset.transactions.length };
}

// bench/eval-model: the learned detector's quality on the AMLSim dev sets.
//
//   npm run eval:model -- --cross       train on one set, judge every account of the other; both ways
//   npm run eval:model -- --labelled    per set: labels for 60 % of the accounts, judge the other 40 %
//   (both when neither is given)
//
// Each set goes into a fresh service of its own (API, canonical, graph and aggregates pipelines).
// Training is the operator's command, `svc models train --tenant bench --labels <file.csv> --json`,
// run against that service. A model trained on one set is stored for the other set's tenant as its
// document (the same model, registered where it judges). Judging replays each account through the
// detection framework at the last movement of each day it was active (bench/lib/model-replay.ts);
// an account is flagged when any of those evaluations is a hit. Precision, recall and F1 are over
// the judged accounts against the sets' isFraud labels. Labels carry no as_of: a bank's account-level
// knowledge (confirmed reports, cleared customers), taken at each account's latest activity.
// BENCH_MOVEMENTS keeps only the first movements of each set (for a quick check).
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { modelDocumentSchema } from '../services/detection/models/model.ts';
import { saveModel } from '../services/detection/models/store.ts';
import { startAmlsimWorld, type AmlsimWorld } from './lib/amlsim-world.ts';
import { svc, TENANT } from './lib/bench-service.ts';
import { replayModel, quality } from './lib/model-replay.ts';
import { positiveInteger } from './lib/options.ts';
import { runBench } from './lib/teardown.ts';

const MOVEMENT_LIMIT = positiveInteger('BENCH_MOVEMENTS', Number.MAX_SAFE_INTEGER);
const SETS = ['../shared/datasets/ibm_amlsim/20K_fanin200', '../shared/datasets/ibm_amlsim/20K_cycle200'];
// The share of accounts whose labels are given in labelled mode.
const LABELLED_SHARE = 0.6;

const started = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s] ${line}\n`);
};

// A fixed, label-blind choice of accounts (a multiplicative hash of the account's number), the
// same on every run.
const inLabelledPart = (account: string): boolean => ((Number(account.replace(/\D/g, '')) * 2654435761) >>> 0) % 100 < LABELLED_SHARE * 100;

interface Trained {
  id: string;
  seconds: number;
  held_out: { precision: number; recall: number; f1: number; pr_auc: number };
}

async function train(world: AmlsimWorld, accounts: string[]): Promise<Trained> {
  const file = join(world.service.dataDir, `labels-${accounts.length}.csv`);
  await writeFile(file, ['kind,external_id,label', ...accounts.map((a) => `account,${a},${world.labels.get(a) ? 1 : 0}`)].join('\n'));
  const t0 = performance.now();
  const out = await svc(world.service.env, ['models', 'train', '--tenant', TENANT, '--labels', file, '--json']);
  const model = JSON.parse(out.slice(out.indexOf('{'))) as Trained & { training: { seconds: number } };
  log(`${world.name}: model ${model.id} trained on ${accounts.length} labelled accounts in ${model.training.seconds} s (the command: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return { id: model.id, seconds: model.training.seconds, held_out: model.held_out };
}

const fmt = (q: ReturnType<typeof quality>) => `precision ${q.precision.toFixed(3)} recall ${q.recall.toFixed(3)} F1 ${q.f1.toFixed(3)} (${q.flagged} flagged, ${q.tp} of ${q.positives} fraud)`;

async function judge(world: AmlsimWorld, modelId: string, accounts: string[]): Promise<ReturnType<typeof quality>> {
  const t0 = performance.now();
  const instants = new Map(accounts.map((a) => [a, world.instants.get(a) ?? []]));
  const { flagged, evaluations } = await replayModel(world.stores, TENANT, modelId, instants);
  log(`${world.name}: ${evaluations} evaluations of model ${modelId} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return quality(flagged, world.labels, accounts);
}

async function main(): Promise<void> {
  const cross = process.argv.includes('--cross') || !process.argv.includes('--labelled');
  const labelled = process.argv.includes('--labelled') || !process.argv.includes('--cross');
  await runBench('eval-model', log, async (teardown) => {
    const worlds: AmlsimWorld[] = [];
    for (const set of SETS) worlds.push(await startAmlsimWorld(teardown, log, resolve(set), MOVEMENT_LIMIT));
    const results: string[] = [];
    if (labelled) {
      for (const world of worlds) {
        const all = [...world.labels.keys()];
        const given = all.filter(inLabelledPart);
        const judged = all.filter((a) => !inLabelledPart(a));
        const model = await train(world, given);
        results.push(`RESULT labelled ${world.name}: labels of ${given.length} accounts, judged the other ${judged.length}: ${fmt(await judge(world, model.id, judged))} (target F1 >= 0.9)`);
      }
    }
    if (cross) {
      const models = [];
      for (const world of worlds) models.push(await train(world, [...world.labels.keys()]));
      for (const [i, world] of worlds.entries()) {
        const other = worlds[1 - i]!;
        const trained = models[1 - i]!;
        // The other set's model, stored for this set's tenant.
        const shown = await svc(other.service.env, ['models', 'show', '--tenant', TENANT, '--model', trained.id, '--json']);
        const document = modelDocumentSchema.parse((JSON.parse(shown.slice(shown.indexOf('{'))) as { document: unknown }).document);
        const here = await saveModel(world.pool, TENANT, document, new Date());
        const q = await judge(world, here.id, [...world.labels.keys()]);
        results.push(`RESULT cross trained on ${other.name} (${trained.seconds} s), judged ${world.name}: ${fmt(q)} (target F1 >= 0.85)`);
      }
    }
    for (const line of results) console.log(line);
  });
}

await main();

// bench/train-default-model: the built-in default model, reproducibly, from the shared dev data.
//
//   npm run train:default-model      writes services/detection/models/default-model.json
//
// Both AMLSim dev sets (20K_fanin200, 20K_cycle200; Apache-2.0) go into fresh services of their own
// (bench/lib/amlsim-world.ts); every account's isFraud label becomes a training example through
// the same code as `svc models train` (examplesFor: the account's features at its latest activity,
// read through the detection framework), and one model is fitted on the examples of both sets
// (train.ts: a stratified quarter held back and reported). The file records where the data came
// from (paths and SHA-256 of the files), the licence, and the command that made it. The same data
// and code give the same weights: the split and the batch order are seeded, the fit deterministic.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { examplesFor } from '../services/detection/models/examples.ts';
import type { ModelDocument } from '../services/detection/models/model.ts';
import { DEFAULT_MODEL_BASE_ASSET } from '../services/detection/models/store.ts';
import { fit, type Example } from '../services/detection/models/train.ts';
import { startAmlsimWorld } from './lib/amlsim-world.ts';
import { ROOT, TENANT } from './lib/bench-service.ts';
import { runBench } from './lib/teardown.ts';

const SETS = ['20K_fanin200', '20K_cycle200'].map((name) => resolve(ROOT, '..', 'shared', 'datasets', 'ibm_amlsim', name));
const OUT = resolve(ROOT, 'services', 'detection', 'models', 'default-model.json');

const started = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s] ${line}\n`);
};

const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

await runBench('train-default-model', log, async (teardown) => {
  const examples: Example[] = [];
  const datasets = [];
  for (const dir of SETS) {
    const world = await startAmlsimWorld(teardown, log, dir, Number.MAX_SAFE_INTEGER);
    const labelled = [...world.labels].map(([account, label]) => ({ account, label, asOf: null }));
    // "Now" is after every movement of the set: each account is taken at its latest activity.
    const { examples: found, withoutActivity } = await examplesFor(world.stores, TENANT, DEFAULT_MODEL_BASE_ASSET, labelled, new Date());
    examples.push(...found);
    datasets.push({
      name: world.name,
      path: relative(ROOT, dir),
      files: { 'nodes.csv': await sha256(join(dir, 'nodes.csv')), 'transactions.csv': await sha256(join(dir, 'transactions.csv')) },
      accounts: world.labels.size,
      movements: world.movements,
      positives: [...world.labels.values()].filter(Boolean).length,
      without_activity: withoutActivity,
    });
    log(`${world.name}: ${found.length} examples`);
  }
  const t0 = performance.now();
  const fitted = await fit(examples);
  if (fitted.kind !== 'fitted') throw new Error(fitted.message);
  const model: ModelDocument = {
    ...fitted.model,
    training: { ...fitted.model.training, labels: { file: examples.length, dispositions: 0, skipped: 0 }, seconds: Math.round((performance.now() - t0) / 100) / 10 },
  };
  const file = {
    trained_at: new Date().toISOString(),
    provenance: {
      datasets,
      source: 'IBM AMLSim simulator outputs, as published in the shared dev data (../shared/datasets/ibm_amlsim)',
      licence: 'Apache-2.0 (IBM/AMLSim); the model is derived from these data sets',
      // Its money features are read in this asset's minor units: a tenant of another base asset
      // would feed it amounts on another scale (services/detection/models/lifecycle.ts refuses).
      base_asset: DEFAULT_MODEL_BASE_ASSET,
      labels: 'account-level isFraud of nodes.csv, every account of both sets, taken at its latest activity',
      command: 'npm run train:default-model',
      script: 'bench/train-default-model.ts',
    },
    model,
  };
  await writeFile(OUT, `${JSON.stringify(file, null, 2)}\n`);
  const h = model.training.held_out;
  console.log(`default model: ${examples.length} examples; held back ${h.examples} (${h.positives} fraud): precision ${h.precision.toFixed(3)} recall ${h.recall.toFixed(3)} F1 ${h.f1.toFixed(3)} PR-AUC ${h.pr_auc.toFixed(3)}; written to ${relative(ROOT, OUT)}`);
});

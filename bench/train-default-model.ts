// bench/train-default-model: the built-in default model, reproducibly, from the shared dev data.
//
//   npm run train:default-model      writes services/detection/models/default-model.json
//
// Both AMLSim dev sets (20K_fanin200, 20K_cycle200; Apache-2.0) go into fresh services of their own
// (bench/lib/amlsim-world.ts); every account's isFraud label becomes a training example through
// the same code as `svc models train` (examplesFor: the account's features at its latest activity,
// read through the detection framework). AMLSim's normal accounts all send and receive small sums
// every few days, so on them alone the model learnt that anything else (a payee, a salary) looks
// like laundering. So the chooser half of the Berka accounts (bench/lib/berka-world.ts: a real
// retail bank, no laundering labels) adds ordinary accounts as negatives, each at the last payment
// of every day it had one (its first days too). The other Berka half is never read here: it is what
// `npm run eval:retail` judges. One model is fitted on all the examples, with the default model's
// features (default-model-features.ts) and train.ts's fit: a stratified quarter held back, the
// threshold chosen on the rest, Berka's included. The file records where
// the data came from (paths and SHA-256 of the files), the licences, the held-back figures of each
// source, and the command that made it. The same data and code give the same weights: the split
// and the batch order are seeded, the fit deterministic.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_MODEL_FEATURES } from '../services/detection/models/default-model-features.ts';
import { examplesFor } from '../services/detection/models/examples.ts';
import { atThreshold, averagePrecision } from '../services/detection/models/metrics.ts';
import { score, type ModelDocument } from '../services/detection/models/model.ts';
import { DEFAULT_MODEL_BASE_ASSET } from '../services/detection/models/store.ts';
import { fit, type Example } from '../services/detection/models/train.ts';
import { startAmlsimWorld } from './lib/amlsim-world.ts';
import { CZK_PER_USD, YEARS_SHIFTED } from './lib/berka.ts';
import { BERKA_DIR, startBerkaWorld } from './lib/berka-world.ts';
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
      without_activity: withoutActivity.length,
    });
    log(`${world.name}: ${found.length} examples`);
  }
  const amlsimExamples = examples.length;
  const berka = await startBerkaWorld(teardown, log, 'chooser', 0);
  const days = [...berka.instants].flatMap(([account, instants]) => instants.map((at) => ({ account, label: false, asOf: at })));
  const { examples: retail } = await examplesFor(berka.stores, TENANT, DEFAULT_MODEL_BASE_ASSET, days, new Date());
  examples.push(...retail);
  datasets.push({
    name: berka.name,
    path: relative(ROOT, BERKA_DIR),
    files: { 'account.asc': await sha256(join(BERKA_DIR, 'account.asc')), 'trans.asc': await sha256(join(BERKA_DIR, 'trans.asc')) },
    accounts: berka.accounts,
    movements: berka.movements,
    positives: 0,
    examples: retail.length,
    half: 'chooser: the accounts whose SHA-256 of "berka:<account_id>" starts with an even byte (bench/lib/berka.ts); the other half is judged by npm run eval:retail',
    amounts: `CZK converted at a fixed ${CZK_PER_USD} CZK to the USD; dates moved ${YEARS_SHIFTED} years forward; the bank's own postings (interest, fees) left out`,
  });
  log(`${berka.name}: ${retail.length} examples (${berka.accounts} accounts, every day each had a payment)`);
  const t0 = performance.now();
  const fitted = await fit(examples, DEFAULT_MODEL_FEATURES);
  if (fitted.kind !== 'fitted') throw new Error(fitted.message);
  const model: ModelDocument = {
    ...fitted.model,
    training: { ...fitted.model.training, labels: { file: examples.length, dispositions: 0, skipped: 0 }, seconds: Math.round((performance.now() - t0) / 100) / 10 },
  };
  const bySource = heldOutBySource(model, examples, fitted.heldOut, amlsimExamples);
  const file = {
    trained_at: new Date().toISOString(),
    provenance: {
      datasets,
      source: 'IBM AMLSim simulator outputs (../shared/datasets/ibm_amlsim) and half of the Berka / PKDD99 Czech bank accounts (../shared/datasets/berka_pkdd99), as published in the shared dev data',
      licence: 'Apache-2.0 (IBM/AMLSim); Berka / PKDD99: no licence stated, published for the PKDD99 discovery challenge; the model is derived from these data sets',
      // Its money features are read in this asset's minor units: a tenant of another base asset
      // would feed it amounts on another scale (services/detection/models/lifecycle.ts refuses).
      base_asset: DEFAULT_MODEL_BASE_ASSET,
      labels: 'AMLSim: account-level isFraud of nodes.csv, every account of both sets, taken at its latest activity; Berka chooser half: negative, at the last payment of every day each account had one',
      held_out_by_source: bySource,
      command: 'npm run train:default-model',
      script: 'bench/train-default-model.ts',
    },
    model,
  };
  await writeFile(OUT, `${JSON.stringify(file, null, 2)}\n`);
  const h = model.training.held_out;
  const a = bySource.amlsim;
  console.log(
    `default model: ${examples.length} examples; held back ${h.examples} (${h.positives} fraud): precision ${h.precision.toFixed(3)} recall ${h.recall.toFixed(3)} F1 ${h.f1.toFixed(3)} PR-AUC ${h.pr_auc.toFixed(3)}; ` +
      `of them AMLSim ${a.examples}: precision ${a.precision.toFixed(3)} recall ${a.recall.toFixed(3)} F1 ${a.f1.toFixed(3)} PR-AUC ${a.pr_auc.toFixed(3)}; ` +
      `Berka ${bySource.berka.examples} account-days, ${bySource.berka.flagged} at or above the threshold; fit ${model.training.seconds} s; written to ${relative(ROOT, OUT)}`,
  );
});

// The held-back part's figures for each source: AMLSim's against its labels, the way the model
// reported them before retail examples were added; Berka's as the account-days scored at or above
// the threshold (all of them negatives).
function heldOutBySource(model: ModelDocument, examples: readonly Example[], heldOut: readonly number[], amlsimExamples: number) {
  const scored = heldOut.map((i) => ({ i, score: score(model, examples[i]!.values).score, label: examples[i]!.label }));
  const amlsim = scored.filter((s) => s.i < amlsimExamples);
  const berka = scored.filter((s) => s.i >= amlsimExamples);
  const at = atThreshold(amlsim, model.threshold);
  return {
    amlsim: { examples: amlsim.length, positives: amlsim.filter((s) => s.label).length, ...at, pr_auc: averagePrecision(amlsim) },
    berka: { examples: berka.length, flagged: berka.filter((s) => s.score >= model.threshold).length },
  };
}

// Fitting a model to labelled feature vectors. The fit is TensorFlow.js's (layers API: one dense
// unit with a sigmoid and an L2 penalty, binary cross-entropy, Adam), on its pure-JavaScript CPU
// backend: a regularised logistic regression, convex, so zero-initialised weights and unshuffled
// batches of a seeded order give the same model for the same labels. A stratified share of the
// labels is held back: the threshold is chosen on the training part, and precision, recall, F1
// and PR-AUC are measured on the held-back part and kept with the model. Training gives one
// example per account (oneLabelPerAccount), so splitting the examples splits the accounts: the
// held-back part is accounts the fit never saw, stratified on each account's label.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfl from '@tensorflow/tfjs-layers';
import type { FeatureValues } from './features.ts';
import { atThreshold, averagePrecision, bestF1Threshold } from './metrics.ts';
import { FEATURE_SPEC, inputsOf, MODEL_FORMAT, score, standardisation, type FeatureSpec, type HeldOutReport, type ModelDocument } from './model.ts';
import { seededRandom, shuffled, stratifiedSplit } from './split.ts';

const HYPERPARAMETERS = { l2: 1e-3, learning_rate: 0.05, epochs: 40, batch_size: 512, held_out_share: 0.25, seed: 32 } as const;

export interface Example {
  values: FeatureValues;
  label: boolean;
}

export type FitOutcome =
  // heldOut: the indices of the examples held back, for a caller that reports on parts of them.
  | { kind: 'fitted'; model: Omit<ModelDocument, 'training'> & { training: Omit<ModelDocument['training'], 'labels' | 'seconds'> }; heldOut: number[] }
  // Too few examples of a class to hold any back and still learn from it.
  | { kind: 'too_few'; message: string };

const MIN_PER_CLASS = 4;

let ready: Promise<void> | undefined;
// Production mode: no debug checks, and no advice to install the native backend on stderr.
function backend(): Promise<void> {
  ready ??= (async () => {
    tf.enableProdMode();
    await tf.setBackend('cpu');
  })();
  return ready;
}

// features: the features and their rules, as the model will hold them.
export async function fit(examples: readonly Example[], features: readonly FeatureSpec[] = FEATURE_SPEC): Promise<FitOutcome> {
  const positives = examples.filter((e) => e.label).length;
  const negatives = examples.length - positives;
  if (positives < MIN_PER_CLASS || negatives < MIN_PER_CLASS) {
    return { kind: 'too_few', message: `training needs at least ${MIN_PER_CLASS} examples of each label; got ${positives} positive and ${negatives} negative` };
  }
  await backend();
  const h = HYPERPARAMETERS;
  const { train, heldOut } = stratifiedSplit(examples.map((e) => e.label), h.held_out_share, h.seed);
  const trainSet = shuffled(train.map((i) => examples[i]!), seededRandom(h.seed + 1));

  // Transformed features, standardised with the training part's statistics only, through the
  // scoring code's own inputs.
  const spec = features.map((f) => ({ ...f }));
  const { mean, std } = standardisation(spec, trainSet.map((e) => e.values));
  const inputs = trainSet.map((e) => inputsOf({ features: spec, mean, std }, e.values));
  const d = spec.length;

  const net = tfl.sequential();
  net.add(tfl.layers.dense({ units: 1, inputShape: [d], activation: 'sigmoid', kernelInitializer: 'zeros', biasInitializer: 'zeros', kernelRegularizer: tfl.regularizers.l2({ l2: h.l2 }) }));
  net.compile({ optimizer: tf.train.adam(h.learning_rate), loss: 'binaryCrossentropy' });
  const x = tf.tensor2d(inputs, [inputs.length, d]);
  const y = tf.tensor2d(trainSet.map((e) => [e.label ? 1 : 0]), [trainSet.length, 1]);
  const trainPositives = trainSet.filter((e) => e.label).length;
  try {
    // Classes weighed to balance: a rare positive class would otherwise barely move the fit.
    await net.fit(x, y, {
      epochs: h.epochs,
      batchSize: h.batch_size,
      shuffle: false,
      verbose: 0,
      classWeight: { 0: 1, 1: (trainSet.length - trainPositives) / trainPositives },
    });
  } finally {
    x.dispose();
    y.dispose();
  }
  const [kernel, bias] = net.layers[0]!.getWeights();
  const weights = Array.from(await kernel!.data());
  const biasValue = (await bias!.data())[0]!;
  net.dispose();

  const unthresholded = { format: MODEL_FORMAT, features: spec, mean, std, weights, bias: biasValue };
  const scoredOn = (set: readonly Example[]) => set.map((e) => ({ score: score(unthresholded, e.values).score, label: e.label }));
  const threshold = bestF1Threshold(scoredOn(trainSet));
  const heldOutSet = heldOut.map((i) => examples[i]!);
  const heldScores = scoredOn(heldOutSet);
  const at = atThreshold(heldScores, threshold);
  const held: HeldOutReport = {
    examples: heldOutSet.length,
    positives: heldOutSet.filter((e) => e.label).length,
    precision: at.precision,
    recall: at.recall,
    f1: at.f1,
    pr_auc: averagePrecision(heldScores),
    threshold,
  };
  return {
    kind: 'fitted',
    heldOut,
    model: {
      ...unthresholded,
      threshold,
      training: {
        library: `@tensorflow/tfjs-layers ${tf.version_core} (cpu backend)`,
        examples: examples.length,
        positives,
        held_out: held,
        hyperparameters: { ...h },
      },
    },
  };
}

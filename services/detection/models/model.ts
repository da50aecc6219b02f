// A trained model as it is stored and scored: a regularised logistic regression over the
// features (counts and money on a log scale, ratios as they are, each standardised with the
// training set's mean and deviation). Scoring is the model's own formula, so the detect process
// never loads the training library; each feature's share of the score (its weight times its
// standardised value) is what explanations rank.
import { z } from 'zod';
import { FEATURES, type FeatureKind, type FeatureValues, vectorOf } from './features.ts';

export const MODEL_FORMAT = 'logistic-regression/v1' as const;

const heldOutReportSchema = z.object({
  examples: z.number().int(),
  positives: z.number().int(),
  precision: z.number(),
  recall: z.number(),
  f1: z.number(),
  pr_auc: z.number(),
  threshold: z.number(),
});
export type HeldOutReport = z.infer<typeof heldOutReportSchema>;

export const modelDocumentSchema = z.object({
  format: z.literal(MODEL_FORMAT),
  features: z.array(z.object({ name: z.string(), kind: z.enum(['money', 'count', 'ratio']) })).min(1),
  mean: z.array(z.number()),
  std: z.array(z.number()),
  weights: z.array(z.number()),
  bias: z.number(),
  // A score at or above this raises a hit; chosen on the training part only.
  threshold: z.number().min(0).max(1),
  training: z.object({
    library: z.string(),
    examples: z.number().int(),
    positives: z.number().int(),
    held_out: heldOutReportSchema,
    // Where the labels came from: the label file and the case dispositions.
    labels: z.object({ file: z.number().int(), dispositions: z.number().int(), skipped: z.number().int() }),
    seconds: z.number(),
    hyperparameters: z.record(z.string(), z.union([z.number(), z.string()])),
  }),
});
export type ModelDocument = z.infer<typeof modelDocumentSchema>;

// Counts and money are heavy-tailed: their logarithm is what a linear model can weigh.
export function transform(value: number, kind: FeatureKind): number {
  return kind === 'ratio' ? value : Math.log1p(Math.max(0, value));
}

// The standardised, transformed inputs of one example, in the model's feature order.
function inputsOf(model: Pick<ModelDocument, 'features' | 'mean' | 'std'>, values: FeatureValues): number[] {
  const raw = vectorOf(values, model.features.map((f) => f.name));
  return raw.map((v, i) => (transform(v, model.features[i]!.kind) - model.mean[i]!) / model.std[i]!);
}

export interface Contribution {
  feature: string;
  value: number;
  // Weight times standardised input: how far this feature moved the log-odds from the training
  // set's average account.
  contribution: number;
}

export interface Scored {
  score: number;
  contributions: Contribution[];
}

export type Scorer = Pick<ModelDocument, 'features' | 'mean' | 'std' | 'weights' | 'bias'>;

export function score(model: Scorer, values: FeatureValues): Scored {
  const inputs = inputsOf(model, values);
  let logit = model.bias;
  const contributions: Contribution[] = inputs.map((x, i) => {
    const contribution = model.weights[i]! * x;
    logit += contribution;
    const name = model.features[i]!.name;
    return { feature: name, value: values[name as keyof FeatureValues] ?? 0, contribution };
  });
  return { score: 1 / (1 + Math.exp(-logit)), contributions };
}

// The features that pushed the score up most, largest first.
export function topContributions(scored: Scored, count: number): Contribution[] {
  return scored.contributions.filter((c) => c.contribution > 0).sort((a, b) => b.contribution - a.contribution).slice(0, count);
}

export const FEATURE_SPEC = FEATURES.map((f) => ({ name: f.name, kind: f.kind }));

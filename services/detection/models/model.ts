// A trained model as it is stored and scored: a regularised logistic regression over the
// features (counts and money on a log scale, ratios as they are, each standardised with the
// training set's mean and deviation). Scoring is the model's own formula, so the detect process
// never loads the training library; each feature's share of the score (its weight times its
// standardised value) is what explanations rank.
//
// Format v2 adds two rules a feature may carry. `flow`: a statistic of one flow (in or out) of an
// account without payments in that flow is not applicable: its input is the training mean, so it
// moves the score by nothing. A mean payment of nothing, taken as zero, lay far outside every
// training account that sends, and the weights turned "sent nothing" into the strongest reason to
// alert any payee. `ordinary`: a count up to it weighs as none. A v1 model has neither, and scores
// as it always did.
import { z } from 'zod';
import { FEATURES, IMPLIED_BY_NONE, type FeatureValues } from './features.ts';

export const MODEL_FORMAT = 'logistic-regression/v2' as const;
const FORMATS = ['logistic-regression/v1', MODEL_FORMAT] as const;

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

const featureSpecSchema = z.object({
  name: z.string(),
  kind: z.enum(['money', 'count', 'ratio']),
  flow: z.enum(['in', 'out']).optional(),
  ordinary: z.number().int().min(0).optional(),
});
export type FeatureSpec = z.infer<typeof featureSpecSchema>;

export const modelDocumentSchema = z.object({
  format: z.enum(FORMATS),
  features: z.array(featureSpecSchema).min(1),
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

// Counts and money are heavy-tailed: their logarithm (of what lies above the ordinary) is what a
// linear model can weigh.
function transform(value: number, feature: FeatureSpec): number {
  return feature.kind === 'ratio' ? value : Math.log1p(Math.max(0, value - (feature.ordinary ?? 0)));
}

// Whether the feature describes anything for these values (see `flow` above).
export function applies(feature: FeatureSpec, values: FeatureValues): boolean {
  return feature.flow === undefined || values[feature.flow === 'in' ? 'in_count' : 'out_count'] > 0;
}

const valueOf = (values: FeatureValues, name: string): number => values[name as keyof FeatureValues] ?? 0;

// The training part's mean and deviation of each transformed feature, over the examples it applies to.
export function standardisation(features: readonly FeatureSpec[], examples: readonly FeatureValues[]): { mean: number[]; std: number[] } {
  const mean: number[] = [];
  const std: number[] = [];
  for (const f of features) {
    const xs = examples.filter((values) => applies(f, values)).map((values) => transform(valueOf(values, f.name), f));
    const m = xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0;
    mean.push(m);
    std.push(Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length || 1)) || 1);
  }
  return { mean, std };
}

// The standardised, transformed inputs of one example, in the model's feature order; what the fit
// is given and what scoring weighs.
export function inputsOf(model: Pick<ModelDocument, 'features' | 'mean' | 'std'>, values: FeatureValues): number[] {
  return model.features.map((f, i) => (applies(f, values) ? (transform(valueOf(values, f.name), f) - model.mean[i]!) / model.std[i]! : 0));
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
    return { feature: name, value: valueOf(values, name), contribution };
  });
  return { score: 1 / (1 + Math.exp(-logit)), contributions };
}

// The features that pushed the score up most, largest first. A flow without payments is one
// reason, named once by its payment count ("payments sent 0"), weighing what every count it
// implies weighed (IMPLIED_BY_NONE; decision 0069).
export function topContributions(scored: Scored, count: number): Contribution[] {
  const byName = new Map(scored.contributions.map((c) => [c.feature, { ...c }]));
  for (const [flowCount, implied] of Object.entries(IMPLIED_BY_NONE)) {
    const none = byName.get(flowCount);
    if (!none || none.value !== 0) continue;
    for (const name of implied) {
      const merged = byName.get(name);
      if (!merged) continue;
      none.contribution += merged.contribution;
      byName.delete(name);
    }
  }
  return [...byName.values()].filter((c) => c.contribution > 0).sort((a, b) => b.contribution - a.contribution).slice(0, count);
}

// The features every model is fitted on, with their flows. An `ordinary` count is left to the
// fitter: a tenant's model learns from its own book what is ordinary there.
export const FEATURE_SPEC: FeatureSpec[] = FEATURES.map((f) => ({ name: f.name, kind: f.kind, ...('flow' in f ? { flow: f.flow } : {}) }));

import { describe, expect, it } from 'vitest';
import { FEATURE_NAMES, type FeatureValues } from './features.ts';
import { applies, FEATURE_SPEC, inputsOf, modelDocumentSchema, score, standardisation, topContributions, type FeatureSpec, type Scorer } from './model.ts';
import { fit, type Example } from './train.ts';

const valuesOf = (set: Partial<FeatureValues>): FeatureValues => ({ ...(Object.fromEntries(FEATURE_NAMES.map((n) => [n, 0])) as FeatureValues), ...set });
const logit = (p: number) => Math.log(p / (1 - p));

// A payee that received two payments from one payer and sent nothing.
const payee = valuesOf({ in_count: 2, in_sum: 360_000, in_mean: 180_000, in_max: 240_000, in_counterparties: 1, max_same_counterparty_day: 2, flow_balance: 1, in_top_share: 1 });

const scorer = (features: FeatureSpec[]): Scorer => ({ features, mean: [10, 1], std: [2, 0.5], weights: [-1.5, 0.8], bias: -3 });

describe('scoring', () => {
  it('weighs every feature as it is in a model without flows (format v1), as it always did', () => {
    const scored = score(scorer([{ name: 'out_mean', kind: 'money' }, { name: 'in_count', kind: 'count' }]), payee);
    expect(logit(scored.score)).toBeCloseTo(-3 + -1.5 * ((Math.log1p(0) - 10) / 2) + 0.8 * ((Math.log1p(2) - 1) / 0.5), 9);
    expect(topContributions(scored, 4).map((c) => c.feature)).toEqual(['out_mean', 'in_count']);
  });

  it("gives a flow's statistic no weight, and never names it, when the account had no payments in that flow", () => {
    const scored = score(scorer([{ name: 'out_mean', kind: 'money', flow: 'out' }, { name: 'in_count', kind: 'count' }]), payee);
    expect(scored.contributions[0]).toMatchObject({ feature: 'out_mean', value: 0 });
    expect(Math.abs(scored.contributions[0]!.contribution)).toBe(0);
    expect(logit(scored.score)).toBeCloseTo(-3 + 0.8 * ((Math.log1p(2) - 1) / 0.5), 9);
    expect(topContributions(scored, 4).map((c) => c.feature)).toEqual(['in_count']);
    // With payments sent, it weighs again.
    const sender = valuesOf({ ...payee, out_count: 1, out_mean: 100 });
    expect(score(scorer([{ name: 'out_mean', kind: 'money', flow: 'out' }, { name: 'in_count', kind: 'count' }]), sender).contributions[0]!.contribution).toBeCloseTo(-1.5 * ((Math.log1p(100) - 10) / 2), 9);
  });

  it('names a flow without payments once, by its payment count, with the weight of every count it implies', () => {
    const features: FeatureSpec[] = ['out_count', 'out_counterparties', 'max_out_day', 'in_count', 'in_counterparties'].map((name) => ({ name, kind: 'count' }));
    const model: Scorer = { features, mean: [2, 2, 2, 0, 0], std: [1, 1, 1, 1, 1], weights: [-1, -0.5, -0.25, 0.1, 0.2], bias: 0 };
    // Sent nothing: -1 × (0 - 2) + -0.5 × (0 - 2) + -0.25 × (0 - 2) = 3.5, one reason.
    const top = topContributions(score(model, payee), 4);
    expect(top.map((c) => [c.feature, c.value])).toEqual([['out_count', 0], ['in_counterparties', 1], ['in_count', 2]]);
    expect(top[0]!.contribution).toBeCloseTo(3.5, 9);
    // A sender's counts are reasons of their own.
    const sender = valuesOf({ ...payee, out_count: 1, out_counterparties: 1, max_out_day: 1 });
    expect(topContributions(score(model, sender), 4).map((c) => c.feature)).toEqual(['out_count', 'out_counterparties', 'max_out_day', 'in_counterparties']);
  });

  it('weighs a count only above what is ordinary', () => {
    const model = { features: [{ name: 'max_same_counterparty_day', kind: 'count', ordinary: 2 }] as FeatureSpec[], mean: [0], std: [1] };
    const input = (n: number) => inputsOf(model, valuesOf({ max_same_counterparty_day: n }))[0];
    expect([input(0), input(1), input(2)]).toEqual([0, 0, 0]);
    expect(input(3)).toBeCloseTo(Math.log1p(1), 12);
    expect(input(6)).toBeCloseTo(Math.log1p(4), 12);
  });
});

describe('standardisation', () => {
  it("takes a flow's statistic over the examples with payments in that flow only", () => {
    const examples = [valuesOf({}), valuesOf({ out_count: 1, out_mean: 100 }), valuesOf({ out_count: 2, out_mean: 10_000 })];
    const { mean, std } = standardisation([{ name: 'out_mean', kind: 'money', flow: 'out' }, { name: 'out_count', kind: 'count' }], examples);
    const [a, b] = [Math.log1p(100), Math.log1p(10_000)];
    expect(mean[0]).toBeCloseTo((a + b) / 2, 12);
    expect(std[0]).toBeCloseTo(Math.abs(b - a) / 2, 12);
    expect(mean[1]).toBeCloseTo((0 + Math.log1p(1) + Math.log1p(2)) / 3, 12);
  });

  it('keeps a deviation of 1 for a feature that applies to no example', () => {
    expect(standardisation([{ name: 'out_mean', kind: 'money', flow: 'out' }], [valuesOf({})])).toEqual({ mean: [0], std: [1] });
  });
});

describe('fitting', () => {
  // Positives pay one counterparty twice in a day, negatives once; nothing else tells them apart.
  const examples: Example[] = Array.from({ length: 40 }, (_, i) => ({
    values: valuesOf({ in_count: 2 + (i % 3), out_count: 1, max_same_counterparty_day: i < 12 ? 2 : 1 }),
    label: i < 12,
  }));
  const scoreOf = (document: Scorer, sameDay: number) => score(document, valuesOf({ in_count: 3, out_count: 1, max_same_counterparty_day: sameDay })).score;

  it("keeps the features' rules in the model it fits, and weighs a count only above the ordinary", async () => {
    const plain = await fit(examples);
    const withOrdinary = FEATURE_SPEC.map((f) => (f.name === 'max_same_counterparty_day' ? { ...f, ordinary: 2 } : f));
    const retail = await fit(examples, withOrdinary);
    if (plain.kind !== 'fitted' || retail.kind !== 'fitted') throw new Error('not fitted');
    expect(plain.model.features).toEqual(FEATURE_SPEC);
    expect(retail.model.features).toEqual(withOrdinary);
    expect(scoreOf(plain.model, 2) - scoreOf(plain.model, 1)).toBeGreaterThan(0.5);
    expect(scoreOf(retail.model, 2)).toBe(scoreOf(retail.model, 1));
  });
});

describe('the feature list', () => {
  it("marks each flow's sum, mean, largest payment and top counterparty's share, and only those", () => {
    const flows = FEATURE_SPEC.filter((f) => f.flow).map((f) => `${f.flow}:${f.name}`);
    expect(flows.sort()).toEqual(['in:in_max', 'in:in_mean', 'in:in_sum', 'in:in_top_share', 'out:out_max', 'out:out_mean', 'out:out_sum', 'out:out_top_share']);
    for (const f of FEATURE_SPEC.filter((s) => s.flow)) expect(f.name.startsWith(`${f.flow}_`)).toBe(true);
    expect(applies(FEATURE_SPEC.find((f) => f.name === 'in_sum')!, payee)).toBe(true);
    expect(applies(FEATURE_SPEC.find((f) => f.name === 'out_sum')!, payee)).toBe(false);
  });

  it('carries no ordinary count for a tenant model: its own book says what is ordinary', () => {
    expect(FEATURE_SPEC.every((f) => f.ordinary === undefined)).toBe(true);
  });

  it('reads a stored v1 model, and a v2 model with its rules', () => {
    const document = (format: string, features: unknown[]) => ({
      format,
      features,
      mean: [0],
      std: [1],
      weights: [1],
      bias: 0,
      threshold: 0.5,
      training: { library: 'x', examples: 8, positives: 2, held_out: { examples: 2, positives: 1, precision: 1, recall: 1, f1: 1, pr_auc: 1, threshold: 0.5 }, labels: { file: 8, dispositions: 0, skipped: 0 }, seconds: 1, hyperparameters: {} },
    });
    expect(modelDocumentSchema.safeParse(document('logistic-regression/v1', [{ name: 'out_mean', kind: 'money' }])).success).toBe(true);
    expect(modelDocumentSchema.parse(document('logistic-regression/v2', [{ name: 'out_mean', kind: 'money', flow: 'out', ordinary: 0 }])).features[0]).toEqual({ name: 'out_mean', kind: 'money', flow: 'out', ordinary: 0 });
    expect(modelDocumentSchema.safeParse(document('logistic-regression/v2', [{ name: 'out_mean', kind: 'money', flow: 'sideways' }])).success).toBe(false);
  });
});

// The learned detector: a tenant's trained model (or the shipped default) scoring an account on
// its features at the instant evaluated. It runs only in rulesets that name it with a model
// (params.model; `svc models shadow|activate` write such rulesets), so the model goes through
// the ruleset lifecycle like any detector configuration. Every hit carries the model's id,
// version and score, and the features that pushed the score most with their values and the
// account's own values over the preceding span.
import { z } from 'zod';
import { defineDetector, noHit, nonResult, type Hit, type Severity } from '../framework/detector.ts';
import type { SubjectContext } from '../framework/context.ts';
import { formatMoney } from '../framework/money-text.ts';
import { earlierFeatures, FEATURE_DAYS, FEATURES, subjectFeatures, type FeatureValues } from './features.ts';
import { score, topContributions, type Contribution } from './model.ts';
import { DEFAULT_MODEL_BASE_ASSET, DEFAULT_MODEL_ID, MODEL_ID_PATTERN, ModelCache, type StoredModel } from './store.ts';

export const LEARNED_DETECTOR_ID = 'learned_model';
// Features named in a hit's explanation.
const EXPLAINED_FEATURES = 4;
const EVIDENCE_LIMIT = 50;

const models = new ModelCache();

const paramsSchema = z.strictObject({
  model: z.string().regex(MODEL_ID_PATTERN, 'a model id: default, or m1, m2, … (svc models list)'),
});

export const learnedModel = defineDetector({
  id: LEARNED_DETECTOR_ID,
  typology: 'learned model',
  version: 1,
  optIn: true,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['90d'],
  params: paramsSchema,
  async evaluate(ctx, params) {
    const model = await models.get(ctx.stores.pool, ctx.tenantId, params.model);
    if (!model) return nonResult('not_applicable', `model ${params.model} is not available to this tenant`);
    // Rulesets naming it are refused for such a tenant (references.ts); one stored before that
    // refusal must still not score amounts of another asset as the default model's USD.
    if (params.model === DEFAULT_MODEL_ID && ctx.baseAsset !== DEFAULT_MODEL_BASE_ASSET) {
      return nonResult('not_applicable', `the default model reads amounts in ${DEFAULT_MODEL_BASE_ASSET}; the tenant's base asset is ${ctx.baseAsset}`);
    }
    const { values, records } = await subjectFeatures(ctx);
    if (records.length === 0) return noHit();
    const scored = score(model.document, values);
    if (scored.score < model.document.threshold) return noHit();
    const earlier = await earlierFeatures(ctx, FEATURE_DAYS);
    return hitOf(ctx, model, scored.score, topContributions(scored, EXPLAINED_FEATURES), values, earlier, records);
  },
});

const TEXT = new Map<string, { text: string; kind: string }>(FEATURES.map((f) => [f.name, f]));

function shown(feature: string, value: number | undefined, asset: string): string {
  if (value === undefined) return 'n/a';
  const kind = TEXT.get(feature)?.kind;
  if (kind === 'money') return formatMoney(BigInt(Math.round(value)), asset);
  if (kind === 'ratio') return value.toFixed(2);
  return String(Math.round(value * 100) / 100);
}

// Halfway between the threshold and certainty: high above, medium below.
function severityOf(score: number, threshold: number): Severity {
  return score >= (1 + threshold) / 2 ? 'high' : 'medium';
}

type Records = Awaited<ReturnType<typeof subjectFeatures>>['records'];

function hitOf(ctx: SubjectContext, model: StoredModel, value: number, top: Contribution[], values: FeatureValues, earlier: Partial<FeatureValues>, records: Records): Hit {
  const asset = ctx.baseAsset;
  let total = 0n;
  let inSum = 0n;
  let outSum = 0n;
  const counterparties = new Map<string, number>();
  for (const r of records) {
    const v = r.baseValue ?? 0n;
    total += v;
    if (r.direction === 'in') inSum += v;
    else outSum += v;
    if (r.counterparty) counterparties.set(r.counterparty, (counterparties.get(r.counterparty) ?? 0) + 1);
  }
  const first = records[records.length - 1]!.occurredAt;
  const features = top.map((c) => ({
    feature: c.feature,
    meaning: TEXT.get(c.feature)?.text ?? c.feature,
    value: shown(c.feature, values[c.feature as keyof FeatureValues], asset),
    own_baseline: shown(c.feature, earlier[c.feature as keyof FeatureValues], asset),
    contribution: Math.round(c.contribution * 1000) / 1000,
  }));
  const reasons = features.map((f) => `${f.meaning} ${f.value} (its own previous ${FEATURE_DAYS} days: ${f.own_baseline})`);
  // One figure for the score and the threshold wherever the alert shows them (headline, summary,
  // evidence): three decimals, where the headline held the raw float and the summary two decimals.
  const shownScore = Math.round(value * 1000) / 1000;
  const threshold = Math.round(model.document.threshold * 1000) / 1000;
  return {
    outcome: 'hit',
    score: shownScore,
    severity: severityOf(value, model.document.threshold),
    summary: `Model ${model.id} scored ${shownScore.toFixed(3)} (threshold ${threshold.toFixed(3)}) on the last ${FEATURE_DAYS} days; most weight: ${reasons.join('; ')}.`,
    evidence: {
      movements: [...new Set(records.map((r) => r.movementId))].slice(0, EVIDENCE_LIMIT),
      counterparties: [...counterparties].sort((a, b) => b[1] - a[1]).slice(0, EVIDENCE_LIMIT).map(([key]) => key),
      amounts: { total: total.toString(), count: records.length, asset, in: inSum.toString(), out: outSum.toString() },
      window: { from: first.toISOString(), to: ctx.at.toISOString() },
      thresholds: [{ name: 'model_score', threshold, observed: shownScore }],
      facts: {
        model: { id: model.id, version: model.version, format: model.document.format, trained_at: model.createdAt?.toISOString() ?? null },
        score: shownScore,
        threshold,
        top_features: features,
      },
    },
  };
}

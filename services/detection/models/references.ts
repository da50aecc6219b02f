// The models a ruleset document runs: a ruleset may only name models the tenant can run. A name of
// a model not trained yet would leave the detector silent (not_applicable) until a later training
// stored that version, which would then go live without ever being a candidate, backtested or
// shadowed (decision 0027: models reach traffic only through the ruleset lifecycle). The default
// model is refused to a tenant of another base asset here too, not only by `svc models`: a
// document written by hand reached detection without that check.
import type { Pool } from '../../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import type { RulesetIssue } from '../framework/ruleset.ts';
import { LEARNED_DETECTOR_ID } from './detector.ts';
import { DEFAULT_MODEL_BASE_ASSET, DEFAULT_MODEL_ID, loadModel } from './store.ts';

type Layer = Record<string, unknown> | undefined;

// Where the document names a model: the learned detector's parameters and each override layer.
function modelReferences(document: unknown): Array<{ path: string; model: string }> {
  const config = (document as { detectors?: Record<string, { enabled?: boolean; params?: Layer; by_segment?: Record<string, Layer>; by_risk_tier?: Record<string, Layer> }> })
    ?.detectors?.[LEARNED_DETECTOR_ID];
  if (!config || config.enabled === false) return [];
  const base = `detectors.${LEARNED_DETECTOR_ID}`;
  const layers: Array<[string, Layer]> = [
    [`${base}.params`, config.params],
    ...Object.entries(config.by_segment ?? {}).map(([segment, layer]): [string, Layer] => [`${base}.by_segment.${segment}`, layer]),
    ...Object.entries(config.by_risk_tier ?? {}).map(([tier, layer]): [string, Layer] => [`${base}.by_risk_tier.${tier}`, layer]),
  ];
  return layers.flatMap(([path, layer]) => (typeof layer?.model === 'string' ? [{ path: `${path}.model`, model: layer.model }] : []));
}

// Why the tenant may not run the model, when the model is the default one and the tenant's base
// asset is not the one it was trained on: its money features are minor units of that asset, and
// another's (an IDR tenant's amounts read 16,000 times larger) would make the score follow the
// currency, not the behaviour.
export async function foreignAssetRefusal(db: Pick<Pool, 'query'>, tenantId: string, model: string): Promise<string | null> {
  if (model !== DEFAULT_MODEL_ID) return null;
  const baseAsset = await baseAssetOf(db, tenantId);
  if (baseAsset === DEFAULT_MODEL_BASE_ASSET) return null;
  return `the default model was trained on amounts in ${DEFAULT_MODEL_BASE_ASSET} and ${tenantId}'s base asset is ${baseAsset}: train a model of its own (svc models train)`;
}

// The issues of a compiled document whose learned detector names a model the tenant lacks, or
// the default model for a tenant of another base asset.
export async function unusableModels(db: Pick<Pool, 'query'>, tenantId: string, document: unknown): Promise<RulesetIssue[]> {
  const issues: RulesetIssue[] = [];
  for (const { path, model } of modelReferences(document)) {
    if (!(await loadModel(db, tenantId, model))) issues.push({ path, message: `tenant ${tenantId} has no model ${model} (svc models list)` });
    else {
      const refusal = await foreignAssetRefusal(db, tenantId, model);
      if (refusal) issues.push({ path, message: refusal });
    }
  }
  return issues;
}

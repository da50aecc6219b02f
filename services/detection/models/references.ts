// The models a ruleset document runs: a ruleset may only name models the tenant has. A name of a
// model not trained yet would leave the detector silent (not_applicable) until a later training
// stored that version, which would then go live without ever being a candidate, backtested or
// shadowed (decision 0027: models reach traffic only through the ruleset lifecycle).
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { RulesetIssue } from '../framework/ruleset.ts';
import { LEARNED_DETECTOR_ID } from './detector.ts';
import { loadModel } from './store.ts';

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

// The issues of a compiled document whose learned detector names a model the tenant lacks.
export async function unknownModels(db: Pick<Pool, 'query'>, tenantId: string, document: unknown): Promise<RulesetIssue[]> {
  const issues: RulesetIssue[] = [];
  for (const { path, model } of modelReferences(document)) {
    if (!(await loadModel(db, tenantId, model))) issues.push({ path, message: `tenant ${tenantId} has no model ${model} (svc models list)` });
  }
  return issues;
}

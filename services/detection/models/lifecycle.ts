// A model reaches traffic the way every detector configuration does: inside a ruleset. Putting a
// model in shadow or activating it writes the tenant's live ruleset document (its active one, else
// the built-in default) with the learned detector added for that model, as the next candidate,
// then runs the ruleset step (startShadow / activate). Activating the model that the shadow
// ruleset already runs activates that very ruleset while the live one is unchanged since (see
// activateModel), so what was watched in shadow is what goes live. Rolling back is the ruleset's
// rollback (`svc rulesets rollback`).
import { canonicalJson } from '../../../platform/json/canonical-json.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { AnyDetector } from '../framework/detector.ts';
import { defaultRulesetDocument, type RulesetDocument } from '../framework/ruleset.ts';
import { activate, createCandidate, startShadow, type Outcome } from '../rulesets/lifecycle.ts';
import { LEARNED_DETECTOR_ID } from './detector.ts';
import { foreignAssetRefusal } from './references.ts';
import { activeRulesetDocument, loadModel, shadowRulesetModel } from './store.ts';

export interface ModelStep {
  model: string;
  // The ruleset version that runs the model, and whether it was written for this step.
  rulesetVersion: number;
  created: boolean;
}

async function liveDocument(pool: Pool, tenantId: string, library: readonly AnyDetector[]): Promise<RulesetDocument> {
  return ((await activeRulesetDocument(pool, tenantId)) as RulesetDocument | null) ?? defaultRulesetDocument(library);
}

function withModel(document: RulesetDocument, modelId: string): RulesetDocument {
  const detectors = { ...document.detectors, [LEARNED_DETECTOR_ID]: { enabled: true, params: { model: modelId }, by_segment: {}, by_risk_tier: {} } };
  const base = document.name.replace(/ \+ model \S+$/, '');
  return { ...document, name: `${base} + model ${modelId}`.slice(0, 128), detectors };
}

async function candidateWithModel(pool: Pool, tenantId: string, modelId: string, library: readonly AnyDetector[], now: Date): Promise<Outcome<{ version: number }>> {
  if (!(await loadModel(pool, tenantId, modelId))) return { kind: 'not_found', message: `tenant ${tenantId} has no model ${modelId} (svc models list)` };
  const refusal = await foreignAssetRefusal(pool, tenantId, modelId);
  if (refusal) return { kind: 'invalid', message: refusal, issues: [] };
  return createCandidate(pool, tenantId, withModel(await liveDocument(pool, tenantId, library), modelId), library, now);
}

// The model the live ruleset's learned detector runs, if it runs one.
async function liveModel(pool: Pool, tenantId: string): Promise<string | undefined> {
  const learned = ((await activeRulesetDocument(pool, tenantId)) as RulesetDocument | null)?.detectors?.[LEARNED_DETECTOR_ID];
  return learned && learned.enabled !== false && typeof learned.params?.model === 'string' ? learned.params.model : undefined;
}

// A step that would change nothing is refused, not repeated: repeating it wrote another ruleset
// version running the same model, and the undo it printed (a rollback) then returned to a ruleset
// that ran the model still.
const already = (message: string): Outcome<never> => ({ kind: 'invalid', message, issues: [] });

export async function shadowModel(pool: Pool, tenantId: string, modelId: string, library: readonly AnyDetector[], now: Date): Promise<Outcome<ModelStep>> {
  const watched = await shadowRulesetModel(pool, tenantId, LEARNED_DETECTOR_ID);
  if (watched?.model === modelId) return already(`model ${modelId} already runs in shadow for ${tenantId}, in ruleset ${watched.version}`);
  const candidate = await candidateWithModel(pool, tenantId, modelId, library, now);
  if (candidate.kind !== 'done') return candidate;
  const shadow = await startShadow(pool, tenantId, candidate.version, library, now);
  if (shadow.kind !== 'done') return shadow;
  return { kind: 'done', model: modelId, rulesetVersion: candidate.version, created: true };
}

export async function activateModel(pool: Pool, tenantId: string, modelId: string, library: readonly AnyDetector[], now: Date): Promise<Outcome<ModelStep & { previousVersion: number }>> {
  if ((await liveModel(pool, tenantId)) === modelId) return already(`model ${modelId} is already live for ${tenantId}`);
  const shadow = await shadowRulesetModel(pool, tenantId, LEARNED_DETECTOR_ID);
  // The shadow ruleset goes live only while it is still the live one plus the model: once the live
  // ruleset has changed since (a tuned threshold activated meanwhile), activating the shadow one
  // would silently undo that change, so a fresh candidate is made from what is live now.
  const current = canonicalJson(JSON.parse(JSON.stringify(withModel(await liveDocument(pool, tenantId, library), modelId))));
  const inShadow = shadow?.model === modelId && canonicalJson(shadow.document) === current ? shadow.version : undefined;
  let version = inShadow;
  if (version === undefined) {
    const candidate = await candidateWithModel(pool, tenantId, modelId, library, now);
    if (candidate.kind !== 'done') return candidate;
    version = candidate.version;
  }
  const activated = await activate(pool, tenantId, version, library, now);
  if (activated.kind !== 'done') return activated;
  return { kind: 'done', model: modelId, rulesetVersion: version, created: inShadow === undefined, previousVersion: activated.previousVersion };
}

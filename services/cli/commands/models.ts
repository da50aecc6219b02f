import { readTextFile } from '../files.ts';
import { parseArgs } from 'node:util';
import { systemClock } from '../../../platform/clock.ts';
import { openDetectionStores } from '../../../platform/engines.ts';
import { DETECTOR_LIBRARY } from '../../detection/library.ts';
import { parseLabelFile } from '../../detection/models/labels.ts';
import { activateModel, shadowModel } from '../../detection/models/lifecycle.ts';
import { defaultModel, listModels, loadModel, MODEL_ID_PATTERN, type StoredModel } from '../../detection/models/store.ts';
import { trainModel } from '../../detection/models/training.ts';
import { requireTenant, UsageError, withContext } from '../context.ts';
import { refuse } from './rulesets.ts';

type Print = (line: string) => void;

export const MODELS_USAGE = `usage: svc models train --tenant <tenant_id> --labels <labels.csv> [--json]
       svc models list --tenant <tenant_id> [--json]
       svc models show --tenant <tenant_id> --model <id> [--json]
       svc models shadow --tenant <tenant_id> --model <id> [--json]
       svc models activate --tenant <tenant_id> --model <id> [--json]`;

const ACTIONS = ['train', 'list', 'show', 'shadow', 'activate'] as const;
type Action = (typeof ACTIONS)[number];
const NEEDS_MODEL: readonly Action[] = ['show', 'shadow', 'activate'];

// The operator's side of learned models (services/detection/models): train one from labels, look
// at them, and run one in shadow or live through a ruleset. Readable text by default, --json for
// scripts; refusals exit 2 with their reasons.
export async function modelsCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, labels: { type: 'string' }, model: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const action = positionals[0] as Action | undefined;
  if (!action || !ACTIONS.includes(action) || positionals.length !== 1) throw new UsageError(MODELS_USAGE);
  const tenantId = values.tenant;
  if (!tenantId) throw new UsageError(`--tenant is required\n${MODELS_USAGE}`);
  if (values.labels !== undefined && action !== 'train') throw new UsageError(`--labels applies to train only\n${MODELS_USAGE}`);
  if (values.model !== undefined && !NEEDS_MODEL.includes(action)) throw new UsageError(`--model does not apply to ${action}\n${MODELS_USAGE}`);
  const modelId = NEEDS_MODEL.includes(action) ? modelIdOf(values.model) : undefined;
  const out = (json: unknown, text: () => string[]) => {
    if (values.json) print(JSON.stringify(json, null, 2));
    else for (const line of text()) print(line);
  };

  if (action === 'train') {
    if (!values.labels) throw new UsageError(`--labels is required\n${MODELS_USAGE}`);
    const parsed = parseLabelFile(await readTextFile(values.labels), systemClock.now());
    if (!parsed.ok) throw new UsageError(`${values.labels} is not a usable label file:\n${parsed.issues.map((i) => `  line ${i.line}: ${i.message}`).join('\n')}`);
    return withContext(async (context) => {
      const { config, db } = context;
      await requireTenant(context, tenantId);
      const stores = await openDetectionStores(config, db.pool);
      const outcome = await trainModel({ pool: db.pool, ...stores.value, clock: systemClock }, tenantId, parsed.labels).finally(() => stores.close());
      if (outcome.kind !== 'done') throw new UsageError(outcome.message);
      out({ ...modelJson(outcome.model), warnings: outcome.warnings }, () => [
        `model ${outcome.model.id} trained for ${tenantId}`,
        ...modelText(outcome.model),
        ...outcome.warnings.map((warning) => `warning: ${warning}`),
        `next: svc models shadow --tenant ${tenantId} --model ${outcome.model.id}, or activate it`,
      ]);
    });
  }

  await withContext(async (context) => {
    const { db } = context;
    await requireTenant(context, tenantId);
    const now = new Date();
    switch (action) {
      case 'list': {
        const models = await listModels(db.pool, tenantId);
        return out(models.map(summaryJson), () => (models.length === 0 ? [`no models for ${tenantId}`] : models.map(summaryText)));
      }
      case 'show': {
        const model = await loadModel(db.pool, tenantId, modelId!);
        if (!model) throw new UsageError(`tenant ${tenantId} has no model ${modelId}`);
        const provenance = model.version === 0 ? (defaultModel()?.provenance ?? null) : null;
        return out({ ...modelJson(model), document: model.document, ...(provenance ? { provenance } : {}) }, () => [
          `model ${model.id}${model.version === 0 ? ' (built-in default)' : ''}`,
          ...modelText(model),
          'features and weights (standardised inputs):',
          ...model.document.features.map((f, i) => `  ${f.name.padEnd(28)} ${model.document.weights[i]!.toFixed(3).padStart(8)}`),
        ]);
      }
      case 'shadow': {
        const outcome = await shadowModel(db.pool, tenantId, modelId!, DETECTOR_LIBRARY, now);
        if (outcome.kind !== 'done') refuse(outcome);
        return out({ model: outcome.model, ruleset_version: outcome.rulesetVersion, state: 'shadow' }, () => [
          `model ${outcome.model} runs in shadow for ${tenantId} in ruleset ${outcome.rulesetVersion} (the live ruleset plus the model)`,
          `compare: svc rulesets shadow-report --tenant ${tenantId} --version ${outcome.rulesetVersion}; go live: svc models activate --tenant ${tenantId} --model ${outcome.model}`,
        ]);
      }
      case 'activate': {
        const outcome = await activateModel(db.pool, tenantId, modelId!, DETECTOR_LIBRARY, now);
        if (outcome.kind !== 'done') refuse(outcome);
        return out({ model: outcome.model, ruleset_version: outcome.rulesetVersion, previous_version: outcome.previousVersion, from_shadow: !outcome.created }, () => [
          `model ${outcome.model} is live for ${tenantId} in ruleset ${outcome.rulesetVersion}${outcome.created ? '' : ' (the ruleset it ran in shadow)'}, replacing ${outcome.previousVersion === 0 ? 'the built-in default (0)' : `ruleset ${outcome.previousVersion}`}`,
          `detection workers pick it up within 5 s; undo with svc rulesets rollback --tenant ${tenantId}`,
        ]);
      }
    }
  });
}

function modelIdOf(text: string | undefined): string {
  if (text === undefined) throw new UsageError(`--model is required\n${MODELS_USAGE}`);
  if (!MODEL_ID_PATTERN.test(text)) throw new UsageError(`--model must be a model id: default, or m1, m2, … (svc models list)\n${MODELS_USAGE}`);
  return text;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

function summaryJson(m: StoredModel) {
  const held = m.document.training.held_out;
  return {
    id: m.id,
    version: m.version,
    built_in: m.version === 0,
    created_at: m.createdAt?.toISOString() ?? null,
    format: m.document.format,
    threshold: round(m.document.threshold),
    held_out: { precision: round(held.precision), recall: round(held.recall), f1: round(held.f1), pr_auc: round(held.pr_auc) },
  };
}

function modelJson(m: StoredModel) {
  return { ...summaryJson(m), training: m.document.training };
}

function summaryText(m: StoredModel): string {
  const h = m.document.training.held_out;
  return `  ${m.id.padEnd(8)} ${m.version === 0 ? 'built-in' : (m.createdAt?.toISOString() ?? '')}  held-back F1 ${h.f1.toFixed(3)} (precision ${h.precision.toFixed(3)}, recall ${h.recall.toFixed(3)}, PR-AUC ${h.pr_auc.toFixed(3)})`;
}

function modelText(m: StoredModel): string[] {
  const t = m.document.training;
  const h = t.held_out;
  return [
    // Examples, not accounts: a tenant's model has one per account, the default model one per
    // active day of each retail account it learnt from.
    `${m.document.format} trained with ${t.library} on ${t.examples} labelled examples (${t.positives} positive) in ${t.seconds} s`,
    `labels: ${t.labels.file} from the file, ${t.labels.dispositions} from case dispositions, ${t.labels.skipped} without an account or activity`,
    `held back (stratified, ${h.examples} examples, ${h.positives} positive): precision ${h.precision.toFixed(3)}, recall ${h.recall.toFixed(3)}, F1 ${h.f1.toFixed(3)}, PR-AUC ${h.pr_auc.toFixed(3)} at threshold ${h.threshold.toFixed(3)}`,
  ];
}

// Training a tenant's model, in numbered steps: (1) the labels, from the label file and the case
// dispositions; (2) party labels onto the accounts the party holds; (3) each account's features
// at its label's instant; (4) the fit, with its held-back report; (5) the model stored as the
// tenant's next version. Expected refusals are returned, never thrown.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../../../platform/clock.ts';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import type { DetectionStores } from '../framework/context.ts';
import { examplesFor, type LabelledAccount } from './examples.ts';
import { accountsOfParties, dispositionLabels } from './label-store.ts';
import type { Label } from './labels.ts';
import type { ModelDocument } from './model.ts';
import { saveModel, type StoredModel } from './store.ts';
import { fit } from './train.ts';

export interface TrainingDeps extends DetectionStores {
  clock: Clock;
}

export type TrainingOutcome =
  | { kind: 'done'; model: StoredModel }
  | { kind: 'not_found'; message: string }
  // Not enough usable labels of each class.
  | { kind: 'too_few'; message: string };

export async function trainModel(deps: TrainingDeps, tenantId: string, fileLabels: readonly Label[]): Promise<TrainingOutcome> {
  const started = performance.now();
  const { rows } = await deps.pool.query('SELECT 1 FROM tenants WHERE tenant_id = $1', [tenantId]);
  if (rows.length === 0) return { kind: 'not_found', message: `no tenant ${tenantId}` };
  const now = deps.clock.now();
  // 1. Labels.
  const fromCases = await dispositionLabels(deps.pool, tenantId);
  const labels = [...fileLabels, ...fromCases];
  // 2. Accounts.
  const { labelled, skipped } = await onAccounts(deps, tenantId, labels);
  // 3. Features.
  const baseAsset = await baseAssetOf(deps.pool, tenantId);
  const { examples, withoutActivity } = await examplesFor(deps, tenantId, baseAsset, labelled, now);
  // 4. Fit.
  const fitted = await fit(examples);
  if (fitted.kind !== 'fitted') return { kind: 'too_few', message: `${fitted.message} (labels: ${fileLabels.length} from the file, ${fromCases.length} from case dispositions; ${skipped + withoutActivity} without an account or activity)` };
  const document: ModelDocument = {
    ...fitted.model,
    training: {
      ...fitted.model.training,
      labels: { file: fileLabels.length, dispositions: fromCases.length, skipped: skipped + withoutActivity },
      seconds: Math.round((performance.now() - started) / 100) / 10,
    },
  };
  // 5. Store.
  return { kind: 'done', model: await saveModel(deps.pool, tenantId, document, now) };
}

// Account labels as they are; a party label for every account the party holds. The same account
// and instant labelled twice keeps its last label (a case disposition after the file).
async function onAccounts(deps: TrainingDeps, tenantId: string, labels: readonly Label[]): Promise<{ labelled: LabelledAccount[]; skipped: number }> {
  const held = await accountsOfParties(deps.pool, tenantId, labels.filter((l) => l.kind === 'party').map((l) => l.externalId));
  const byKey = new Map<string, LabelledAccount>();
  let skipped = 0;
  for (const l of labels) {
    const accounts = l.kind === 'account' ? [l.externalId] : (held.get(l.externalId) ?? []);
    if (accounts.length === 0) skipped += 1;
    for (const account of accounts) byKey.set(`${account}\u0000${l.asOf?.getTime() ?? ''}`, { account, label: l.label, asOf: l.asOf });
  }
  return { labelled: [...byKey.values()], skipped };
}

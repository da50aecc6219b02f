// Training a tenant's model, in numbered steps: (1) the labels, from the label file and the case
// dispositions; (2) party labels onto the accounts the party holds, and one label per account;
// (3) each account's features at its label's instant; (4) the fit, with its held-back report;
// (5) the model stored as the tenant's next version. Expected refusals are returned, never thrown.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../../../platform/clock.ts';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import type { DetectionStores } from '../framework/context.ts';
import { examplesFor } from './examples.ts';
import { FEATURE_DAYS } from './features.ts';
import { accountsOfParties, dispositionLabels } from './label-store.ts';
import { oneLabelPerAccount, type AccountLabel, type Label, type LabelConflict } from './labels.ts';
import type { ModelDocument } from './model.ts';
import { saveModel, type StoredModel } from './store.ts';
import { fit } from './train.ts';

export interface TrainingDeps extends DetectionStores {
  clock: Clock;
}

export type TrainingOutcome =
  // warnings: what the operator should know about the labels (accounts labelled both ways).
  | { kind: 'done'; model: StoredModel; warnings: string[] }
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
  // 2. Accounts, one label each.
  const { onAccount, unknown } = await onAccounts(deps, tenantId, labels);
  const { labels: labelled, conflicts } = oneLabelPerAccount(onAccount);
  // 3. Features.
  const baseAsset = await baseAssetOf(deps.pool, tenantId);
  const { examples, withoutActivity } = await examplesFor(deps, tenantId, baseAsset, labelled, now);
  const skipped = unknown.length + withoutActivity.length;
  const unused = unusedLabelNotes(tenantId, unknown, withoutActivity);
  // 4. Fit.
  const fitted = await fit(examples);
  if (fitted.kind !== 'fitted') {
    const disagreeing = conflicts.length ? `; ${conflicts.length} account(s) labelled both ways` : '';
    const summary = `${fitted.message} (labels: ${fileLabels.length} from the file, ${fromCases.length} from case dispositions; ${skipped} without an account or activity${disagreeing})`;
    return { kind: 'too_few', message: [summary, ...unused].join('\n') };
  }
  const document: ModelDocument = {
    ...fitted.model,
    training: {
      ...fitted.model.training,
      labels: { file: fileLabels.length, dispositions: fromCases.length, skipped },
      seconds: Math.round((performance.now() - started) / 100) / 10,
    },
  };
  // 5. Store.
  return { kind: 'done', model: await saveModel(deps.pool, tenantId, document, now), warnings: [...unused, ...conflicts.map(conflictWarning)] };
}

// Account labels as they are; a party label on every account the party holds. An account may
// then have several labels; oneLabelPerAccount keeps one (a case disposition over the file, then
// the later instant), so each account is one example and falls on one side of the split.
// unknown: the labels (as `kind external_id`) on a party that holds no account of the tenant.
// An account label is checked later, with its activity: an account unknown to the tenant has none.
async function onAccounts(deps: TrainingDeps, tenantId: string, labels: readonly Label[]): Promise<{ onAccount: AccountLabel[]; unknown: string[] }> {
  const held = await accountsOfParties(deps.pool, tenantId, labels.filter((l) => l.kind === 'party').map((l) => l.externalId));
  const onAccount: AccountLabel[] = [];
  const unknown: string[] = [];
  for (const l of labels) {
    const accounts = l.kind === 'account' ? [l.externalId] : (held.get(l.externalId) ?? []);
    if (accounts.length === 0) unknown.push(`party ${l.externalId}`);
    for (const account of accounts) onAccount.push({ account, label: l.label, asOf: l.asOf, source: l.source });
  }
  return { onAccount, unknown };
}

// Names shown of the labels training could not use; the counts are always whole.
const NAMED = 10;

function named(ids: readonly string[]): string {
  const distinct = [...new Set(ids)];
  const more = distinct.length > NAMED ? `, and ${distinct.length - NAMED} more` : '';
  return `${distinct.slice(0, NAMED).join(', ')}${more}`;
}

// What to fix in the labels training could not use, by name: counted only, an id of another
// tenant or a typo could not be told from an account that was quiet at its instant.
function unusedLabelNotes(tenantId: string, parties: readonly string[], accounts: readonly string[]): string[] {
  return [
    ...(parties.length ? [`${parties.length} label(s) on a party holding no account of ${tenantId}: ${named(parties)}`] : []),
    ...(accounts.length
      ? [`${accounts.length} account(s) unknown to ${tenantId} or without activity in the ${FEATURE_DAYS} days up to their label's instant: ${named(accounts)}`]
      : []),
  ];
}

function conflictWarning(c: LabelConflict): string {
  const from = c.kept.source === 'disposition' ? 'a case disposition' : 'the label file';
  const at = c.kept.asOf ? ` as of ${c.kept.asOf.toISOString()}` : '';
  return `account ${c.account} is labelled both ways (${c.positive} positive, ${c.negative} negative); kept ${c.kept.label ? 'positive' : 'negative'} from ${from}${at}`;
}

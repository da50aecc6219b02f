// Labelled accounts as training examples: each account's features at its label's instant, read
// through the same prefetch and subject context as detection, so an example is what the detector
// would have seen at that instant (and nothing after it).
import { SubjectContext, type DetectionStores } from '../framework/context.ts';
import { prefetch } from '../framework/prefetch.ts';
import { subjectFeatures } from './features.ts';
import type { Example } from './train.ts';

// Accounts read together (one snapshot statement per chunk), and instants looked up at once.
const CHUNK = 500;
const LOOKUP_CONCURRENCY = 8;

export interface LabelledAccount {
  account: string;
  label: boolean;
  // null: the account's latest activity at or before `now`.
  asOf: Date | null;
}

export interface ExamplesOutcome {
  examples: Example[];
  // Accounts with no activity in the FEATURE_DAYS up to their instant: nothing to learn from, and
  // nothing the detector would score (it answers no_hit without activity). Taken as examples, an
  // as_of long after an account's activity taught the model that an empty window is the label.
  withoutActivity: string[];
}

export async function examplesFor(stores: DetectionStores, tenantId: string, baseAsset: string, labelled: readonly LabelledAccount[], now: Date): Promise<ExamplesOutcome> {
  const instants = await resolveInstants(stores, tenantId, labelled, now);
  const items = labelled.flatMap((l, i) => (instants[i] ? [{ tenantId, subject: { kind: 'account' as const, id: l.account }, at: instants[i]!, label: l.label }] : []));
  const withoutActivity = labelled.filter((_, i) => !instants[i]).map((l) => l.account);
  const examples: Example[] = [];
  for (let i = 0; i < items.length; i += CHUNK) {
    const chunk = items.slice(i, i + CHUNK);
    const prefetched = await prefetch(stores, chunk);
    for (const [j, item] of chunk.entries()) {
      const ctx = new SubjectContext(stores, tenantId, baseAsset, item.subject, item.at, null, prefetched[j]);
      const { values, records } = await subjectFeatures(ctx);
      if (records.length === 0) withoutActivity.push(item.subject.id);
      else examples.push({ values, label: item.label });
    }
  }
  return { examples, withoutActivity };
}

// The instant of each label: its as_of, else the account's latest activity at or before now
// (null when it has none).
async function resolveInstants(stores: DetectionStores, tenantId: string, labelled: readonly LabelledAccount[], now: Date): Promise<Array<Date | null>> {
  const out: Array<Date | null> = new Array(labelled.length).fill(null);
  const after = new Date(now.getTime() + 1);
  let next = 0;
  const worker = async () => {
    while (next < labelled.length) {
      const i = next++;
      const l = labelled[i]!;
      const subject = { tenantId, kind: 'account' as const, id: l.account };
      const last = await stores.aggregates.lastActivity(subject, l.asOf ? new Date(l.asOf.getTime() + 1) : after);
      out[i] = last ? (l.asOf ?? last) : null;
    }
  };
  await Promise.all(Array.from({ length: LOOKUP_CONCURRENCY }, worker));
  return out;
}

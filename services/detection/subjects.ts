// Which subjects a batch of change records asks detection to look at, and when (event time).
// A movement touches both its accounts and both its parties; a control event its subject and the
// subject's party. A subject touched several times in one batch is evaluated once per run of
// touches spanning at most COALESCE_SPAN_MS of event time, at the latest of them: every fact is
// then inside every window of an evaluation. (Evaluating only at the batch's latest touch lost
// short-window patterns whenever a batch spanned days of event time: a catching-up or backfilling
// consumer reads large batches, and a burst in February was judged from an instant in April.)
import { WINDOWS } from '../../platform/aggregates/port.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import type { SubjectRef, TriggerKind } from './framework/detector.ts';
import type { TriggerChange } from './framework/context.ts';

// Failed and reversed movements moved no money: they are evidence for control-event typologies
// (through the customer's control events), not behaviour to evaluate.
const EVALUATED_STATUSES = new Set(['completed', 'pending']);

export interface SubjectWork {
  tenantId: string;
  subject: SubjectRef;
  trigger: TriggerKind;
  at: Date;
  // The change record that triggered the evaluation; null for a scheduled one (schedule.ts).
  change: TriggerChange | null;
  // Event time of the subject's latest fact: `at` unless the evaluation is a scheduled one.
  factAt?: Date;
}

// The shortest window a detector can read (one hour).
export const COALESCE_SPAN_MS = Math.min(...Object.values(WINDOWS));

export function subjectsOf(changes: CanonicalChange[]): SubjectWork[] {
  const touches = new Map<string, SubjectWork[]>();
  const touch = (tenantId: string, subject: SubjectRef, trigger: TriggerKind, change: TriggerChange) => {
    const key = `${tenantId}\u0000${subject.kind}\u0000${subject.id}\u0000${trigger}`;
    const list = touches.get(key) ?? [];
    list.push({ tenantId, subject, trigger, at: new Date(change.occurred_at), change });
    touches.set(key, list);
  };
  for (const change of changes) {
    if (change.object === 'movement') {
      if (!EVALUATED_STATUSES.has(change.status)) continue;
      for (const leg of [change.debit, change.credit]) {
        if (leg.account_id) touch(change.tenant_id, { kind: 'account', id: leg.account_id }, 'movement', change);
        if (leg.party_id) touch(change.tenant_id, { kind: 'party', id: leg.party_id }, 'movement', change);
      }
    } else if (change.object === 'control_event') {
      if (change.subject.kind === 'account') touch(change.tenant_id, { kind: 'account', id: change.subject.external_id }, 'control_event', change);
      if (change.subject_party_id) touch(change.tenant_id, { kind: 'party', id: change.subject_party_id }, 'control_event', change);
    }
  }
  return [...touches.values()].flatMap(coalesce);
}

// One evaluation per run of touches less than COALESCE_SPAN_MS after the run's first, at its latest.
function coalesce(touched: SubjectWork[]): SubjectWork[] {
  if (touched.length === 1) return touched;
  const sorted = [...touched].sort((a, b) => a.at.getTime() - b.at.getTime());
  const runs: SubjectWork[] = [];
  let start = sorted[0]!.at.getTime();
  for (const [i, item] of sorted.entries()) {
    const next = sorted[i + 1];
    // A touch exactly one span after the run began starts a new run: windows are (at - length, at],
    // so an evaluation at it would not hold the run's first.
    if (!next || next.at.getTime() - start >= COALESCE_SPAN_MS) {
      runs.push(item);
      if (next) start = next.at.getTime();
    }
  }
  return runs;
}

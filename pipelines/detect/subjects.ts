// Which subjects a batch of change records asks detection to look at, and when (event time).
// A movement touches both its accounts and both its parties; a control event its subject and the
// subject's party. A subject touched several times in one batch is evaluated once, at the latest
// event time among them (its windows then contain every earlier fact of the batch).
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

export function subjectsOf(changes: CanonicalChange[]): SubjectWork[] {
  const work = new Map<string, SubjectWork>();
  const touch = (tenantId: string, subject: SubjectRef, trigger: TriggerKind, change: TriggerChange) => {
    const at = new Date(change.occurred_at);
    const key = `${tenantId}\u0000${subject.kind}\u0000${subject.id}\u0000${trigger}`;
    const seen = work.get(key);
    if (!seen || seen.at < at) work.set(key, { tenantId, subject, trigger, at, change });
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
  return [...work.values()];
}

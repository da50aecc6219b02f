// The one builder of the fact change records (movements, control events). The canonical pipeline
// builds each from the event it makes canonical (pipelines/canonical/processor.ts); a backtest
// rebuilds them from the stored canonical rows (services/detection/rulesets/backtest.ts). Detection
// must be handed the same record either way, so every field and every rule deriving one (a leg's
// party and country, the base amount, a control event's party) is written here once.
import type { ControlEventChange, MovementChange, MovementLeg } from './canonical-change.ts';

type Money = MovementChange['amount'];

// What every record says of its event. Field order is the record's order on the bus.
// Records written now always say whether a historical import landed the event (the member is
// optional on the bus only for records written before it existed).
export type ChangeHead = Pick<MovementChange, 'tenant_id' | 'event_id' | 'external_id' | 'occurred_at' | 'received_at'> & { historical: boolean };

// A leg as the event names it.
interface NamedLeg {
  account_id?: string | null;
  party_id?: string | null;
  counterparty?: { country?: string | null } | null;
}

// What a record takes from an account an event names.
interface AccountFacts {
  holder_party_id: string | null;
  jurisdiction: string | null;
}

// A leg as downstream stores see it: its party is the one it names, else its account's holder;
// its country is the counterparty's declared one, else the account's jurisdiction.
export function movementLeg(leg: NamedLeg | undefined, account: AccountFacts | undefined): MovementLeg {
  return {
    account_id: leg?.account_id ?? null,
    party_id: leg?.party_id ?? account?.holder_party_id ?? null,
    country: leg?.counterparty?.country ?? account?.jurisdiction ?? null,
  };
}

// The amount in the tenant's base asset at event time: the amount itself when it is in the base
// asset, else its normalised amount, else null (no FX rate was available).
export function baseAmountOf(amount: Money, baseAsset: string, normalized: { status: string; amount?: Money } | null | undefined): Money | null {
  if (amount.asset === baseAsset) return amount;
  return normalized?.status === 'normalized' && normalized.amount ? normalized.amount : null;
}

export function movementChange(head: ChangeHead, movement: Omit<MovementChange, keyof ChangeHead | 'object'>): MovementChange {
  const { tenant_id, event_id, external_id, occurred_at, received_at, historical } = head;
  const { type, status, amount, base_amount, debit, credit, data } = movement;
  return { tenant_id, event_id, external_id, occurred_at, received_at, historical, object: 'movement', type, status, amount, base_amount, debit, credit, data };
}

// A control event's party: its subject when that is a party, else the holder of its subject
// account (holderOf is asked only for an account).
export function subjectPartyOf(subject: ControlEventChange['subject'], holderOf: (accountId: string) => string | null | undefined): string | null {
  if (subject.kind === 'party') return subject.external_id;
  return subject.kind === 'account' ? (holderOf(subject.external_id) ?? null) : null;
}

export function controlEventChange(head: ChangeHead, event: Omit<ControlEventChange, keyof ChangeHead | 'object'>): ControlEventChange {
  const { tenant_id, event_id, external_id, occurred_at, received_at, historical } = head;
  const { type, subject, subject_party_id, data } = event;
  return { tenant_id, event_id, external_id, occurred_at, received_at, historical, object: 'control_event', type, subject, subject_party_id, data };
}

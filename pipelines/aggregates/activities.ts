import type { Activity, Retraction, Subject } from '../../platform/aggregates/port.ts';
import { correctedMovementOf, type MovementChange, type MovementLeg } from '../../schemas/bus/canonical-change.ts';
import { isPlainObject } from '../../schemas/validation/validate-item.ts';

// Money that durably moved: a failed movement never moved, and a reversed one was undone, so
// neither is behaviour of its accounts and parties. A pending movement counts: the customer has
// committed to it, and behaviour is judged when it happens, not when it settles.
const DURABLE_STATUSES = new Set(['completed', 'pending']);
const CASH_TYPES = new Set(['cash_in', 'cash_out']);

type Side = 'debit' | 'credit';
const SIDES: readonly Side[] = ['debit', 'credit'];

// One movement as each of its accounts and parties sees it: the debit side's subjects see money
// go out, the credit side's see it come in. A transfer between two accounts of one party gives
// that party both an 'out' and an 'in' activity, without a counterparty: a party moving money
// between its own accounts deals with nobody.
export function activitiesOf(change: MovementChange): Activity[] {
  if (!DURABLE_STATUSES.has(change.status)) return [];
  const { debit, credit } = change;
  // Shared by the (up to four) activities of the movement; none of them is ever mutated.
  const occurredAt = new Date(change.occurred_at);
  const amount = { value: BigInt(change.amount.value), scale: change.amount.scale, asset: change.amount.asset };
  const baseValue = change.base_amount ? BigInt(change.base_amount.value) : null;
  const cash = change.data.cash === true || CASH_TYPES.has(change.type);
  const corridor = debit.country && credit.country ? `${debit.country}>${credit.country}` : null;
  const activities: Activity[] = [];
  const see = (side: Side, kind: Subject['kind'], id: string, counterparty: string | null, counterpartyCountry: string | null) =>
    activities.push({
      subject: { tenantId: change.tenant_id, kind, id },
      movementId: change.external_id,
      eventId: change.event_id,
      direction: side === 'debit' ? 'out' : 'in',
      occurredAt,
      amount,
      baseValue,
      cash,
      counterparty,
      counterpartyCountry,
      corridor,
    });
  for (const side of SIDES) {
    const leg = side === 'debit' ? debit : credit;
    const otherSide: Side = side === 'debit' ? 'credit' : 'debit';
    const other = side === 'debit' ? credit : debit;
    const otherData = change.data[otherSide];
    const external = externalKey(isPlainObject(otherData) ? otherData.counterparty : undefined);
    if (leg.account_id) see(side, 'account', leg.account_id, accountCounterparty(other, external), other.country);
    if (leg.party_id) see(side, 'party', leg.party_id, other.party_id === leg.party_id ? null : partyCounterparty(other, external), other.country);
  }
  return activities;
}

// An account deals with accounts: the other account when there is one, else its party.
function accountCounterparty(other: MovementLeg, external: string | null): string | null {
  if (other.account_id) return `account:${other.account_id}`;
  if (other.party_id) return `party:${other.party_id}`;
  return external;
}

// A party deals with parties: the other party when known, else the other account.
function partyCounterparty(other: MovementLeg, external: string | null): string | null {
  if (other.party_id) return `party:${other.party_id}`;
  if (other.account_id) return `account:${other.account_id}`;
  return external;
}

// The retraction a correction makes (correctedMovementOf). Its own status decides only whether it
// is an activity: one that says the payment was reversed retracts the original and puts nothing
// in its place.
export function retractionOf(change: MovementChange): Retraction | null {
  const original = correctedMovementOf(change);
  return original === null ? null : { tenantId: change.tenant_id, movementId: original, by: change.external_id };
}

// Someone outside the tenant, as the movement describes them: `external:<institution>/<instrument_ref>`,
// either part empty when not given. The name as given is left out: free text, spelt differently
// from one movement to the next, it would split one counterparty into several.
function externalKey(counterparty: unknown): string | null {
  if (!isPlainObject(counterparty)) return null;
  const institution = typeof counterparty.institution === 'string' ? counterparty.institution : '';
  const instrument = typeof counterparty.instrument_ref === 'string' ? counterparty.instrument_ref : '';
  if (!institution && !instrument) return null;
  return `external:${institution}/${instrument}`;
}

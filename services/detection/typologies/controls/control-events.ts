// Reading and showing control events the same way in every control detector.
import type { ControlEventFact, SubjectContext } from '../../framework/context.ts';

// The control events a detector weighs for its subject. A party sees its own events and those
// of all its accounts (as ctx.controlEvents gives them). An account sees its own and its
// holder's, not its sibling accounts': a failure on another account of the same customer says
// nothing about this one, and the party's own evaluation already counts it.
export async function controlEventsFor(ctx: SubjectContext, since: Date, types: readonly string[]): Promise<ControlEventFact[]> {
  const events = await ctx.controlEvents(since, types);
  if (ctx.subject.kind === 'party') return events;
  const holder = await ctx.partyId();
  return events.filter(
    (event) =>
      (event.subject.kind === 'account' && event.subject.externalId === ctx.subject.id) ||
      (event.subject.kind === 'party' && event.subject.externalId === holder),
  );
}

// Outcome, reason and severity are the customer's free text: fold case, spaces and hyphens so
// 'Confirmed Match', 'confirmed-match' and 'CONFIRMED_MATCH' compare equal.
export function folded(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim().toLowerCase().replace(/[\s-]+/g, '_');
  return text || null;
}

export function foldedSet(values: readonly string[]): ReadonlySet<string> {
  return new Set(values.map((value) => folded(value)).filter((value): value is string => value !== null));
}

// A control event as evidence shows it: what the customer's control reported, and when. Hashed
// device and ip references are left out (they identify nobody to an analyst).
export function describeEvent(event: ControlEventFact, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const shown: Record<string, unknown> = {
    id: event.externalId,
    type: event.type,
    occurred_at: event.occurredAt.toISOString(),
    subject: `${event.subject.kind}:${event.subject.externalId}`,
  };
  for (const field of ['outcome', 'reason_code', 'customer_severity', 'actor_kind', 'linked_movement_id', 'amount'] as const) {
    if (event.data[field] !== undefined) shown[field] = event.data[field];
  }
  return { ...shown, ...extra };
}

// The movements the customer linked to these events, latest event first, each once.
export function linkedMovements(events: readonly ControlEventFact[]): string[] {
  const ids = [...events].reverse().map((event) => event.data.linked_movement_id).filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

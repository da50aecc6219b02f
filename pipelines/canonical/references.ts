import type { Family } from '../../schemas/families/index.ts';
import { isPlainObject } from '../../schemas/validation/validate-item.ts';

type ReferencedKind = 'party' | 'account' | 'instrument';

export interface Reference {
  object: ReferencedKind;
  external_id: string;
}

// The entities an event names and must wait for: a movement's legs, agent and instrument; a
// relationship's ends; a control event's subject. Entities themselves wait for nothing (an
// account's holder is resolved when it is read).
export function referencesOf(family: Family, data: Record<string, unknown>): Reference[] {
  const refs: Reference[] = [];
  const add = (object: ReferencedKind, id: unknown) => {
    if (typeof id === 'string' && !refs.some((r) => r.object === object && r.external_id === id)) refs.push({ object, external_id: id });
  };
  const addRef = (ref: unknown) => {
    if (isPlainObject(ref) && (ref.kind === 'party' || ref.kind === 'account' || ref.kind === 'instrument')) add(ref.kind, ref.external_id);
  };
  switch (family) {
    case 'movement':
      for (const leg of [data.debit, data.credit]) {
        if (!isPlainObject(leg)) continue;
        add('account', leg.account_id);
        add('party', leg.party_id);
      }
      add('party', data.agent_party_id);
      add('instrument', data.instrument_ref);
      break;
    case 'relationship':
      addRef(data.from);
      addRef(data.to);
      break;
    case 'control_event':
      addRef(data.subject);
      break;
    case 'party':
    case 'account':
    case 'instrument':
      break;
  }
  return refs;
}

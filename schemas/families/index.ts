import type { z } from 'zod';
import { accountDataSchema } from './account.ts';
import { controlEventDataSchema } from './control-event.ts';
import { instrumentDataSchema } from './instrument.ts';
import { movementDataSchema } from './movement.ts';
import { partyDataSchema } from './party.ts';
import { relationshipDataSchema } from './relationship.ts';

// The six families: their data schema, whether they are versioned entities (dedup on sequence)
// or immutable facts, the ingest path, and where Money values sit inside their data.
export const FAMILIES = {
  party: { kind: 'entity', path: '/v1/parties', data: partyDataSchema },
  account: { kind: 'entity', path: '/v1/accounts', data: accountDataSchema },
  instrument: { kind: 'entity', path: '/v1/instruments', data: instrumentDataSchema },
  movement: { kind: 'fact', path: '/v1/movements', data: movementDataSchema },
  relationship: { kind: 'entity', path: '/v1/relationships', data: relationshipDataSchema },
  control_event: { kind: 'fact', path: '/v1/control-events', data: controlEventDataSchema },
} as const satisfies Record<string, { kind: 'entity' | 'fact'; path: string; data: z.ZodType }>;

export type Family = keyof typeof FAMILIES;
export const FAMILY_NAMES = Object.keys(FAMILIES) as [Family, ...Family[]];

export function isFamily(name: unknown): name is Family {
  return typeof name === 'string' && Object.hasOwn(FAMILIES, name);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

// Every Money value inside a family's data, with its path relative to `data`. Used for the asset
// registry check, which needs the tenant's registry and so runs after the schema parse.
export function moneyFields(family: Family, data: unknown): Array<{ path: string[]; money: unknown }> {
  const d = isObject(data) ? data : {};
  const found: Array<{ path: string[]; money: unknown }> = [];
  const add = (path: string[], money: unknown) => {
    if (money !== undefined) found.push({ path, money });
  };
  switch (family) {
    case 'movement':
      add(['amount'], d.amount);
      if (Array.isArray(d.fees)) d.fees.forEach((fee: unknown, i: number) => add(['fees', String(i)], fee));
      break;
    case 'party':
      add(['expected_profile', 'declared_monthly_volume'], isObject(d.expected_profile) ? d.expected_profile.declared_monthly_volume : undefined);
      break;
    case 'control_event':
      add(['amount'], d.amount);
      break;
    case 'account':
    case 'instrument':
    case 'relationship':
      break;
  }
  return found;
}

;

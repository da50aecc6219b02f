import type { z } from 'zod';
import type { Money } from '../primitives/money.ts';
import type { accountDataSchema } from './account.ts';
import type { movementDataSchema } from './movement.ts';
import type { partyDataSchema } from './party.ts';
import type { relationshipDataSchema } from './relationship.ts';

// A family's data as the canonical model stores it (canonical_entities.data,
// canonical_movements.data, the change records): what ingest accepted, with each identifying value
// replaced by its keyed hash `<field>_hash` (pipelines/canonical/identifiers.ts).

type PartyInput = z.input<typeof partyDataSchema>;
type PartyIdentifier = NonNullable<PartyInput['identifiers']>[number];

export type StoredPartyData = Omit<PartyInput, 'identifiers'> & {
  identifiers?: Array<Omit<PartyIdentifier, 'value'> & { value_hash: string }>;
};
export type StoredAccountData = z.input<typeof accountDataSchema>;
export type StoredRelationshipData = z.input<typeof relationshipDataSchema>;
export type StoredMovementData = Omit<z.input<typeof movementDataSchema>, 'device_ref' | 'ip'> & {
  device_ref_hash?: string;
  ip_hash?: string;
};

// A movement's amount in its tenant's base asset at event time, as the canonical pipeline stores
// it with the movement (canonical_movements.normalized; absent when already in the base asset).
export type StoredNormalization =
  | {
      status: 'normalized';
      amount: Money;
      fx: {
        base: string;
        quote: string;
        rate: string;
        rate_scale: number;
        direction: 'direct' | 'inverse';
        rate_file_id: string;
        rate_valid_from: string;
        computed_at: string;
      };
    }
  // No rate for the pair at that time: no amount, and the reason. Never a guess.
  | { status: 'unavailable'; reason: 'no_rate'; pair: string; at: string };

// The canonical change records (schemas/bus/canonical-change.ts, TypeScript interfaces) as zod
// schemas, so that their Avro schemas can be derived like the envelopes'. The compile-time checks
// at the bottom fail the type check when either side changes without the other: the interfaces
// stay the source of truth, these schemas cannot drift from them.

import { z } from 'zod';
import type { ControlEventChange, EntityChange, MovementChange } from '../canonical-change.ts';

const changeMoneySchema = z.strictObject({
  // Integer minor units, as a decimal string.
  value: z.string(),
  asset: z.string(),
  scale: z.number().int(),
});

const changeBase = {
  tenant_id: z.string(),
  event_id: z.string(),
  external_id: z.string(),
  occurred_at: z.string(),
  received_at: z.string(),
  historical: z.boolean().optional(),
};

// The canonical model's data, with identifying values already hashed: free-form JSON.
const changeData = z.record(z.string(), z.unknown());

export const entityChangeSchema = z.strictObject({
  ...changeBase,
  object: z.enum(['party', 'account', 'instrument', 'relationship']),
  sequence: z.number().int().nullable(),
  current: z.boolean(),
  data: changeData,
});

const movementLegSchema = z.strictObject({
  account_id: z.string().nullable(),
  party_id: z.string().nullable(),
  country: z.string().nullable(),
});

export const movementChangeSchema = z.strictObject({
  ...changeBase,
  object: z.literal('movement'),
  type: z.string(),
  status: z.string(),
  amount: changeMoneySchema,
  base_amount: changeMoneySchema.nullable(),
  debit: movementLegSchema,
  credit: movementLegSchema,
  data: changeData,
});

export const controlEventChangeSchema = z.strictObject({
  ...changeBase,
  object: z.literal('control_event'),
  type: z.string(),
  subject: z.strictObject({ kind: z.string(), external_id: z.string() }),
  subject_party_id: z.string().nullable(),
  data: changeData,
});

// Exactly the same type, in both directions (not mere assignability).
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const entitySame: Same<z.infer<typeof entityChangeSchema>, EntityChange> = true;
const movementSame: Same<z.infer<typeof movementChangeSchema>, MovementChange> = true;
const controlSame: Same<z.infer<typeof controlEventChangeSchema>, ControlEventChange> = true;
export const CHANGE_SCHEMAS_MATCH_INTERFACES = entitySame && movementSame && controlSame;

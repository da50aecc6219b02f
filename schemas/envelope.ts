import { z } from 'zod';
import { FAMILIES, type Family } from './families/index.ts';
import { externalId } from './primitives/fields.ts';
import { dateTimeSchema } from './primitives/timestamp.ts';

export const SCHEMA_VERSION = '2026-09-01';

// The envelope of every ingested event, strict: received_at is the service's, never sent.
function envelopeSchema<D extends z.ZodType>(data: D) {
  return z.strictObject({
    external_id: externalId,
    schema_version: z.literal(SCHEMA_VERSION),
    occurred_at: dateTimeSchema,
    recorded_at: dateTimeSchema.optional(),
    // int() already bounds it to the safe integers (a bound of our own repeated its finding).
    sequence: z.number().int().min(0).optional(),
    data,
  });
}

export const ENVELOPES = {
  party: envelopeSchema(FAMILIES.party.data),
  account: envelopeSchema(FAMILIES.account.data),
  instrument: envelopeSchema(FAMILIES.instrument.data),
  movement: envelopeSchema(FAMILIES.movement.data),
  relationship: envelopeSchema(FAMILIES.relationship.data),
  control_event: envelopeSchema(FAMILIES.control_event.data),
} satisfies Record<Family, z.ZodType>;

export type Envelope<F extends Family = Family> = z.infer<(typeof ENVELOPES)[F]>;

// What a client may send, as published (OpenAPI, the SDK's types): facts carry no sequence.
// Validation keeps ENVELOPES, so that validateItem refuses a fact's sequence with its own message.
export const PUBLISHED_ENVELOPES = {
  ...ENVELOPES,
  movement: ENVELOPES.movement.omit({ sequence: true }),
  control_event: ENVELOPES.control_event.omit({ sequence: true }),
} satisfies Record<Family, z.ZodType>;

// One batch item: the family name and its envelope (documentation and typing, so as published;
// items are validated by validateItem so that every finding gets its governed code).
export const batchItemSchema = z.discriminatedUnion('object', [
  z.strictObject({ object: z.literal('party'), event: PUBLISHED_ENVELOPES.party }),
  z.strictObject({ object: z.literal('account'), event: PUBLISHED_ENVELOPES.account }),
  z.strictObject({ object: z.literal('instrument'), event: PUBLISHED_ENVELOPES.instrument }),
  z.strictObject({ object: z.literal('movement'), event: PUBLISHED_ENVELOPES.movement }),
  z.strictObject({ object: z.literal('relationship'), event: PUBLISHED_ENVELOPES.relationship }),
  z.strictObject({ object: z.literal('control_event'), event: PUBLISHED_ENVELOPES.control_event }),
]);

export const MAX_BATCH_ITEMS = 1000;

// The outer shape of a batch; items are validated one by one so a bad item is its own result.
export const batchRequestSchema = z.strictObject({
  events: z.array(z.unknown()).min(1).max(MAX_BATCH_ITEMS),
});

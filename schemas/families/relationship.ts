import { z } from 'zod';
import { dateTimeSchema } from '../primitives/timestamp.ts';
import { entityRefSchema, text, upTo } from '../primitives/fields.ts';

export const relationshipDataSchema = z.strictObject({
  type: z.enum([
    'beneficial_owner', 'authorized_signer', 'joint_holder', 'employer', 'household_member',
    'parent_org', 'merchant_owner', 'agent', 'referral', 'onboarding', 'owns_instrument',
    'funds_account', 'same_as', 'other',
  ]),
  from: entityRefSchema,
  to: entityRefSchema,
  valid_from: dateTimeSchema,
  valid_to: dateTimeSchema.optional(),
  ownership_pct: z.number().min(0).max(100).optional(),
  source: z.enum(['kyc', 'declared', 'derived_by_customer']).optional(),
  confidence: z.number().min(0).max(1).optional(),
  external_ref: text(1, 256).optional(),
  correction_reason: upTo(256).optional(),
});

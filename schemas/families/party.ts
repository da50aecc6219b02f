import { z } from 'zod';
import { dateTimeSchema, fullDateSchema } from '../primitives/timestamp.ts';
import { moneySchema } from '../primitives/money.ts';
import { country, STORABLE, text, upTo } from '../primitives/fields.ts';

export const partyDataSchema = z.strictObject({
  type: z.enum([
    'person', 'business', 'merchant', 'agent', 'financial_institution',
    'internal', 'government', 'ngo', 'trust', 'other',
  ]),
  status: text(1, 64),
  created_at: dateTimeSchema,
  // No length bound (the spec's table has none), but nothing a store cannot hold.
  legal_names: z.array(z.string().refine(...STORABLE)).max(20).optional(),
  birth_or_inc_date: fullDateSchema.optional(),
  identifiers: z
    .array(
      z.strictObject({
        type: z.enum(['national_id', 'tax_id', 'passport', 'phone', 'email', 'other']),
        value: text(1, 256),
        verification_status: z.enum(['verified', 'unverified', 'pending', 'failed']).optional(),
      }),
    )
    .max(50)
    .optional(),
  jurisdictions: z
    .strictObject({ nationality: country.optional(), residency: country.optional(), registration: country.optional() })
    .optional(),
  addresses: z
    .array(
      z.strictObject({
        line1: upTo(256).optional(),
        line2: upTo(256).optional(),
        city: upTo(128).optional(),
        region: upTo(128).optional(),
        postal_code: upTo(32).optional(),
        country: country.optional(),
      }),
    )
    .max(20)
    .optional(),
  occupation: upTo(256).optional(),
  industry_code: upTo(32).optional(),
  expected_profile: z
    .strictObject({
      declared_monthly_volume: moneySchema.optional(),
      corridors: z.array(z.string().refine(...STORABLE)).max(50).optional(),
      cash_intensity: z.enum(['low', 'medium', 'high']).optional(),
    })
    .optional(),
  kyc: z.strictObject({ tier: text(1, 64).optional(), updated_at: dateTimeSchema.optional() }).optional(),
  screening_status_reported: z
    .strictObject({
      status: z.enum(['clear', 'potential_match', 'confirmed_match', 'pending', 'unknown']),
      pep: z.boolean().optional(),
      as_of: dateTimeSchema.optional(),
      provider: upTo(128).optional(),
    })
    .optional(),
  segment: z
    .enum([
      'consumer', 'merchant', 'remittance_agent', 'cash_agent', 'payroll',
      'marketplace', 'financial_institution', 'other',
    ])
    .optional(),
  external_ref: text(1, 256).optional(),
  correction_reason: upTo(256).optional(),
});

import { z } from 'zod';
import { dateTimeSchema } from '../primitives/timestamp.ts';
import { assetCode, country, text, upTo } from '../primitives/fields.ts';

export const accountDataSchema = z.strictObject({
  type: z.enum(['wallet', 'checking', 'savings', 'merchant', 'settlement', 'stored_value', 'loan', 'remittance', 'other']),
  holder_party_id: text(1, 256),
  asset: assetCode,
  status: z.enum([
    'active', 'dormant', 'closed', 'restricted', 'frozen', 'unrestricted',
    'withdrawals_restricted', 'account_restricted', 'transfers_suspended',
  ]),
  opened_at: dateTimeSchema,
  product_code: text(1, 64).optional(),
  purpose: upTo(256).optional(),
  expected_use: upTo(512).optional(),
  agent_of_opening_party_id: text(1, 256).optional(),
  jurisdiction: country.optional(),
  closed_at: dateTimeSchema.optional(),
  closure_reason: upTo(256).optional(),
  external_ref: text(1, 256).optional(),
  correction_reason: upTo(256).optional(),
});

import { z } from 'zod';
import { dateTimeSchema } from '../primitives/timestamp.ts';
import { country, text, upTo } from '../primitives/fields.ts';

export const instrumentDataSchema = z.strictObject({
  type: z.enum(['external_bank_account', 'card_token', 'mobile_wallet', 'payment_credential', 'virtual_account', 'other']),
  status: text(1, 64),
  first_seen_at: dateTimeSchema,
  issuer_ref: text(1, 128).optional(),
  masked_identifier: text(1, 64).optional(),
  country: country.optional(),
  holder_name_as_entered: upTo(256).optional(),
  verification_status: z.enum(['verified', 'unverified', 'pending', 'failed']).optional(),
  fingerprint: text(1, 128).optional(),
  external_ref: text(1, 256).optional(),
});

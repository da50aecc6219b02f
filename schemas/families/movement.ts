import { z } from 'zod';
import { moneySchema } from '../primitives/money.ts';
import { country, ipAddress, text, upTo } from '../primitives/fields.ts';

const counterpartySchema = z.strictObject({
  institution: text(1, 128).optional(),
  country: country.optional(),
  name_as_given: upTo(256).optional(),
  instrument_ref: text(1, 256).optional(),
});

const legSchema = z.strictObject({
  account_id: text(1, 256).optional(),
  party_id: text(1, 256).optional(),
  counterparty: counterpartySchema.optional(),
});

export const MOVEMENT_STATUSES = ['completed', 'pending', 'failed', 'reversed'] as const;

export const movementDataSchema = z.strictObject({
  type: z.enum([
    'p2p', 'merchant_payment', 'deposit', 'withdrawal', 'cash_in', 'cash_out', 'remittance',
    'ach', 'wire', 'refund', 'reversal', 'settlement', 'internal_transfer', 'other',
  ]),
  status: z.enum(MOVEMENT_STATUSES),
  amount: moneySchema,
  debit: legSchema,
  credit: legSchema,
  links: z
    .strictObject({
      reverses: text(1, 256).optional(),
      refunds: text(1, 256).optional(),
      settles: text(1, 256).optional(),
      part_of_batch: text(1, 256).optional(),
      correction_of: text(1, 256).optional(),
    })
    .optional(),
  cash: z.boolean().optional(),
  memo: upTo(1000).optional(),
  channel: text(1, 64).optional(),
  rail: text(1, 64).optional(),
  product: text(1, 64).optional(),
  agent_party_id: text(1, 256).optional(),
  instrument_ref: text(1, 256).optional(),
  device_ref: text(1, 256).optional(),
  ip: ipAddress.optional(),
  geo: z
    .strictObject({
      country: country.optional(),
      region: upTo(128).optional(),
      lat: z.number().min(-90).max(90).optional(),
      lon: z.number().min(-180).max(180).optional(),
    })
    .optional(),
  fees: z.array(moneySchema).max(20).optional(),
  external_ref: text(1, 256).optional(),
  correction_reason: upTo(256).optional(),
});

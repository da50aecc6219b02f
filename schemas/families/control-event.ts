import { z } from 'zod';
import { moneySchema } from '../primitives/money.ts';
import { entityRefSchema, ipAddress, text } from '../primitives/fields.ts';

export const controlEventDataSchema = z.strictObject({
  type: z.enum([
    'transfer.failed', 'withdrawal.blocked', 'velocity_check.failed', 'sanctions.hit_reported',
    'screening.status_changed', 'kyc.upgraded', 'kyc.downgraded', 'kyc.verification_failed',
    'auth.failed', 'auth.suspicious_login', 'device.changed', 'password.reset',
    'beneficiary.added', 'account.restricted_by_customer', 'transfer.retried_repeatedly', 'limit.changed',
  ]),
  subject: entityRefSchema,
  outcome: text(1, 64).optional(),
  reason_code: text(1, 128).optional(),
  device_ref: text(1, 256).optional(),
  ip: ipAddress.optional(),
  actor_kind: z.enum(['customer_system', 'end_user']).optional(),
  customer_severity: text(1, 32).optional(),
  linked_movement_id: text(1, 256).optional(),
  amount: moneySchema.optional(),
  external_ref: text(1, 256).optional(),
});

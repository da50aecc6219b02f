import { z } from 'zod';
import { externalId } from './primitives/fields.ts';
import { moneySchema } from './primitives/money.ts';
import { dateTimeSchema } from './primitives/timestamp.ts';

// Reconciliations: a customer's control total for one scope, one asset and one event-time period,
// compared with the movements the service holds for exactly the same definition.
export const MOVEMENT_STATUSES = ['completed', 'pending', 'failed', 'reversed'] as const;
export const RECONCILIATION_STATUSES = ['matched', 'mismatched'] as const;

export const reconciliationRequestSchema = z.strictObject({
  // The tenant's movements, or those of one account or one party (a party's: its own legs and its
  // accounts' legs, as the canonical model resolves them).
  scope: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('tenant') }),
    z.strictObject({ kind: z.literal('account'), external_id: externalId }),
    z.strictObject({ kind: z.literal('party'), external_id: externalId }),
  ]),
  // in: the scope on the credit side; out: on the debit side; both: either (a movement between two
  // accounts of the scope counts once). Tenant scope takes only both.
  direction: z.enum(['in', 'out', 'both']),
  // Movements of this asset only; the declared sum is in it.
  asset: z.string(),
  period: z.strictObject({
    from: dateTimeSchema,
    to: dateTimeSchema,
    // Bounds on occurred_at: [from, to) unless stated otherwise.
    from_inclusive: z.boolean().default(true),
    to_inclusive: z.boolean().default(false),
  }),
  declared: z.strictObject({
    count: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    sum: moneySchema,
    // Optional counts per movement status; each is compared too.
    statuses: z.partialRecord(z.enum(MOVEMENT_STATUSES), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)).optional(),
  }),
  // The declaration this one corrects (rcn_…); declarations themselves never change.
  corrects: z.string().optional(),
});
export type ReconciliationRequest = z.infer<typeof reconciliationRequestSchema>;

const instant = z.string().meta({ format: 'date-time' });
const id = z.string().regex(/^rcn_[0-9a-f-]{36}$/);

// Why observed and declared may differ: events of the scope and period that the service holds but
// has not (yet) counted, by reason, with a sample of each.
export const explanationSchema = z.strictObject({
  count_difference: z.number().int(),
  sum_difference: z.string(),
  unsettled: z.array(
    z.strictObject({
      reason: z.enum(['pending', 'held', 'quarantined', 'rejected']),
      count: z.number().int(),
      sample: z.array(z.strictObject({ event_id: z.string(), external_id: z.string(), occurred_at: instant })),
    }),
  ),
});

export const reconciliationResultSchema = z.strictObject({
  status: z.enum(RECONCILIATION_STATUSES),
  computed_at: instant,
  observed: z.strictObject({ count: z.number().int(), sum: moneySchema, statuses: z.record(z.string(), z.number().int()) }),
  explanation: explanationSchema,
});

export const reconciliationSchema = z.strictObject({
  reconciliation_id: id,
  scope: z.strictObject({ kind: z.enum(['tenant', 'account', 'party']), external_id: z.string().optional() }),
  direction: z.enum(['in', 'out', 'both']),
  asset: z.string(),
  period: z.strictObject({ from: instant, to: instant, from_inclusive: z.boolean(), to_inclusive: z.boolean() }),
  declared: z.strictObject({ count: z.number().int(), sum: moneySchema, statuses: z.record(z.string(), z.number().int()).nullable() }),
  corrects: id.nullable(),
  created_at: instant,
  status: z.enum(RECONCILIATION_STATUSES),
  result: reconciliationResultSchema,
  // Every distinct result, oldest first (the detail read only).
  history: z.array(reconciliationResultSchema).optional(),
});

export const reconciliationPageSchema = z.strictObject({
  data: z.array(reconciliationSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

export type ReconciliationView = z.infer<typeof reconciliationSchema>;
export type ReconciliationResult = z.infer<typeof reconciliationResultSchema>;
export type Explanation = z.infer<typeof explanationSchema>;

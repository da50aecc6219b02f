import { z } from 'zod';
import { movementDataSchema } from './families/movement.ts';
import { externalId, text } from './primitives/fields.ts';
import { moneySchema, moneyViewSchema } from './primitives/money.ts';
import { dateTimeSchema } from './primitives/timestamp.ts';

// Reconciliations: a customer's control total for one scope, one asset and one event-time period,
// compared with the movements the service holds for exactly the same definition.
const MOVEMENT_STATUSES = ['completed', 'pending', 'failed', 'reversed'] as const;
export const RECONCILIATION_STATUSES = ['matched', 'mismatched'] as const;
const RECONCILIATION_BASES = ['occurred', 'recorded'] as const;
const MOVEMENT_TYPES = movementDataSchema.shape.type.options;
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

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
  // occurred: the period bounds occurred_at (event time); recorded: the time the service recorded
  // (booked) the movement.
  basis: z.enum(RECONCILIATION_BASES).default('occurred'),
  // Narrow the scope further; every given filter must hold.
  filters: z
    .strictObject({
      types: z.array(z.enum(MOVEMENT_TYPES)).min(1).max(MOVEMENT_TYPES.length).optional(),
      rails: z.array(text(1, 64)).min(1).max(50).optional(),
      // The other side of the movement (either side for a tenant scope): its account_id, its
      // party_id or its counterparty institution.
      counterparty: text(1, 256).optional(),
      // Movements of one import (imp_…).
      import_id: z.string().optional(),
    })
    .optional(),
  declared: z.strictObject({
    count: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    sum: moneySchema,
    // The statuses counted, with a count (and optionally a sum) for each; each is compared too.
    // Without it only completed movements are counted.
    statuses: z.partialRecord(z.enum(MOVEMENT_STATUSES), z.union([count, z.strictObject({ count, sum: moneySchema })])).optional(),
  }),
  // Materiality: within it the result is matched and the difference still shown. sum_minor is an
  // absolute difference in minor units of the asset; sum_bps a fraction of the declared sum in
  // basis points (one of the two); count a difference in count (default 0).
  tolerance: z
    .strictObject({
      sum_minor: z.string().regex(/^\d{1,38}$/, 'must be a non-negative integer of minor units').optional(),
      sum_bps: z.number().int().min(0).max(10_000).optional(),
      count: count.optional(),
    })
    .optional(),
  // The customer's own reference, unique in the tenant: declaring again with the same reference
  // and the same content answers the original; with other content it is a conflict.
  customer_reference: text(1, 128).optional(),
  // The declaration this one corrects (rcn_…); declarations themselves never change.
  corrects: z.string().optional(),
});

const instant = z.string().meta({ format: 'date-time' });
const id = z.string().regex(/^rcn_[0-9a-f-]{36}$/);

// Why observed and declared may differ: events of the scope and period that the service holds but
// has not (yet) counted, by reason, with a sample of each.
const explanationSchema = z.strictObject({
  count_difference: z.number().int(),
  // Observed minus declared.
  sum_difference: moneyViewSchema,
  // Matched only because the differences are within the declared tolerance.
  within_tolerance: z.boolean().optional(),
  // More unsettled events exist than one comparison reads; the items list has them all.
  unsettled_truncated: z.boolean().optional(),
  unsettled: z.array(
    z.strictObject({
      reason: z.enum(['pending', 'held', 'quarantined', 'rejected']),
      count: z.number().int(),
      sample: z.array(z.strictObject({ event_id: z.string(), external_id: z.string(), occurred_at: instant })),
    }),
  ),
});

const reconciliationResultSchema = z.strictObject({
  status: z.enum(RECONCILIATION_STATUSES),
  computed_at: instant,
  observed: z.strictObject({
    count: z.number().int(),
    sum: moneyViewSchema,
    // Every status seen (counted or not), after corrections and reversals: count, and sum.
    statuses: z.record(z.string(), z.number().int()),
    status_sums: z.record(z.string(), moneyViewSchema).optional(),
    // The counted sum in the tenant's base asset; null when a movement had no rate.
    base_sum: moneyViewSchema.nullable().optional(),
  }),
  explanation: explanationSchema,
});

export const reconciliationSchema = z.strictObject({
  reconciliation_id: id,
  scope: z.strictObject({ kind: z.enum(['tenant', 'account', 'party']), external_id: z.string().optional() }),
  direction: z.enum(['in', 'out', 'both']),
  asset: z.string(),
  period: z.strictObject({ from: instant, to: instant, from_inclusive: z.boolean(), to_inclusive: z.boolean() }),
  declared: z.strictObject({
    count: z.number().int(),
    sum: moneyViewSchema,
    statuses: z.record(z.string(), z.number().int()).nullable(),
    status_sums: z.record(z.string(), moneyViewSchema).nullable().optional(),
  }),
  counted_statuses: z.array(z.string()).optional(),
  basis: z.enum(RECONCILIATION_BASES).optional(),
  filters: z
    .strictObject({ types: z.array(z.string()).optional(), rails: z.array(z.string()).optional(), counterparty: z.string().optional(), import_id: z.string().optional() })
    .optional(),
  tolerance: z.strictObject({ sum_minor: z.string().optional(), sum_bps: z.number().int().optional(), count: z.number().int() }).optional(),
  customer_reference: z.string().nullable().optional(),
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

import { z } from 'zod';
import { externalId } from './primitives/fields.ts';

// Declarations a tenant expects: one per UTC day for a scope and an asset, due a number of
// minutes after the day ends. One that has not arrived when due is announced (coverage.degraded).
export const expectationRequestSchema = z.strictObject({
  scope: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('tenant') }),
    z.strictObject({ kind: z.literal('account'), external_id: externalId }),
    z.strictObject({ kind: z.literal('party'), external_id: externalId }),
  ]),
  asset: z.string(),
  cadence: z.literal('daily').default('daily'),
  // Minutes after the end of the UTC day by which its declaration must have arrived (at most a week).
  due_after_minutes: z.number().int().min(0).max(10_080),
});

const instant = z.string().meta({ format: 'date-time' });

export const expectationSchema = z.strictObject({
  expectation_id: z.string().regex(/^rce_[0-9a-f-]{36}$/),
  scope: z.strictObject({ kind: z.enum(['tenant', 'account', 'party']), external_id: z.string().optional() }),
  asset: z.string(),
  cadence: z.literal('daily'),
  due_after_minutes: z.number().int(),
  created_at: instant,
  // When the next day's declaration is due.
  next_due_at: instant,
});

export const expectationListSchema = z.strictObject({ data: z.array(expectationSchema), has_more: z.boolean(), next_cursor: z.string().optional() });

export type ExpectationView = z.infer<typeof expectationSchema>;

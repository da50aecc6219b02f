import { z } from 'zod';
import { text } from './primitives/fields.ts';
import { moneyViewSchema } from './primitives/money.ts';

// Breaks of reconciliations (services/reconciliations/breaks.ts): opened by a mismatch, then
// acknowledged, commented on and resolved by people, each with who and when.
export const BREAK_STATES = ['open', 'acknowledged', 'resolved'] as const;

const instant = z.string().meta({ format: 'date-time' });
const actorAt = z.strictObject({ by: z.string(), at: instant });

export const breakSchema = z.strictObject({
  break_id: z.string().regex(/^rbk_[0-9a-f-]{36}$/),
  reconciliation_id: z.string().regex(/^rcn_[0-9a-f-]{36}$/),
  state: z.enum(BREAK_STATES),
  opened_at: instant,
  // The difference (observed − declared) when the break opened; the reconciliation has the latest.
  opened_difference: z.strictObject({ count: z.number().int(), sum: moneyViewSchema }),
  acknowledged: actorAt.nullable(),
  resolved: z.strictObject({ by: z.string(), at: instant, resolution: z.string() }).nullable(),
  comments: z.array(z.strictObject({ by: z.string(), at: instant, body: z.string() })),
});

export const breakPageSchema = z.strictObject({ data: z.array(breakSchema), has_more: z.boolean(), next_cursor: z.string().optional() });

export const acknowledgeRequestSchema = z.strictObject({ note: text(1, 4000).optional() });
export const commentRequestSchema = z.strictObject({ body: text(1, 4000) });
export const resolveRequestSchema = z.strictObject({ resolution: text(1, 2000) });

const differenceItemSchema = z.strictObject({
  source: z.enum(['movement', 'event']),
  reason: z.enum(['superseded', 'reversal_pair', 'status_not_counted', 'pending', 'held', 'quarantined', 'rejected']),
  external_id: z.string(),
  event_id: z.string(),
  occurred_at: instant,
  received_at: instant,
  status: z.string(),
  type: z.string(),
  amount: moneyViewSchema,
  related: z.string().nullable(),
});
export const differenceItemPageSchema = z.strictObject({ data: z.array(differenceItemSchema), has_more: z.boolean(), next_cursor: z.string().optional() });

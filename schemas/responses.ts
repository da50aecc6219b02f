import { z } from 'zod';
import { FAMILY_NAMES } from './families/index.ts';
import { problemSchema } from './problem.ts';

// Response records of the public API.
export const dryRunResultSchema = z.strictObject({
  index: z.number().int(),
  outcome: z.enum(['valid', 'rejected']),
  object: z.enum(FAMILY_NAMES).optional(),
  external_id: z.string().optional(),
  problem: problemSchema.optional(),
});

export const dryRunResponseSchema = z.strictObject({
  valid: z.boolean(),
  checked: z.number().int(),
  accepted: z.number().int(),
  rejected: z.number().int(),
  results: z.array(dryRunResultSchema),
});

export type DryRunResult = z.infer<typeof dryRunResultSchema>;
export type DryRunResponse = z.infer<typeof dryRunResponseSchema>;

export const healthSchema = z.strictObject({ status: z.literal('ok') });

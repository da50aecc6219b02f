import { z } from 'zod';
import { CASE_NOTE_MAX, CASE_STATUSES, DISPOSITIONS } from '../responses.ts';

// Request bodies of the console's case actions (services/console/routes/episodes.ts). Strict, as
// every request body. The reason is mandatory: it is the note of the case action and is kept in
// the console audit log.
const reason = z.string().trim().min(1, 'give a reason').max(CASE_NOTE_MAX);

export const assignRequestSchema = z.strictObject({ user_id: z.uuid().nullable() });
export const caseStatusRequestSchema = z.strictObject({ status: z.enum(CASE_STATUSES), reason });
export const caseDispositionRequestSchema = z.strictObject({ disposition: z.enum(DISPOSITIONS), reason });

export type AssignRequest = z.infer<typeof assignRequestSchema>;
export type CaseStatusRequest = z.infer<typeof caseStatusRequestSchema>;
export type CaseDispositionRequest = z.infer<typeof caseDispositionRequestSchema>;

export const ALERT_QUEUE_SORTS = ['newest', 'oldest', 'severity'] as const;
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

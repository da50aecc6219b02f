// The console's case contract (services/console/routes/cases.ts, episodes.ts): request and response
// schemas of /console/v1, the single source of the web app's types.
//
// For the web app (console/web, H3/H4): import the inferred types with `import type` only, so no
// zod code reaches the bundle and a renamed field fails `npx tsc --noEmit -p console/web`:
//
//   import type { CaseSummary, CasePage, CaseDetail, CaseTimeline, CaseNote } from '../../../schemas/console/cases.ts';
//
// (the path is relative to the importing file; from console/web/src/views it is
// '../../../../schemas/console/cases.ts'). A case is an episode: its id is the episode's (epsd_…).
import { z } from 'zod';
import { STORABLE } from '../primitives/fields.ts';
import { CONSOLE_ROLES } from './requests.ts';
import { alertSchema, CASE_NOTE_MAX, CASE_STATUSES, DISPOSITIONS, EPISODE_STATUSES, episodeDetailSchema } from '../responses.ts';

// Request bodies of the console's case actions (services/console/routes/episodes.ts). Strict, as
// every request body. The reason is mandatory: it is the note of the case action and is kept in
// the console audit log.
const reason = z.string().trim().min(1, 'give a reason').max(CASE_NOTE_MAX).refine(...STORABLE);

export const assignRequestSchema = z.strictObject({ user_id: z.uuid().nullable() });
// What the analyst saw when they acted: the case is changed only if it still stands so, else the
// action is refused (409) and the page shows what changed. Without it the action applies to the
// case as it is (the last one wins).
const expected = z.strictObject({ case_status: z.enum(CASE_STATUSES), disposition: z.enum(DISPOSITIONS).nullable() }).optional();
export const caseStatusRequestSchema = z.strictObject({ status: z.enum(CASE_STATUSES), reason, expected });
export const caseDispositionRequestSchema = z.strictObject({ disposition: z.enum(DISPOSITIONS), reason, expected });

export const ALERT_QUEUE_SORTS = ['newest', 'oldest', 'severity'] as const;
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

// ---- Shared pieces -------------------------------------------------------------------------

const UUID_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const instant = z.string().meta({ format: 'date-time' });
const episodeIdText = z.string().regex(new RegExp(`^(epsd_)?${UUID_TEXT}$`), 'must be an episode id (epsd_…)');
const episodeRef = z.string().regex(new RegExp(`^epsd_${UUID_TEXT}$`));
const subjectRef = z.strictObject({ kind: z.enum(['account', 'party']), external_id: z.string() });
// Money as everywhere in the API: integer minor units as a decimal string, its asset and scale.
const moneySchema = z.strictObject({ value: z.string(), asset: z.string(), scale: z.number().int() });
const consoleUserRef = z.strictObject({ user_id: z.uuid(), email: z.string() });
const pageOf = <T extends z.ZodType>(item: T) => z.strictObject({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().optional() });
// A query parameter given twice arrives as an array: refused, as every query reader does.
const once = z.string().max(256);

// ---- The case inbox: GET /console/v1/cases -------------------------------------------------

// A case's priority is its episode's severity (the strongest alert's); the SLA is per priority.
export const CASE_PRIORITIES = ['low', 'medium', 'high', 'critical'] as const satisfies typeof SEVERITIES;
// age: oldest first; due: soonest due first; amount: largest first; priority: highest first, then oldest.
export const CASE_INBOX_SORTS = ['age', 'due', 'amount', 'priority'] as const;
export const CASE_INBOX_LIMIT = { fallback: 50, max: 200 } as const;

export const caseInboxQuerySchema = z.strictObject({
  // Default: every status but closed (the open work).
  status: z.enum(CASE_STATUSES).optional(),
  // me, unassigned, or a console user's id.
  assignee: z.union([z.enum(['me', 'unassigned']), z.uuid()]).optional(),
  typology: z.string().min(1).max(128).optional(),
  priority: z.enum(CASE_PRIORITIES).optional(),
  overdue: z.enum(['true', 'false']).optional(),
  // Cases whose suspicious-activity report waits for a second user's approval.
  awaiting_approval: z.enum(['true', 'false']).optional(),
  sort: z.enum(CASE_INBOX_SORTS).optional(),
  limit: z
    .string()
    .regex(/^[0-9]{1,9}$/, `must be an integer 1-${CASE_INBOX_LIMIT.max}`)
    .refine((v) => Number(v) >= 1 && Number(v) <= CASE_INBOX_LIMIT.max, `must be an integer 1-${CASE_INBOX_LIMIT.max}`)
    .optional(),
  cursor: z.string().max(4096).optional(),
});
export type CaseInboxQuery = z.infer<typeof caseInboxQuerySchema>;

const caseSummarySchema = z.strictObject({
  episode_id: episodeRef,
  case_status: z.enum(CASE_STATUSES),
  episode_status: z.enum(EPISODE_STATUSES),
  disposition: z.enum(DISPOSITIONS).nullable(),
  priority: z.enum(CASE_PRIORITIES),
  assignee: consoleUserRef.nullable(),
  // When the case opened (its episode's first alert was grouped), and how long ago, by the service's clock.
  opened_at: instant,
  age_seconds: z.number().int(),
  // opened_at + the tenant's SLA for the priority; null once the case is closed.
  due_at: instant.nullable(),
  overdue: z.boolean(),
  // The largest amount one of its alerts' evidence totals, in the tenant's base asset (null
  // when no alert states one).
  amount: moneySchema.nullable(),
  typologies: z.array(z.string()),
  // The subjects of its alerts (at most 20; subject_count says how many).
  subjects: z.array(subjectRef),
  subject_count: z.number().int(),
  alert_count: z.number().int(),
  last_alert_at: instant,
  awaiting_approval: z.boolean(),
});
export const casePageSchema = pageOf(caseSummarySchema);
export type CaseSummary = z.infer<typeof caseSummarySchema>;
export type CasePage = z.infer<typeof casePageSchema>;

// ---- Assignment: POST /console/v1/cases/assign ---------------------------------------------

// A supervisor assigns or reassigns one or many cases to any active user of the tenant (or to
// nobody, null); an analyst may take unassigned cases (user_id = their own id) or give up their own.
const CASE_ASSIGN_MAX = 200;
export const caseAssignRequestSchema = z.strictObject({
  episode_ids: z.array(episodeIdText).min(1).max(CASE_ASSIGN_MAX),
  user_id: z.uuid().nullable(),
});
const CASE_ASSIGN_OUTCOMES = ['assigned', 'unchanged', 'not_found', 'forbidden'] as const;
export const caseAssignResponseSchema = z.strictObject({
  results: z.array(z.strictObject({ episode_id: z.string(), outcome: z.enum(CASE_ASSIGN_OUTCOMES), assignee: consoleUserRef.nullable() })),
});
// GET /console/v1/cases/assignees: every active user of the tenant, by email, so that a supervisor
// can assign to anyone, including a user who holds no case yet.
export const caseAssigneesSchema = z.strictObject({ data: z.array(consoleUserRef.extend({ role: z.enum(CONSOLE_ROLES) })) });
export type CaseAssignRequest = z.infer<typeof caseAssignRequestSchema>;
export type CaseAssignees = z.infer<typeof caseAssigneesSchema>;
export type CaseAssignResponse = z.infer<typeof caseAssignResponseSchema>;

// ---- Four-eyes reporting: /console/v1/cases/:id/report --------------------------------------

// Filing a report (disposition suspicious_activity_reported) is proposed with a narrative, and
// takes effect only when a supervisor other than the proposer approves. Rejected goes back to
// the proposer (assigned to them).
const REPORT_NARRATIVE_MAX = 20_000;
const REPORT_STATES = ['pending', 'approved', 'rejected'] as const;
export const reportProposalRequestSchema = z.strictObject({ narrative: z.string().trim().min(1, 'give a narrative').max(REPORT_NARRATIVE_MAX).refine(...STORABLE) });
export const reportDecisionRequestSchema = z.strictObject({ decision: z.enum(['approve', 'reject']), reason });
export const reportProposalSchema = z.strictObject({
  proposal_id: z.uuid(),
  episode_id: episodeRef,
  state: z.enum(REPORT_STATES),
  narrative: z.string(),
  proposed_by: consoleUserRef,
  proposed_at: instant,
  decided_by: consoleUserRef.nullable(),
  decided_at: instant.nullable(),
  decision_reason: z.string().nullable(),
});
export const reportProposalListSchema = z.strictObject({ data: z.array(reportProposalSchema) });
export type ReportProposalRequest = z.infer<typeof reportProposalRequestSchema>;
export type ReportDecisionRequest = z.infer<typeof reportDecisionRequestSchema>;
export type ReportProposal = z.infer<typeof reportProposalSchema>;

// ---- Notes: /console/v1/cases/:id/notes (append-only) --------------------------------------

const NOTE_BODY_MAX = 10_000;
export const caseNoteRequestSchema = z.strictObject({ body: z.string().trim().min(1, 'write something').max(NOTE_BODY_MAX).refine(...STORABLE) });
export const caseNoteSchema = z.strictObject({ note_id: z.uuid(), episode_id: episodeRef, author: consoleUserRef, body: z.string(), created_at: instant });
export const caseNotePageSchema = pageOf(caseNoteSchema);
export type CaseNoteRequest = z.infer<typeof caseNoteRequestSchema>;
export type CaseNote = z.infer<typeof caseNoteSchema>;
export type CaseNotePage = z.infer<typeof caseNotePageSchema>;

// ---- Case page: GET /console/v1/cases/:id and /timeline ------------------------------------

// The parties behind the case's subjects: a party subject itself, and the holder of each account
// subject (via_accounts names those accounts).
const casePartySchema = z.strictObject({ external_id: z.string(), via_accounts: z.array(z.string()) });
export const caseDetailSchema = caseSummarySchema.extend({
  subjects: z.array(subjectRef),
  related: z.array(subjectRef),
  parties: z.array(casePartySchema),
  alerts: z.array(alertSchema),
  // Every movement external id the alerts' evidence cites (to highlight in timeline and network).
  movement_ids: z.array(z.string()),
  report: reportProposalSchema.nullable(),
  case_history: episodeDetailSchema.shape.case_history,
});
export type CaseDetail = z.infer<typeof caseDetailSchema>;

export const TIMELINE_MOVEMENTS_MAX = 500;
export const TIMELINE_ACTIONS_MAX = 1000;
// Views of the case (`*.viewed` audit entries) are capped apart: the latest this many.
export const TIMELINE_VIEWS_MAX = 200;
const timelineEntrySchema = z.discriminatedUnion('kind', [
  // An alert of the case, at its creation; movement_ids: the movements its evidence cites.
  z.strictObject({
    kind: z.literal('alert'),
    at: instant,
    alert_id: z.string(),
    detector: z.string(),
    typology: z.string(),
    severity: z.enum(SEVERITIES),
    summary: z.string(),
    subject: subjectRef,
    movement_ids: z.array(z.string()),
  }),
  // A movement an alert cites, at its occurred_at; cited_by: the alerts citing it.
  z.strictObject({
    kind: z.literal('movement'),
    at: instant,
    movement_id: z.string(),
    type: z.string(),
    status: z.string(),
    amount: moneySchema,
    debit_account: z.string().nullable(),
    credit_account: z.string().nullable(),
    cited_by: z.array(z.string()),
  }),
  // A case action from any channel (console, /v1 API, CLI, detection): status and disposition.
  z.strictObject({ kind: z.literal('case_action'), at: instant, actor: z.string(), case_status: z.enum(CASE_STATUSES), disposition: z.enum(DISPOSITIONS).nullable(), note: z.string().nullable() }),
  // A console audit entry naming the case (views, assignments, report proposals and decisions).
  z.strictObject({ kind: z.literal('audit'), at: instant, actor_email: z.string().nullable(), action: z.string(), details: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal('note'), at: instant, note_id: z.uuid(), author: consoleUserRef, body: z.string() }),
]);
export const caseTimelineSchema = z.strictObject({
  episode_id: episodeRef,
  // Oldest first.
  entries: z.array(timelineEntrySchema),
  movement_ids: z.array(z.string()),
  // Some movements, notes or audit entries other than views were left out (more than the caps above).
  truncated: z.boolean(),
  // The latest views of the case among the entries, of how many in all.
  views: z.strictObject({ shown: z.number().int().nonnegative(), total: z.number().int().nonnegative() }),
});
export type TimelineEntry = z.infer<typeof timelineEntrySchema>;
export type CaseTimeline = z.infer<typeof caseTimelineSchema>;

// ---- The tenant's SLA: GET/PUT /console/v1/settings/case-sla --------------------------------

const SLA_HOURS_MAX = 24 * 366;
const slaHours = z.number().int().min(1).max(SLA_HOURS_MAX);
const caseSlaHoursSchema = z.strictObject({ critical: slaHours, high: slaHours, medium: slaHours, low: slaHours });
export const caseSlaUpdateRequestSchema = z.strictObject({ hours: caseSlaHoursSchema });
export const caseSlaSchema = z.strictObject({
  hours: caseSlaHoursSchema,
  // false: the service's defaults (no supervisor has set the tenant's).
  customised: z.boolean(),
  updated_at: instant.nullable(),
  updated_by: z.string().nullable(),
});
export type CaseSla = z.infer<typeof caseSlaSchema>;

// ---- The console's episode detail (GET /console/v1/episodes/:id and its actions) ------------

const auditEntrySchema = z.strictObject({
  at: instant,
  actor_kind: z.string(),
  actor_email: z.string().nullable(),
  action: z.string(),
  subject: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
});
export const auditPageSchema = pageOf(auditEntrySchema);
export const consoleEpisodeDetailSchema = episodeDetailSchema.extend({
  assignee: consoleUserRef.nullable(),
  audit: z.array(auditEntrySchema),
  // The parties behind the members: party members, and the holders of account members.
  parties: z.array(casePartySchema),
});
export type ConsoleEpisodeDetail = z.infer<typeof consoleEpisodeDetailSchema>;

// Params of the case routes.
export const caseParamsSchema = z.strictObject({ id: z.string().max(256) });
export const pagingQuerySchema = z.strictObject({
  limit: once.regex(/^[0-9]{1,9}$/, 'must be an integer 1-200').refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer 1-200').optional(),
  cursor: z.string().max(4096).optional(),
});

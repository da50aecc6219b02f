// Route schemas of the console's routes that predate the case contract (alerts, episodes, audit,
// parties, network, reconciliation breaks, session): what each takes and answers, declared on the
// console app (platform/http/contracts.ts) and the source of the web app's types for them:
//
//   import type { AlertQueuePage, PartyPage, ConsoleNetwork } from '../../../schemas/console/routes.ts';
//
// Queries are read with the /v1 API's rules (platform/http/query-schema.ts) the console's way
// (strictQuery: an unknown parameter is refused, every finding answered at once). The queries of
// the canonical reads (movements, network, paths) are the reads' own (services/reads).
import { z } from 'zod';
import { needs, optionalInteger, optionalText, pagingShape, single, strictQuery, text } from '../../platform/http/query-schema.ts';
import { BREAK_STATES, breakSchema, differenceItemPageSchema } from '../reconciliation-breaks.ts';
import { reconciliationSchema } from '../reconciliations.ts';
import { ALERT_STATUSES, alertDetailSchema, alertSchema, entityViewSchema, graphNetworkSchema, graphNodeSchema, graphPathsSchema, movementPageSchema, postureSchema } from '../responses.ts';
import { ALERT_QUEUE_SORTS, SEVERITIES } from './cases.ts';
import { CONSOLE_ROLES } from './requests.ts';

const instant = z.string().meta({ format: 'date-time' });
const pageOf = <T extends z.ZodType>(item: T) => z.strictObject({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().optional() });

// ---- Session -------------------------------------------------------------------------------

export const consoleHealthSchema = z.strictObject({ status: z.literal('ok') });
export const consoleSessionSchema = z.strictObject({
  user: z.strictObject({ id: z.uuid(), tenant: z.string(), email: z.string(), role: z.enum(CONSOLE_ROLES), must_change_password: z.boolean() }),
  csrf_token: z.string(),
  session: z.strictObject({ expires_at: instant, idle_expires_at: instant }),
});

// ---- Alerts --------------------------------------------------------------------------------

// max_age_h: at most ten years.
export const alertQueueQuerySchema = strictQuery(
  {
    status: single(ALERT_STATUSES),
    severity: single(SEVERITIES),
    detector: optionalText({ max: 128 }),
    subject: optionalText(),
    subject_kind: single(['account', 'party'] as const),
    max_age_h: optionalInteger({ min: 1, max: 87_600 }),
    sort: single(ALERT_QUEUE_SORTS),
    ...pagingShape(),
  },
  needs('subject_kind', 'subject'),
);
// A row of the alert queue: the /v1 Alert's names, without narrative or evidence.
const alertSummarySchema = alertSchema.pick({
  alert_id: true,
  status: true,
  detector: true,
  typology: true,
  subject: true,
  severity: true,
  score: true,
  window: true,
  episode_id: true,
  created_at: true,
  updated_at: true,
});
export const alertQueuePageSchema = pageOf(alertSummarySchema);
export const alertParamsSchema = z.strictObject({ alert_id: z.string() });
export const consoleAlertDetailSchema = alertDetailSchema;
export type ConsoleAlertDetail = z.infer<typeof consoleAlertDetailSchema>;

// ---- Episodes and the audit log ------------------------------------------------------------

export const episodeParamsSchema = z.strictObject({ episode_id: z.string() });
export const auditQuerySchema = strictQuery({ episode_id: text({ required: true }), ...pagingShape() });

// ---- Parties and the network ---------------------------------------------------------------

export const partyParamsSchema = z.strictObject({ external_id: z.string() });
export const partyPageSchema = z.strictObject({
  // The canonical party (its own fields as sent, e.g. name, type), identifiers only as hashes.
  party: entityViewSchema,
  accounts: z.array(entityViewSchema),
  accounts_truncated: z.boolean(),
  posture: postureSchema.omit({ external_id: true }).extend({
    reasons: z.array(z.strictObject({ detector: z.string(), typology: z.string(), severity: z.string(), open_alerts: z.number().int(), latest_at: instant })),
  }),
});
export type PartyPage = z.infer<typeof partyPageSchema>;
export const consoleMovementPageSchema = movementPageSchema;
// Each party or account node carries open_alerts: how many open alerts have it as their subject.
export const consoleNetworkSchema = graphNetworkSchema.extend({ nodes: z.array(graphNodeSchema.extend({ open_alerts: z.number().int() })) });
export const consolePathsSchema = graphPathsSchema;
export type ConsoleNetwork = z.infer<typeof consoleNetworkSchema>;
export type ConsolePaths = z.infer<typeof consolePathsSchema>;

// ---- Reconciliation breaks -----------------------------------------------------------------

export const breakQuerySchema = strictQuery({ state: single(BREAK_STATES), ...pagingShape() });
export const breakParamsSchema = z.strictObject({ break_id: z.string() });
export const reconciliationParamsSchema = z.strictObject({ id: z.string() });
export const reconciliationItemsQuerySchema = strictQuery({ format: single(['json', 'csv'] as const), ...pagingShape() });
export const consoleBreakPageSchema = pageOf(breakSchema);
export const consoleBreakDetailSchema = breakSchema.extend({ reconciliation: reconciliationSchema.nullable() });
export const consoleItemPageSchema = differenceItemPageSchema;

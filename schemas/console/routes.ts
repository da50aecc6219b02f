// Route schemas of the console's routes that predate the case contract (alerts, episodes, audit,
// parties, network, reconciliation breaks, session): what each takes and answers, declared on the
// console app (services/console/contract.ts) and the source of the web app's types for them:
//
//   import type { AlertQueuePage, PartyPage, ConsoleNetwork } from '../../../schemas/console/routes.ts';
//
// Query values stay text here where a shared reader (services/api/http/query-params.ts) checks
// them with the /v1 API's rules; the schema fixes the parameter names (an unknown one is refused).
import { z } from 'zod';
import { breakSchema, differenceItemPageSchema } from '../reconciliation-breaks.ts';
import { reconciliationSchema } from '../reconciliations.ts';
import { alertDetailSchema, alertSchema, entityViewSchema, graphNetworkSchema, graphNodeSchema, graphPathsSchema, movementPageSchema, postureSchema } from '../responses.ts';
import { CONSOLE_ROLES } from './requests.ts';

const instant = z.string().meta({ format: 'date-time' });
const param = z.string().optional();
const pageOf = <T extends z.ZodType>(item: T) => z.strictObject({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().optional() });

// ---- Session -------------------------------------------------------------------------------

export const consoleHealthSchema = z.strictObject({ status: z.literal('ok') });
export const consoleSessionSchema = z.strictObject({
  user: z.strictObject({ id: z.uuid(), tenant: z.string(), email: z.string(), role: z.enum(CONSOLE_ROLES), must_change_password: z.boolean() }),
  csrf_token: z.string(),
  session: z.strictObject({ expires_at: instant, idle_expires_at: instant }),
});

// ---- Alerts --------------------------------------------------------------------------------

export const alertQueueQuerySchema = z.strictObject({
  status: param,
  severity: param,
  detector: param,
  subject: param,
  subject_kind: param,
  max_age_h: param,
  sort: param,
  limit: param,
  cursor: param,
});
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
export const auditQuerySchema = z.strictObject({ episode_id: param, limit: param, cursor: param });

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
export const partyMovementsQuerySchema = z.strictObject({ cursor: param, limit: param, direction: param, from: param, to: param });
export const consoleMovementPageSchema = movementPageSchema;
const edgeFilterQuery = { since: param, until: param, edge_types: param, min_amount: param };
export const networkQuerySchema = z.strictObject({ depth: param, limit: param, ...edgeFilterQuery });
export const pathsQuerySchema = z.strictObject({ from: param, to: param, max_depth: param, limit: param, ...edgeFilterQuery });
// Each party or account node carries open_alerts: how many open alerts have it as their subject.
export const consoleNetworkSchema = graphNetworkSchema.extend({ nodes: z.array(graphNodeSchema.extend({ open_alerts: z.number().int() })) });
export const consolePathsSchema = graphPathsSchema;
export type ConsoleNetwork = z.infer<typeof consoleNetworkSchema>;
export type ConsolePaths = z.infer<typeof consolePathsSchema>;

// ---- Reconciliation breaks -----------------------------------------------------------------

export const breakQuerySchema = z.strictObject({ state: param, limit: param, cursor: param });
export const breakParamsSchema = z.strictObject({ break_id: z.string() });
export const reconciliationParamsSchema = z.strictObject({ id: z.string() });
export const reconciliationItemsQuerySchema = z.strictObject({ format: param, limit: param, cursor: param });
export const consoleBreakPageSchema = pageOf(breakSchema);
export const consoleBreakDetailSchema = breakSchema.extend({ reconciliation: reconciliationSchema.nullable() });
export const consoleItemPageSchema = differenceItemPageSchema;

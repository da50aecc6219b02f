import { z } from 'zod';
import { FAMILY_NAMES } from '../families/index.ts';
import { moneyViewSchema } from '../primitives/money.ts';
import { CASE_STATUSES, DISPOSITIONS, EPISODE_STATUSES } from '../responses.ts';
import { errorCodeSchema } from '../problem.ts';
import { CHANNELS, type WebhookEventType } from './catalog.ts';

// The `data` of every webhook event type, declared once (decision 0049). The outbox writer
// (services/webhooks/outgoing-events.ts) types each emitter from these and refuses data that does
// not parse; the OpenAPI document and the SDK's types are generated from them. Objects are strict:
// a field an emitter adds without declaring it here is refused, so what consumers receive is
// what is published. Where one type has several causes, `reason` (or, for a candidate ruleset,
// `stage`) says which, and each cause declares its own fields.

const prefixed = (prefix: string) => z.string().regex(new RegExp(`^${prefix}[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`));
const alertId = prefixed('alrt_');
const episodeId = prefixed('epsd_');
const instant = z.iso.datetime();
const count = z.number().int().min(0);
const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
const severity = z.enum(SEVERITIES);
// Posture bands: a severity, or incomplete when a detector lacked the data it needs.
const band = z.enum([...SEVERITIES, 'incomplete']);
const subject = z.strictObject({ kind: z.enum(['account', 'party']), external_id: z.string() });
const partySubject = z.strictObject({ kind: z.literal('party'), external_id: z.string() });

const episodeStatus = z.enum(EPISODE_STATUSES);
const caseStatus = z.enum(CASE_STATUSES);
const disposition = z.enum(DISPOSITIONS);

// What every episode event says of the episode after the change.
const episodeReference = {
  episode_id: episodeId,
  status: episodeStatus,
  severity,
  alert_count: count,
};

// An analyst's case action (API, console or CLI): the episode and its case before and after, and
// the action's place in the case history (GET /v1/episodes/{id} lists it).
const caseAction = {
  ...episodeReference,
  previous_status: episodeStatus,
  case_status: caseStatus,
  previous_case_status: caseStatus,
  disposition: disposition.nullable(),
  previous_disposition: disposition.nullable(),
  case_action_seq: z.number().int().min(1),
};

const alertOpened = z.strictObject({
  alert_id: alertId,
  detector: z.string(),
  typology: z.string(),
  severity,
  score: z.number(),
  subject,
  // The event-time window the evidence falls in: (from, to].
  window: z.strictObject({ from: instant, to: instant }),
  summary: z.string(),
});

const episodeUpdated = z.strictObject({
  ...episodeReference,
  change: z.enum(['opened', 'alert_added', 'reopened', 'severity_raised']),
  // The alert that caused the change.
  alert_id: alertId,
});

const episodeEscalated = z.discriminatedUnion('reason', [
  // The episode reached the escalation policy's severity or alert count with this alert.
  z.strictObject({ ...episodeReference, reason: z.literal('threshold'), alert_id: alertId }),
  z.strictObject({ ...caseAction, reason: z.literal('case_action') }),
]);

const episodeReopened = z.discriminatedUnion('reason', [
  // A new alert on one of the resolved episode's own subjects.
  z.strictObject({ ...episodeReference, reason: z.literal('new_alert'), alert_id: alertId }),
  z.strictObject({ ...caseAction, reason: z.literal('case_action') }),
]);

const caseStatusChanged = z.discriminatedUnion('reason', [
  // The episode reopened with a new alert: its case reopens too (the case history records it as
  // an action of actor detection).
  z.strictObject({
    ...episodeReference,
    reason: z.literal('new_alert'),
    case_status: z.literal('open'),
    previous_case_status: caseStatus,
    previous_disposition: disposition.nullable(),
  }),
  z.strictObject({ ...caseAction, reason: z.literal('case_action') }),
]);

// Only a case action disposes of a case or resolves an episode.
const caseDisposed = z.strictObject({ ...caseAction, case_status: z.literal('closed'), disposition });
const episodeResolved = z.strictObject({ ...caseAction, status: z.literal('resolved') });

const riskStateChanged = z.strictObject({
  subject: partySubject,
  band,
  previous_band: z.enum([...SEVERITIES, 'incomplete', 'unknown']),
  computed_at: instant,
  // The worst unresolved episode the party is a subject of, when the band comes from one.
  episode_id: episodeId.optional(),
});

// Operational channel: subject, band, severity, recommendation code and episode only (spec).
const recommendationIssued = z.strictObject({
  subject: partySubject,
  band: z.enum(['high', 'critical']),
  severity,
  recommendation: z.enum(['enhanced_review', 'restrict_pending_review']),
  episode_id: episodeId,
});

// Coverage of a reconciliation expectation's day: its scope, asset and UTC day.
const expectationDay = {
  expectation_id: prefixed('rce_'),
  scope: z.union([z.strictObject({ kind: z.literal('tenant') }), z.strictObject({ kind: z.enum(['account', 'party']), external_id: z.string() })]),
  asset: z.string(),
  period: z.strictObject({ from: instant, to: instant }),
};
const reconciliationId = prefixed('rcn_');
// A declared reconciliation's comparison; differences are observed minus declared, the sum as
// Money of the reconciliation's asset.
const reconciliationResult = <S extends 'matched' | 'mismatched'>(status: S) =>
  z.strictObject({
    reason: z.literal('reconciliation'),
    reconciliation_id: reconciliationId,
    status: z.literal(status),
    count_difference: z.number().int(),
    sum_difference: moneyViewSchema,
    asset: z.string(),
  });

const coverageDegraded = z.discriminatedUnion('reason', [
  // A fact feed silent, in arrival time, for longer than its threshold.
  z.strictObject({
    reason: z.literal('feed_silence'),
    family: z.enum(FAMILY_NAMES),
    last_received_at: instant,
    degraded_at: instant,
    silence_minutes: z.number().int().min(1),
  }),
  // An expected daily declaration did not come by its due time.
  z.strictObject({ reason: z.literal('reconciliation_missing'), ...expectationDay, due_at: instant }),
  reconciliationResult('mismatched'),
]);

const coverageRecovered = z.discriminatedUnion('reason', [
  z.strictObject({ reason: z.literal('feed_silence'), family: z.enum(FAMILY_NAMES), silent_since: instant, recovered_at: instant }),
  // A declaration covering the missed day arrived.
  z.strictObject({ reason: z.literal('reconciliation_missing'), ...expectationDay, reconciliation_id: reconciliationId }),
  reconciliationResult('matched'),
]);

// Ids and counts only: no row content reaches the operational channel.
const importProgress = {
  import_id: prefixed('imp_'),
  family: z.enum(FAMILY_NAMES),
  chunks_landed: count,
  // Null until the client has said how many chunks the file has.
  chunk_count: count.nullable(),
  rows_read: count,
  accepted: count,
  duplicates: count,
  rejected: count,
  skipped: count,
};

// A family's live feed refused far more than in the week before (decision 0077): counts, the
// governed codes and the field paths of the refusals, never a value of the events.
const share = z.number().min(0).max(1);
const driftDetected = z.strictObject({
  family: z.enum(FAMILY_NAMES),
  detected_at: instant,
  window: z.strictObject({ from: instant, to: instant }),
  received: count,
  refused: count,
  refused_share: share,
  baseline: z.strictObject({ from: instant, to: instant, received: count, refused: count, refused_share: share.nullable() }),
  // The most frequent first findings of the refused items: path relative to the item, array
  // indices as *, "(other)" past the distinct paths counted per five minutes.
  problems: z.array(z.strictObject({ code: errorCodeSchema, path: z.string(), items: count })),
});

const rulesetVersion = z.number().int().min(0);
const candidateReady = z.discriminatedUnion('stage', [
  z.strictObject({ version: rulesetVersion, stage: z.literal('created'), name: z.string() }),
  z.strictObject({ version: rulesetVersion, stage: z.literal('shadow') }),
  // Alerts the backtest's window raised under the candidate and under the active ruleset.
  z.strictObject({ version: rulesetVersion, stage: z.literal('backtested'), candidate_alerts: count, active_alerts: count }),
]);

const described = <T extends z.ZodType>(schema: T, description: string): T => schema.meta({ description });

export const WEBHOOK_PAYLOADS = {
  'alert.opened': described(alertOpened, 'A new alert: its detector, typology, severity, score, subject, evidence window and summary.'),
  'episode.updated': described(episodeUpdated, 'An alert opened, joined, reopened or raised the severity of an episode: the episode after the change.'),
  'episode.escalated': described(episodeEscalated, 'The episode escalated: by the escalation policy (reason threshold) or by a case action.'),
  'episode.resolved': described(episodeResolved, 'A case action closed the case with a disposition and resolved the episode.'),
  'episode.reopened': described(episodeReopened, 'A resolved episode reopened: by a new alert on one of its subjects (reason new_alert) or by a case action.'),
  'case.status_changed': described(caseStatusChanged, "The case's status changed: by a case action, or reopened with its episode by a new alert (reason new_alert)."),
  'case.disposed': described(caseDisposed, 'A case action closed the case with a disposition (again when the disposition is replaced).'),
  'risk_state.changed': described(riskStateChanged, "A party's posture band changed."),
  'recommendation.issued': described(recommendationIssued, "A party's band rose to one with a recommendation: subject, band, severity, recommendation code and episode only."),
  'coverage.degraded': described(coverageDegraded, 'Detection can vouch for less: a fact feed fell silent, an expected declaration is missing, or a reconciliation mismatched.'),
  'coverage.recovered': described(coverageRecovered, 'What degraded coverage recovered: the feed arrived again, the missing declaration came, or the reconciliation matched.'),
  'import.progress': described(z.strictObject({ ...importProgress, chunk_no: count }), 'A chunk of an import was landed: the counts so far.'),
  'import.completed': described(z.strictObject(importProgress), 'An import completed: its final counts.'),
  'import.failed': described(z.strictObject({ ...importProgress, failure: z.string() }), 'An import failed: its counts and why.'),
  'ruleset.candidate_ready': described(candidateReady, 'A candidate ruleset was created, put in shadow or backtested (stage).'),
  // Version 0 is the built-in default ruleset.
  'ruleset.activated': described(z.strictObject({ version: rulesetVersion, previous_version: rulesetVersion }), 'A ruleset went live; the previous one (0: the built-in default) retired.'),
  'ruleset.rolled_back': described(z.strictObject({ from_version: rulesetVersion, to_version: rulesetVersion }), 'The live ruleset was rolled back to the one before it (0: the built-in default).'),
  // Nothing emits it yet: no payload is accepted until one is declared here.
  'conformance.drift_detected': described(driftDetected, "A family's live feed started to be refused far more than in the week before: the last hour's counts against the week's, and the most frequent problems."),
  'webhook.test': described(
    z.strictObject({ endpoint_id: prefixed('whk_'), channel: z.enum(CHANNELS), message: z.string(), sent_at: instant }),
    'The probe of POST /v1/webhook-endpoints/{id}/test (spec: endpoint_id, channel, message, sent_at).',
  ),
} as const satisfies Record<WebhookEventType, z.ZodType>;

export type WebhookEventData<T extends WebhookEventType> = z.infer<(typeof WEBHOOK_PAYLOADS)[T]>;

// The SDK's and the document's name of each payload: alert.opened → AlertOpenedData.
export function payloadComponentName(type: WebhookEventType): string {
  return `${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}Data`;
}

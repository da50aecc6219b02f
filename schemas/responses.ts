import { z } from 'zod';
import { upTo } from './primitives/fields.ts';
import { FAMILY_NAMES } from './families/index.ts';
import { NODE_KINDS } from './graph.ts';
import { problemSchema } from './problem.ts';

// Response records of the public API.
const dryRunResultSchema = z.strictObject({
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

const eventId = z.string().regex(/^evt_[A-Za-z0-9-]{8,64}$/);
const instant = z.string().meta({ format: 'date-time' });

export const ingestReceiptSchema = z.strictObject({
  event_id: eventId,
  object: z.enum(FAMILY_NAMES),
  external_id: z.string(),
  received_at: instant,
  idempotent_replay: z.boolean(),
});
export type IngestReceipt = z.infer<typeof ingestReceiptSchema>;

export const batchResponseSchema = z.strictObject({
  accepted: z.number().int(),
  rejected: z.number().int(),
  results: z.array(
    z.strictObject({
      index: z.number().int(),
      outcome: z.enum(['accepted', 'rejected']),
      receipt: ingestReceiptSchema.optional(),
      problem: problemSchema.optional(),
    }),
  ),
});

// An event's status, and the status of an entry of its stage history (stored under CHECK
// constraints that test/schema-states.test.ts holds to these lists).
export const EVENT_STATUSES = ['pending', 'held', 'quarantined', 'processed', 'rejected'] as const;
export const STAGE_STATUSES = ['ok', 'held', 'quarantined', 'rejected', 'failed'] as const;

export const eventStatusSchema = z.strictObject({
  event_id: eventId,
  object: z.enum(FAMILY_NAMES),
  external_id: z.string(),
  sequence: z.number().int().nullable(),
  status: z.enum(EVENT_STATUSES),
  rejection: z.record(z.string(), z.unknown()).nullable(),
  status_reason: z.record(z.string(), z.unknown()).nullable(),
  attempts: z.number().int(),
  received_at: instant,
  occurred_at: instant.nullable(),
  terminal_at: instant.nullable(),
  historical: z.boolean(),
  import_id: z.string().nullable(),
  content_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  stage_history: z.array(
    z.strictObject({
      stage: z.string(),
      status: z.enum(STAGE_STATUSES),
      at: instant,
      worker: z.string().nullable(),
      duration_ms: z.number().int().nullable(),
      detail: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),
});

// Canonical views: the current data (identifiers only as keyed hashes) and version metadata.
// The family's data members sit beside these (loose): what each holds is the family's schema.
const viewMetadata = {
  external_id: z.string(),
  event_id: eventId,
  occurred_at: instant,
  received_at: instant,
};

export const entityViewSchema = z.looseObject({
  object: z.enum(['party', 'account', 'instrument']),
  ...viewMetadata,
  sequence: z.number().int().nullable(),
  // How many versions the entity has had (this one included).
  version_count: z.number().int().min(1),
});

export const movementViewSchema = z.looseObject({
  object: z.literal('movement'),
  ...viewMetadata,
  // The parties on each side: the party a leg names, else its account's holder.
  parties: z.strictObject({ debit: z.string().nullable(), credit: z.string().nullable() }),
  // In the tenant's base asset, with the FX rate used; null unless normalised.
  normalized_amount: z.record(z.string(), z.unknown()).nullable(),
  normalization: z.discriminatedUnion('status', [
    z.strictObject({ status: z.literal('not_needed') }),
    z.strictObject({ status: z.literal('normalized') }),
    z.strictObject({ status: z.literal('unavailable'), reason: z.unknown(), pair: z.unknown(), at: z.unknown() }),
  ]),
  // Movements that point at this one (a reversal, a refund...).
  linked_from: z.array(z.strictObject({ relation: z.string(), external_id: z.string() })),
});

export const canonicalViewSchema = z.union([entityViewSchema, movementViewSchema]);

export const movementPageSchema = z.strictObject({
  data: z.array(movementViewSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

// Band only: no reasons, typologies, detector names or narratives (tipping-off control).
// unknown: detection has never looked at the party, so nothing was computed (computed_at and
// staleness_seconds are null). coverage: none (unknown band), partial
// (detection could not judge most of it), degraded (a feed of the tenant is silent), complete.
const POSTURE_BANDS = ['unknown', 'low', 'medium', 'high', 'critical', 'incomplete'] as const;
const POSTURE_COVERAGE = ['none', 'partial', 'degraded', 'complete'] as const;

export const postureSchema = z.strictObject({
  external_id: z.string(),
  band: z.enum(POSTURE_BANDS),
  computed_at: instant.nullable(),
  staleness_seconds: z.number().int().min(0).nullable(),
  coverage: z.enum(POSTURE_COVERAGE),
});

// Compliance (scope compliance): alerts, episodes and their case. Restricted AML content.
const SEVERITY = z.enum(['low', 'medium', 'high', 'critical']);
const UUID_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const alertId = z.string().regex(new RegExp(`^alrt_${UUID_TEXT}$`));
const episodeId = z.string().regex(new RegExp(`^epsd_${UUID_TEXT}$`));
const subjectRef = z.strictObject({ kind: z.enum(['account', 'party']), external_id: z.string() });

export const ALERT_STATUSES = ['open', 'closed'] as const;
export const EPISODE_STATUSES = ['open', 'escalated', 'resolved', 'reopened'] as const;
export const CASE_STATUSES = ['open', 'investigating', 'escalated', 'closed'] as const;
export const DISPOSITIONS = ['suspicious_activity_reported', 'no_further_action', 'false_positive', 'inconclusive'] as const;
export const CASE_NOTE_MAX = 2000;

export const alertSchema = z.strictObject({
  alert_id: alertId,
  status: z.enum(ALERT_STATUSES),
  detector: z.string(),
  detector_version: z.number().int(),
  typology: z.string(),
  ruleset_version: z.number().int(),
  subject: subjectRef,
  // The subject's party: itself for a party, the holder for an account (null when unknown).
  party_id: z.string().nullable(),
  severity: SEVERITY,
  score: z.number(),
  // Event time, (from, to].
  window: z.strictObject({ from: instant, to: instant }),
  summary: z.string(),
  explanation: z.string(),
  hits: z.number().int(),
  episode_id: episodeId.nullable(),
  created_at: instant,
  updated_at: instant,
  // The latest evidence recorded (evidence is append-only; see evidence_history).
  evidence: z.record(z.string(), z.unknown()),
});

export const alertDetailSchema = alertSchema.extend({
  evidence_history: z.array(
    z.strictObject({
      seq: z.number().int(),
      recorded_at: instant,
      event_at: instant,
      score: z.number(),
      severity: SEVERITY,
      evidence: z.record(z.string(), z.unknown()),
    }),
  ),
});

export const alertPageSchema = z.strictObject({
  data: z.array(alertSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

export const episodeSchema = z.strictObject({
  episode_id: episodeId,
  status: z.enum(EPISODE_STATUSES),
  severity: SEVERITY,
  case_status: z.enum(CASE_STATUSES),
  disposition: z.enum(DISPOSITIONS).nullable(),
  first_alert_at: instant,
  last_alert_at: instant,
  alert_count: z.number().int(),
  // The subjects of the episode's alerts (and the parties holding alerted accounts).
  members: z.array(z.strictObject({ kind: z.enum(['account', 'party']), external_id: z.string() })),
  // Other accounts and parties the alerts' evidence names as counterparties.
  related: z.array(z.strictObject({ kind: z.enum(['account', 'party']), external_id: z.string() })),
  created_at: instant,
  updated_at: instant,
});

export const episodeDetailSchema = episodeSchema.extend({
  alerts: z.array(alertSchema),
  case_history: z.array(
    z.strictObject({
      seq: z.number().int(),
      at: instant,
      actor: z.string(),
      case_status: z.enum(CASE_STATUSES),
      disposition: z.enum(DISPOSITIONS).nullable(),
      note: z.string().nullable(),
    }),
  ),
});

export const episodePageSchema = z.strictObject({
  data: z.array(episodeSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

// Request body of POST /v1/episodes/{id}/case. A disposition closes the case (status omitted or
// closed); the rules between the two fields are checked by applyCaseAction.
export const caseActionRequestSchema = z.strictObject({
  status: z.enum(CASE_STATUSES).optional(),
  disposition: z.enum(DISPOSITIONS).optional(),
  note: upTo(CASE_NOTE_MAX).optional(),
});

// The analysts' graph queries: nodes and edges as a drawing library takes them.
const graphMoney = z.strictObject({ value: z.string(), asset: z.string(), scale: z.number().int() });

export const graphNodeSchema = z.strictObject({
  id: z.string(),
  kind: z.enum(NODE_KINDS),
  label: z.string(),
  external_id: z.string().optional(),
  hash: z.string().optional(),
  attributes: z.record(z.string(), z.unknown()),
});

const graphEdgeSchema = z.strictObject({
  id: z.string(),
  source: z.string(),
  target: z.string(),
  type: z.string(),
  label: z.string(),
  directed: z.boolean(),
  valid_from: instant.nullable(),
  valid_to: instant.nullable(),
  count: z.number().int(),
  amount: graphMoney.nullable(),
  unpriced: z.number().int(),
  first_at: instant.nullable(),
  last_at: instant.nullable(),
  attributes: z.record(z.string(), z.unknown()),
  recent_movements: z.array(z.strictObject({ movement_id: z.string(), occurred_at: instant, amount: graphMoney.nullable() })).optional(),
});

const graphWindow = z.strictObject({ since: instant.nullable(), until: instant.nullable() });

export const graphNetworkSchema = z.strictObject({
  center: z.string(),
  depth: z.number().int(),
  window: graphWindow,
  truncated: z.boolean(),
  nodes: z.array(graphNodeSchema),
  edges: z.array(graphEdgeSchema),
});

export const graphPathsSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
  max_depth: z.number().int(),
  window: graphWindow,
  paths: z.array(z.strictObject({ length: z.number().int(), nodes: z.array(z.string()), edges: z.array(z.string()) })),
  truncated: z.boolean(),
  nodes: z.array(graphNodeSchema),
  edges: z.array(graphEdgeSchema),
});

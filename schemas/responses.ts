import { z } from 'zod';
import { FAMILY_NAMES } from './families/index.ts';
import { NODE_KINDS } from './graph.ts';
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

export const eventStatusSchema = z.strictObject({
  event_id: eventId,
  object: z.enum(FAMILY_NAMES),
  external_id: z.string(),
  sequence: z.number().int().nullable(),
  status: z.enum(['pending', 'processed', 'held', 'quarantined', 'rejected']),
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
      status: z.string(),
      at: instant,
      worker: z.string().nullable(),
      duration_ms: z.number().int().nullable(),
      detail: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),
});

// Canonical views: the current data (identifiers only as keyed hashes) and version metadata.
export const canonicalViewSchema = z.looseObject({
  object: z.enum(['party', 'account', 'instrument', 'movement']),
  external_id: z.string(),
  event_id: eventId,
  occurred_at: instant,
  received_at: instant,
});

export const movementPageSchema = z.strictObject({
  data: z.array(canonicalViewSchema),
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
});

export const postureSchema = z.strictObject({
  external_id: z.string(),
  band: z.string(),
  computed_at: instant,
  staleness_seconds: z.number().int(),
  coverage: z.string(),
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

export const graphEdgeSchema = z.strictObject({
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

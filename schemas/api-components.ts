import { z } from 'zod';
import { batchItemSchema, batchRequestSchema, MAX_BATCH_ITEMS, PUBLISHED_ENVELOPES } from './envelope.ts';
import { FAMILY_NAMES } from './families/index.ts';
import { mappingDocumentSchema } from './imports/mapping.ts';
import {
  importCreateRequestSchema,
  importDryRunReportSchema,
  importDryRunRequestSchema,
  importRejectPageSchema,
  importRejectSchema,
  importSubmitRequestSchema,
  importViewSchema,
  stagedChunkSchema,
} from './imports/reports.ts';
import { problemSchema } from './problem.ts';
import { acknowledgeRequestSchema, breakPageSchema, breakSchema, commentRequestSchema, differenceItemPageSchema, resolveRequestSchema } from './reconciliation-breaks.ts';
import { expectationListSchema, expectationRequestSchema, expectationSchema } from './reconciliation-expectations.ts';
import { reconciliationPageSchema, reconciliationRequestSchema, reconciliationSchema } from './reconciliations.ts';
import {
  alertDetailSchema,
  alertPageSchema,
  alertSchema,
  batchResponseSchema,
  canonicalViewSchema,
  entityViewSchema,
  movementViewSchema,
  caseActionRequestSchema,
  dryRunResponseSchema,
  episodeDetailSchema,
  episodePageSchema,
  episodeSchema,
  eventStatusSchema,
  graphNetworkSchema,
  graphPathsSchema,
  healthSchema,
  ingestReceiptSchema,
  movementPageSchema,
  postureSchema,
} from './responses.ts';
import { WEBHOOK_EVENT_TYPES } from './webhooks/catalog.ts';
import { payloadComponentName, WEBHOOK_PAYLOADS } from './webhooks/payloads.ts';
import {
  endpointRegistrationSchema,
  rotationRequestSchema,
  secretRotationSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
  webhookEndpointCreatedSchema,
  webhookEndpointPageSchema,
  webhookEndpointSchema,
  webhookEnvelopeSchema,
} from './webhooks/resources.ts';

// The named schemas of the public API: each is a component of the generated OpenAPI document
// (services/api/http/openapi.ts), referenced wherever a route declares it, and a type of that
// name in the SDK.
type ComponentMeta = { id?: string; description?: string };
export const API_COMPONENTS = z.registry<ComponentMeta>();
// Schemas carry their formats and descriptions with .meta() (the global registry); the document
// reads metadata from this registry only, so it falls back to the global one (never for an id:
// components are named here).
class WithGlobalMetadata extends WeakMap<z.core.$ZodType, ComponentMeta> {
  override get(schema: z.core.$ZodType): ComponentMeta | undefined {
    const own = super.get(schema);
    const global = z.globalRegistry._map.get(schema);
    if (!global) return own;
    const { id: _id, ...inherited } = global;
    return { ...inherited, ...own };
  }
  override has(schema: z.core.$ZodType): boolean {
    return super.has(schema) || z.globalRegistry._map.has(schema);
  }
}
API_COMPONENTS._map = new WithGlobalMetadata();

// Request bodies as published where validation is looser on purpose (each entry, event or
// mapping finding gets its own governed code): what a client may send.
export const batchRequestContract = batchRequestSchema.extend({ events: z.array(batchItemSchema).min(1).max(MAX_BATCH_ITEMS) });
export const webhookRegistrationContract = endpointRegistrationSchema.extend({
  event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length),
});
export const importDryRunRequestContract = importDryRunRequestSchema.extend({ mapping: mappingDocumentSchema });
export const importCreateRequestContract = importCreateRequestSchema.extend({ mapping: mappingDocumentSchema });

const pascal = (name: string) => name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
export const ENVELOPE_COMPONENTS = Object.fromEntries(FAMILY_NAMES.map((family) => [family, `${pascal(family)}Event`])) as Record<
  (typeof FAMILY_NAMES)[number],
  string
>;

const NAMED: Array<[string, z.ZodType]> = [
  ...FAMILY_NAMES.map((family): [string, z.ZodType] => [ENVELOPE_COMPONENTS[family], PUBLISHED_ENVELOPES[family]]),
  ['BatchItem', batchItemSchema],
  ['BatchRequest', batchRequestContract],
  ['ProblemDetails', problemSchema],
  ['DryRunResponse', dryRunResponseSchema],
  ['IngestReceipt', ingestReceiptSchema],
  ['BatchResponse', batchResponseSchema],
  ['EventStatus', eventStatusSchema],
  ['CanonicalView', canonicalViewSchema],
  ['EntityView', entityViewSchema],
  ['MovementView', movementViewSchema],
  ['MovementPage', movementPageSchema],
  ['Posture', postureSchema],
  ['Health', healthSchema],
  ['GraphNetwork', graphNetworkSchema],
  ['GraphPaths', graphPathsSchema],
  ['Alert', alertSchema],
  ['AlertDetail', alertDetailSchema],
  ['AlertPage', alertPageSchema],
  ['Episode', episodeSchema],
  ['EpisodeDetail', episodeDetailSchema],
  ['EpisodePage', episodePageSchema],
  ['CaseActionRequest', caseActionRequestSchema],
  ['WebhookEndpointRegistration', webhookRegistrationContract],
  ['WebhookEndpoint', webhookEndpointSchema],
  ['WebhookEndpointCreated', webhookEndpointCreatedSchema],
  ['WebhookEndpointPage', webhookEndpointPageSchema],
  ['SecretRotationRequest', rotationRequestSchema],
  ['SecretRotation', secretRotationSchema],
  ['WebhookDelivery', webhookDeliverySchema],
  ['WebhookDeliveryPage', webhookDeliveryPageSchema],
  // Not a request or response: the body of every delivery to a registered endpoint, and the data
  // of each event type in it.
  ['WebhookEnvelope', webhookEnvelopeSchema],
  ...WEBHOOK_EVENT_TYPES.map((type): [string, z.ZodType] => [payloadComponentName(type), WEBHOOK_PAYLOADS[type]]),
  ['ImportMapping', mappingDocumentSchema],
  ['ImportDryRunRequest', importDryRunRequestContract],
  ['ImportReject', importRejectSchema],
  ['ImportDryRunReport', importDryRunReportSchema],
  ['ImportCreateRequest', importCreateRequestContract],
  ['ImportSubmitRequest', importSubmitRequestSchema],
  ['ImportChunk', stagedChunkSchema],
  ['Import', importViewSchema],
  ['ImportRejectPage', importRejectPageSchema],
  ['ReconciliationRequest', reconciliationRequestSchema],
  ['Reconciliation', reconciliationSchema],
  ['ReconciliationPage', reconciliationPageSchema],
  ['ReconciliationItemPage', differenceItemPageSchema],
  ['ReconciliationBreak', breakSchema],
  ['ReconciliationBreakPage', breakPageSchema],
  ['BreakAcknowledgeRequest', acknowledgeRequestSchema],
  ['BreakCommentRequest', commentRequestSchema],
  ['BreakResolveRequest', resolveRequestSchema],
  ['ReconciliationExpectationRequest', expectationRequestSchema],
  ['ReconciliationExpectation', expectationSchema],
  ['ReconciliationExpectationList', expectationListSchema],
];
for (const [id, schema] of NAMED) API_COMPONENTS.add(schema, { id });


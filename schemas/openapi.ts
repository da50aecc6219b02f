import { batchItemSchema, PUBLISHED_ENVELOPES } from './envelope.ts';
import { ERROR_CATALOG } from './errors/catalog.ts';
import { FAMILIES, FAMILY_NAMES } from './families/index.ts';
import { problemSchema } from './problem.ts';
import {
  ALERT_STATUSES,
  alertDetailSchema,
  alertPageSchema,
  alertSchema,
  batchResponseSchema,
  canonicalViewSchema,
  caseActionRequestSchema,
  EPISODE_STATUSES,
  episodeDetailSchema,
  episodePageSchema,
  episodeSchema,
  dryRunResponseSchema,
  eventStatusSchema,
  graphNetworkSchema,
  graphPathsSchema,
  healthSchema,
  ingestReceiptSchema,
  movementPageSchema,
  postureSchema,
} from './responses.ts';
import { WEBHOOK_EVENT_CATALOG } from './webhooks/catalog.ts';
import { EDGE_TYPES } from './graph.ts';
import { AUTH_FAILURES, idParam, json, jsonSchema, problemResponse, ref, signedRequest, type JsonSchema } from './openapi-parts.ts';
import { WEBHOOK_PATHS, webhookSchemas } from './openapi-webhooks.ts';
import { IMPORT_PATHS, importSchemas } from './openapi-imports.ts';
import { RECONCILIATION_PATHS, reconciliationSchemas } from './openapi-reconciliations.ts';
import { batchRequestSchema } from './envelope.ts';

// OpenAPI 3.1 generated from the same zod schemas that validate requests, so the document
// cannot drift from the behaviour.
const INGEST_FAILURES = {
  '400': problemResponse('the payload does not match the schema (svc:validation/*, with field paths)'),
  ...AUTH_FAILURES,
  '409': problemResponse('svc:sequence/conflict or svc:idempotency/key_conflict'),
  '413': problemResponse('the body is above the payload cap'),
  '429': problemResponse('per-tenant rate limit (Retry-After)'),
};
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'replays the stored response for 24 h; scoped to tenant, endpoint and key',
};
const externalIdParam = { name: 'external_id', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 } };

function ingestPath(family: (typeof FAMILY_NAMES)[number]) {
  return {
    post: {
      summary: `Ingest one ${family} event (scope ingest)`,
      security: signedRequest,
      parameters: [idempotencyKey],
      requestBody: { required: true, content: { 'application/json': { schema: ref(`${pascal(family)}Event`) } } },
      responses: { '202': json(ref('IngestReceipt'), 'accepted and committed (new, or a duplicate with idempotent_replay true)'), ...INGEST_FAILURES },
    },
  };
}

const GRAPH_FILTER_PARAMS = [
  { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'event-time window start (transfers in it; other edges valid in it)' },
  { name: 'until', in: 'query', schema: { type: 'string', format: 'date-time' } },
  { name: 'edge_types', in: 'query', schema: { type: 'string' }, description: `comma-separated: ${EDGE_TYPES.join(', ')}` },
  { name: 'min_amount', in: 'query', schema: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' }, description: 'transfers of at least this many base-asset minor units' },
];

function readPath(summary: string, schema: unknown, parameters: unknown[] = [externalIdParam]) {
  return {
    get: {
      summary: `${summary} (scope read)`,
      security: signedRequest,
      parameters,
      responses: { '200': json(schema, 'found'), '400': problemResponse('invalid query parameters'), ...AUTH_FAILURES, '404': problemResponse('unknown in this tenant') },
    },
  };
}

const COMPLIANCE_LIST_PARAMS = [
  { name: 'subject', in: 'query', schema: { type: 'string', minLength: 1, maxLength: 256 }, description: 'external_id of an account or party' },
  { name: 'subject_kind', in: 'query', schema: { type: 'string', enum: ['account', 'party'] }, description: 'only with subject' },
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'next_cursor of the previous page, with the same filters' },
];

function compliancePath(summary: string, schema: unknown, parameters: unknown[]) {
  return {
    get: {
      summary: `${summary} (scope compliance)`,
      security: signedRequest,
      parameters,
      responses: { '200': json(schema, 'found'), '400': problemResponse('invalid query parameters'), ...AUTH_FAILURES, '404': problemResponse('unknown in this tenant, or not an id of this kind') },
    },
  };
}


export function buildOpenApiDocument(): JsonSchema {
  const envelopeSchemas = Object.fromEntries(FAMILY_NAMES.map((family) => [`${pascal(family)}Event`, jsonSchema(PUBLISHED_ENVELOPES[family])]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Financial-crime control service',
      version: '2026-09-01',
      description:
        'Every request except health is signed with SVC-HMAC-SHA256: an eight-line canonical string ' +
        '(scheme, method, normalised path, canonical query, body SHA-256, timestamp, nonce, key id) ' +
        'signed with HMAC-SHA256 under the base64url-decoded key secret, sent as Svc-Signature: v1=<hex>. ' +
        'Errors are application/problem+json with a governed code: ' +
        Object.entries(ERROR_CATALOG)
          .map(([code, e]) => `${code} (${e.status})`)
          .join(', ') +
        '. Webhook event types: ' +
        Object.keys(WEBHOOK_EVENT_CATALOG).join(', ') +
        '.',
    },
    components: {
      securitySchemes: {
        SvcKeyId: { type: 'apiKey', in: 'header', name: 'Svc-Key-Id' },
        SvcTimestamp: { type: 'apiKey', in: 'header', name: 'Svc-Timestamp', description: 'Unix seconds' },
        SvcNonce: { type: 'apiKey', in: 'header', name: 'Svc-Nonce', description: '1-64 of A-Z a-z 0-9 . _ ~ -, single use per key for 600 s' },
        SvcSignature: { type: 'apiKey', in: 'header', name: 'Svc-Signature', description: 'v1= followed by 64 lower-case hex' },
      },
      schemas: {
        ...envelopeSchemas,
        BatchItem: jsonSchema(batchItemSchema),
        BatchRequest: { ...jsonSchema(batchRequestSchema), properties: { events: { type: 'array', minItems: 1, maxItems: 1000, items: ref('BatchItem') } } },
        ProblemDetails: jsonSchema(problemSchema),
        DryRunResponse: jsonSchema(dryRunResponseSchema),
        IngestReceipt: jsonSchema(ingestReceiptSchema),
        BatchResponse: jsonSchema(batchResponseSchema),
        EventStatus: jsonSchema(eventStatusSchema),
        CanonicalView: jsonSchema(canonicalViewSchema),
        MovementPage: jsonSchema(movementPageSchema),
        Posture: jsonSchema(postureSchema),
        Health: jsonSchema(healthSchema),
        GraphNetwork: jsonSchema(graphNetworkSchema),
        GraphPaths: jsonSchema(graphPathsSchema),
        Alert: jsonSchema(alertSchema),
        AlertDetail: jsonSchema(alertDetailSchema),
        AlertPage: jsonSchema(alertPageSchema),
        Episode: jsonSchema(episodeSchema),
        EpisodeDetail: jsonSchema(episodeDetailSchema),
        EpisodePage: jsonSchema(episodePageSchema),
        CaseActionRequest: jsonSchema(caseActionRequestSchema),
        ...webhookSchemas(),
        ...importSchemas(),
        ...reconciliationSchemas(),
      },
    },
    paths: {
      '/health': {
        get: {
          summary: 'Liveness (unauthenticated)',
          security: [],
          responses: { '200': { description: 'alive', content: { 'application/json': { schema: ref('Health') } } } },
        },
      },
      ...Object.fromEntries(FAMILY_NAMES.map((family) => [FAMILIES[family].path, ingestPath(family)])),
      '/v1/batches': {
        post: {
          summary: 'Ingest 1-1000 events of mixed families in one transaction (scope ingest)',
          security: signedRequest,
          parameters: [idempotencyKey],
          requestBody: { required: true, content: { 'application/json': { schema: ref('BatchRequest') } } },
          responses: {
            '202': json(ref('BatchResponse'), 'at least one item accepted; check results[i].outcome'),
            '422': json(ref('BatchResponse'), 'every item rejected'),
            ...INGEST_FAILURES,
            '413': problemResponse('more than 1000 events (svc:batch/too_large) or the body is above the payload cap'),
          },
        },
      },
      '/v1/events/{event_id}': {
        get: {
          summary: 'Where an accepted event is (scope ingest)',
          security: signedRequest,
          parameters: [{ name: 'event_id', in: 'path', required: true, schema: { type: 'string' }, description: 'evt_<uuid>, or the bare uuid' }],
          responses: { '200': json(ref('EventStatus'), 'the event status record'), ...AUTH_FAILURES, '404': problemResponse('no such event in this tenant') },
        },
      },
      '/v1/parties/{external_id}': readPath('The current version of a party', ref('CanonicalView')),
      '/v1/accounts/{external_id}': readPath('The current version of an account', ref('CanonicalView')),
      '/v1/instruments/{external_id}': readPath('The current version of an instrument', ref('CanonicalView')),
      '/v1/movements/{external_id}': readPath('A movement, with its normalised amount and FX provenance', ref('CanonicalView')),
      '/v1/parties/{external_id}/movements': readPath('A party\'s movements, newest first, by opaque cursor', ref('MovementPage'), [
        externalIdParam,
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        { name: 'direction', in: 'query', schema: { type: 'string', enum: ['in', 'out', 'both'], default: 'both' } },
        { name: 'from', in: 'query', schema: { type: 'string', format: 'date-time' } },
        { name: 'to', in: 'query', schema: { type: 'string', format: 'date-time' } },
      ]),
      '/v1/posture/parties/{external_id}': readPath('The banded posture of a party; no reasons', ref('Posture')),
      '/v1/graph/parties/{external_id}/network': readPath('A party\'s network to a depth, as nodes and edges to draw', ref('GraphNetwork'), [
        externalIdParam,
        { name: 'depth', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 4, default: 2 }, description: 'hops over edges of any type and direction' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 200 }, description: 'most nodes returned (the party included)' },
        ...GRAPH_FILTER_PARAMS,
      ]),
      '/v1/graph/paths': readPath('Shortest paths between two parties, as nodes and edges to draw', ref('GraphPaths'), [
        { name: 'from', in: 'query', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 }, description: 'party external_id' },
        { name: 'to', in: 'query', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 }, description: 'party external_id' },
        { name: 'max_depth', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 8, default: 6 } },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 50, default: 10 }, description: 'most paths returned' },
        ...GRAPH_FILTER_PARAMS,
      ]),
      '/v1/alerts': compliancePath('Live alerts, newest first, by opaque cursor', ref('AlertPage'), [
        { name: 'status', in: 'query', schema: { type: 'string', enum: ALERT_STATUSES } },
        { name: 'detector', in: 'query', schema: { type: 'string', maxLength: 128 } },
        { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'alerts created at or after' },
        ...COMPLIANCE_LIST_PARAMS,
      ]),
      '/v1/alerts/{alert_id}': compliancePath('An alert with every evidence entry', ref('AlertDetail'), [idParam('alert_id', 'alrt_')]),
      '/v1/episodes': compliancePath('Episodes, most recently changed first, by opaque cursor', ref('EpisodePage'), [
        { name: 'status', in: 'query', schema: { type: 'string', enum: EPISODE_STATUSES } },
        { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'episodes changed at or after' },
        ...COMPLIANCE_LIST_PARAMS,
      ]),
      '/v1/episodes/{episode_id}': compliancePath('An episode with its alerts and case history', ref('EpisodeDetail'), [idParam('episode_id', 'epsd_')]),
      '/v1/episodes/{episode_id}/case': {
        post: {
          summary: 'Set the case status and/or disposition of an episode (scope compliance)',
          description:
            'A disposition closes the case (status omitted or closed) and resolves the episode; closed needs a disposition; ' +
            'escalated escalates the episode; open or investigating reopens a resolved episode. Setting what is already set changes nothing.',
          security: signedRequest,
          parameters: [idParam('episode_id', 'epsd_')],
          requestBody: { required: true, content: { 'application/json': { schema: ref('CaseActionRequest') } } },
          responses: {
            '200': json(ref('EpisodeDetail'), 'the episode after the action'),
            '400': problemResponse('svc:validation/schema with field paths, or a malformed body'),
            ...AUTH_FAILURES,
            '404': problemResponse('no such episode in this tenant'),
            '415': problemResponse('the body is not application/json'),
          },
        },
      },
      '/v1/validate': {
        post: {
          summary: 'Run the live validation on a batch or one item; nothing is stored (scope ingest or read)',
          security: signedRequest,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { oneOf: [ref('BatchRequest'), ref('BatchItem')] } } },
          },
          responses: {
            '200': { description: 'every item is valid', content: { 'application/json': { schema: ref('DryRunResponse') } } },
            '400': problemResponse('malformed body or batch envelope'),
            '401': problemResponse('signature missing, wrong, stale or replayed'),
            '403': problemResponse('the credential has neither ingest nor read scope'),
            '413': problemResponse('more than 1000 items, or the body is above the payload cap'),
            '422': { description: 'at least one item is invalid', content: { 'application/json': { schema: ref('DryRunResponse') } } },
          },
        },
      },
      ...WEBHOOK_PATHS,
      ...IMPORT_PATHS,
      ...RECONCILIATION_PATHS,
    },
    'x-families': Object.fromEntries(FAMILY_NAMES.map((f) => [f, { kind: FAMILIES[f].kind, ingest_path: FAMILIES[f].path }])),
  };
}

function pascal(name: string): string {
  return name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

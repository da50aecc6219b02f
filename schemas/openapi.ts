import { z } from 'zod';
import { batchItemSchema, ENVELOPES } from './envelope.ts';
import { ERROR_CATALOG } from './errors/catalog.ts';
import { FAMILIES, FAMILY_NAMES } from './families/index.ts';
import { problemSchema } from './problem.ts';
import { dryRunResponseSchema, healthSchema } from './responses.ts';
import { WEBHOOK_EVENT_CATALOG } from './webhooks/catalog.ts';
import { batchRequestSchema } from './envelope.ts';

// OpenAPI 3.1 generated from the same zod schemas that validate requests, so the document
// cannot drift from the behaviour.
type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('ProblemDetails') } },
});

const signedRequest = [{ SvcKeyId: [], SvcTimestamp: [], SvcNonce: [], SvcSignature: [] }];

export function buildOpenApiDocument(): JsonSchema {
  const envelopeSchemas = Object.fromEntries(FAMILY_NAMES.map((family) => [`${pascal(family)}Event`, jsonSchema(ENVELOPES[family])]));
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
        Health: jsonSchema(healthSchema),
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
    },
    'x-families': Object.fromEntries(FAMILY_NAMES.map((f) => [f, { kind: FAMILIES[f].kind, ingest_path: FAMILIES[f].path }])),
  };
}

function pascal(name: string): string {
  return name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

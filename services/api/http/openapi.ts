import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { API_COMPONENTS, ENVELOPE_COMPONENTS } from '../../../schemas/api-components.ts';
import { ERROR_CATALOG } from '../../../schemas/errors/catalog.ts';
import { FAMILIES, FAMILY_NAMES } from '../../../schemas/families/index.ts';
import { WEBHOOK_EVENT_CATALOG } from '../../../schemas/webhooks/catalog.ts';
import { publishedDocument } from './openapi-document.ts';
import { withExamples } from './openapi-examples.ts';
import { withWebhooks } from './openapi-webhooks.ts';
import { CAPABILITY_TAGS, problem } from './route-schema.ts';

// The OpenAPI 3.1 document, generated from the routes' declared contracts (@fastify/swagger with
// the type provider's transform): registered before the routes, which it collects as they are
// added. Documented: /health and every /v1 route; signed unless the route is public.
const SIGNED = [{ SvcKeyId: [], SvcTimestamp: [], SvcNonce: [], SvcSignature: [] }];
// Every signed request reads PostgreSQL (its nonce at least), so any of them can find it away.
const SIGNED_ROUTE_FAILURES = {
  401: problem('signature missing, wrong, stale or replayed'),
  403: problem('the credential lacks the scope'),
  503: problem('a store the service depends on does not answer: retry after Retry-After (with an Idempotency-Key for a write)'),
};

const DESCRIPTION =
  'Every request except health is signed with SVC-HMAC-SHA256: an eight-line canonical string ' +
  '(scheme, method, normalised path, canonical query, body SHA-256, timestamp, nonce, key id) ' +
  'signed with HMAC-SHA256 under the base64url-decoded key secret, sent as Svc-Signature: v1=<hex>. ' +
  'Errors are application/problem+json with a governed code: ' +
  Object.entries(ERROR_CATALOG)
    .map(([code, e]) => `${code} (${e.status})`)
    .join(', ') +
  '. Webhook event types: ' +
  Object.keys(WEBHOOK_EVENT_CATALOG).join(', ') +
  '.';

const transformRoute = createJsonSchemaTransform({ schemaRegistry: API_COMPONENTS, skipList: [] });
const transformObject = createJsonSchemaTransformObject({ schemaRegistry: API_COMPONENTS });

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Financial-crime control service', version: '2026-09-01', description: DESCRIPTION },
      tags: [...CAPABILITY_TAGS],
      components: {
        securitySchemes: {
          SvcKeyId: { type: 'apiKey', in: 'header', name: 'Svc-Key-Id' },
          SvcTimestamp: { type: 'apiKey', in: 'header', name: 'Svc-Timestamp', description: 'Unix seconds' },
          SvcNonce: { type: 'apiKey', in: 'header', name: 'Svc-Nonce', description: '1-64 of A-Z a-z 0-9 . _ ~ -, single use per key for 600 s' },
          SvcSignature: { type: 'apiKey', in: 'header', name: 'Svc-Signature', description: 'v1= followed by 64 lower-case hex' },
        },
      },
    },
    transform: (input) => {
      const { url, route } = input;
      if (!(url.startsWith('/v1/') || url === '/health')) return { schema: { hide: true }, url };
      const open = route.config?.public === true;
      const declared = (input.schema ?? {}) as FastifySchema & { response?: Record<string, unknown> };
      const schema = { ...declared, security: open ? [] : SIGNED, response: { ...declared.response, ...(open ? {} : SIGNED_ROUTE_FAILURES) } };
      return transformRoute({ ...input, schema });
    },
    transformObject: (input) => {
      const generated = transformObject(input);
      const document = withExamples(publishedDocument(generated, { output: ['WebhookEnvelope', 'CanonicalView'], input: Object.values(ENVELOPE_COMPONENTS) }));
      const families = Object.fromEntries(FAMILY_NAMES.map((f) => [f, { kind: FAMILIES[f].kind, ingest_path: FAMILIES[f].path }]));
      const published = { ...withWebhooks(document), 'x-families': families };
      return published;
    },
  });
}

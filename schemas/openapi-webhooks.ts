import { AUTH_FAILURES, idParam, json, jsonSchema, problemResponse, ref, signedRequest } from './openapi-parts.ts';
import { WEBHOOK_EVENT_TYPES } from './webhooks/catalog.ts';
import {
  DELIVERY_STATUSES,
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

// Webhook management in the OpenAPI document (scope webhook_mgmt). None of these takes an
// Idempotency-Key: a request carrying one is refused with 400.
export function webhookSchemas() {
  return {
    // Validation takes any strings here so that each entry gets its own finding; what a client may
    // send is a catalog type.
    WebhookEndpointRegistration: withCatalogTypes(jsonSchema(endpointRegistrationSchema)),
    WebhookEndpoint: jsonSchema(webhookEndpointSchema),
    WebhookEndpointCreated: jsonSchema(webhookEndpointCreatedSchema),
    WebhookEndpointPage: jsonSchema(webhookEndpointPageSchema),
    SecretRotationRequest: jsonSchema(rotationRequestSchema),
    SecretRotation: jsonSchema(secretRotationSchema),
    WebhookDelivery: jsonSchema(webhookDeliverySchema),
    WebhookDeliveryPage: jsonSchema(webhookDeliveryPageSchema),
    // Not a request or response: the body of every delivery to a registered endpoint.
    WebhookEnvelope: jsonSchema(webhookEnvelopeSchema),
  };
}

const endpointId = idParam('id', 'whk_');
const deliveryId = idParam('id', 'whd_');
const NOT_FOUND = { '404': problemResponse('unknown in this tenant, or not an id of this kind') };
const paging = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'next_cursor of the previous page, with the same filters' },
];
const operation = (summary: string, parameters: unknown[], responses: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  summary: `${summary} (scope webhook_mgmt)`,
  security: signedRequest,
  parameters,
  ...extra,
  responses: { ...responses, ...AUTH_FAILURES },
});
const endpointAction = (summary: string) => ({
  post: operation(summary, [endpointId], { '200': json(ref('WebhookEndpoint'), 'the endpoint after the action'), ...NOT_FOUND }),
});

export const WEBHOOK_PATHS = {
  '/v1/webhook-endpoints': {
    post: operation(
      'Register an endpoint; its secret is shown once',
      [],
      {
        '201': json(ref('WebhookEndpointCreated'), 'registered and enabled'),
        '400': problemResponse(
          'svc:validation/schema; svc:webhook/event_not_deliverable (an event type the channel may not carry); ' +
            'svc:webhook/destination_refused (not HTTPS, credentials in the URL, or an address that is not public, also after resolution)',
        ),
        '415': problemResponse('the body is not application/json'),
      },
      { requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookEndpointRegistration') } } } },
    ),
    get: operation('Endpoints, oldest first, by opaque cursor', paging, {
      '200': json(ref('WebhookEndpointPage'), 'a page'),
      '400': problemResponse('invalid query parameters'),
    }),
  },
  '/v1/webhook-endpoints/{id}': {
    get: operation('An endpoint (never its secret)', [endpointId], { '200': json(ref('WebhookEndpoint'), 'found'), ...NOT_FOUND }),
    delete: operation('Delete an endpoint; its pending deliveries are cancelled, its delivery log stays', [endpointId], {
      '204': { description: 'deleted' },
      ...NOT_FOUND,
    }),
  },
  '/v1/webhook-endpoints/{id}/disable': endpointAction('Disable an endpoint: nothing is delivered to it and its pending deliveries are cancelled'),
  '/v1/webhook-endpoints/{id}/enable': endpointAction('Enable a disabled endpoint'),
  '/v1/webhook-endpoints/{id}/rotate-secret': {
    post: operation(
      'Rotate the secret: the new one is shown once; the previous one keeps signing (a second v1) until previous_secret_valid_until',
      [endpointId],
      { '200': json(ref('SecretRotation'), 'rotated'), '400': problemResponse('svc:validation/schema'), ...NOT_FOUND },
      { requestBody: { required: false, content: { 'application/json': { schema: ref('SecretRotationRequest') } } } },
    ),
  },
  '/v1/webhook-endpoints/{id}/test': {
    post: operation('Send a signed webhook.test through the delivery worker and wait for its one attempt', [endpointId], {
      '200': json(ref('WebhookDelivery'), 'the endpoint answered 2xx (verified; stamped as verified_at)'),
      '409': problemResponse('svc:webhook/endpoint_inactive: the endpoint is disabled'),
      '502': problemResponse('svc:webhook/endpoint_failed: the endpoint did not answer 2xx (the detail names the delivery and why)'),
      '504': problemResponse('svc:webhook/test_timeout: queued, outcome not observed in time; it appears in the delivery list'),
      ...NOT_FOUND,
    }),
  },
  '/v1/webhook-deliveries': {
    get: operation(
      'Deliveries, newest first, each with every attempt (response status, latency, next scheduled retry)',
      [
        { name: 'endpoint_id', in: 'query', schema: { type: 'string' }, description: 'whk_ id' },
        { name: 'status', in: 'query', schema: { type: 'string', enum: DELIVERY_STATUSES } },
        { name: 'event_type', in: 'query', schema: { type: 'string', enum: WEBHOOK_EVENT_TYPES } },
        { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' }, description: 'deliveries created at or after' },
        ...paging,
      ],
      { '200': json(ref('WebhookDeliveryPage'), 'a page'), '400': problemResponse('invalid query parameters') },
    ),
  },
  '/v1/webhook-deliveries/{id}': {
    get: operation('A delivery with every attempt', [deliveryId], { '200': json(ref('WebhookDelivery'), 'found'), ...NOT_FOUND }),
  },
  '/v1/webhook-deliveries/{id}/replay': {
    post: operation('Send the same envelope (same whe_ id) again to the same endpoint, as a new delivery', [deliveryId], {
      '202': json(ref('WebhookDelivery'), 'the new delivery, due now'),
      '409': problemResponse('svc:webhook/endpoint_inactive: the endpoint is disabled or deleted'),
      ...NOT_FOUND,
    }),
  },
};

function withCatalogTypes(schema: Record<string, any>) {
  return { ...schema, properties: { ...schema.properties, event_types: { ...schema.properties.event_types, items: { type: 'string', enum: WEBHOOK_EVENT_TYPES } } } };
}

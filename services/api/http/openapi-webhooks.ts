import { WEBHOOK_EVENT_CATALOG, WEBHOOK_EVENT_TYPES } from '../../../schemas/webhooks/catalog.ts';
import { listOf, objectOf } from './json-object.ts';

// The document's OpenAPI 3.1 `webhooks`: one POST per event type, whose body is that type's
// member of the WebhookEnvelope component (its data a reference to the type's payload component,
// generated from schemas/webhooks/payloads.ts), so a consumer's generator sees each delivery as
// the service sends it.

const SIGNATURE_HEADERS = [
  {
    name: 'Svc-Webhook-Signature',
    in: 'header',
    required: true,
    description: 't=<unix seconds>,v1=<hex>, one further v1=<hex> per additional active secret; HMAC-SHA256 of t, a period and the raw body',
    schema: { type: 'string' },
  },
  { name: 'Svc-Webhook-Timestamp', in: 'header', required: true, description: 'The same t value', schema: { type: 'string' } },
  { name: 'Svc-Webhook-Id', in: 'header', required: true, description: 'The envelope id (whe_): the dedupe key', schema: { type: 'string' } },
];

export function withWebhooks<D extends object>(document: D): D {
  const schemas = objectOf(objectOf(objectOf(document).components).schemas);
  const members = listOf(objectOf(schemas.WebhookEnvelope).oneOf).map(objectOf);
  const memberOf = (type: string) => {
    const member = members.find((m) => objectOf(objectOf(m.properties).type).const === type);
    if (!member) throw new Error(`the WebhookEnvelope component has no member for ${type}`);
    return member;
  };
  const webhooks = Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => {
      const { classification, channels } = WEBHOOK_EVENT_CATALOG[type];
      return [
        type,
        {
          post: {
            operationId: `webhook_${type.replace(/\./g, '_')}`,
            tags: ['webhooks'],
            summary: `${type}: ${classification}, delivered on ${channels.join(' and ')}`,
            description: 'At least once: deduplicate on the envelope id. Acknowledge with any 2xx; any other answer is retried.',
            parameters: SIGNATURE_HEADERS,
            requestBody: { required: true, content: { 'application/json': { schema: memberOf(type) } } },
            responses: { '2XX': { description: 'Acknowledged' } },
          },
        },
      ];
    }),
  );
  return { ...document, webhooks } as D;
}

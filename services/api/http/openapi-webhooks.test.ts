// The document publishes every webhook delivery (OpenAPI 3.1 `webhooks`) with its type's data,
// generated from the declared payloads (schemas/webhooks/payloads.ts).
import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_CATALOG, WEBHOOK_EVENT_TYPES } from '../../../schemas/webhooks/catalog.ts';
import { payloadComponentName } from '../../../schemas/webhooks/payloads.ts';
import { generateOpenApiDocument } from './openapi-offline.ts';
import { objectOf } from './json-object.ts';
import { withWebhooks } from './openapi-webhooks.ts';

const document = await generateOpenApiDocument();
const schemas = objectOf(objectOf(document.components).schemas);
const webhooks = objectOf(document.webhooks);
const bodyOf = (type: string) => objectOf(objectOf(objectOf(objectOf(objectOf(objectOf(webhooks[type]).post).requestBody).content)['application/json']).schema);

describe('the webhooks of the OpenAPI document', () => {
  it('lists one delivery per catalog type, and nothing else', () => {
    expect(Object.keys(webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it.each(WEBHOOK_EVENT_TYPES)('%s: its envelope, with its classification and its declared data', (type) => {
    const properties = objectOf(bodyOf(type).properties);
    expect(objectOf(properties.type).const).toBe(type);
    expect(objectOf(properties.classification).const).toBe(WEBHOOK_EVENT_CATALOG[type].classification);
    expect(properties.data).toEqual({ $ref: `#/components/schemas/${payloadComponentName(type)}` });
    expect(schemas[payloadComponentName(type)]).toBeDefined();
  });

  it('declares each emitted payload field by field: no data is an open record', () => {
    const open = WEBHOOK_EVENT_TYPES.filter((type) => {
      const payload = objectOf(schemas[payloadComponentName(type)]);
      const members = Array.isArray(payload.oneOf) ? payload.oneOf.map(objectOf) : [payload];
      return members.some((m) => m.additionalProperties !== false || Object.keys(objectOf(m.properties)).length === 0);
    });
    expect(open).toEqual([]);
    // A payload with several causes lists each: the cause is a constant of every member.
    const escalated = objectOf(schemas.EpisodeEscalatedData);
    expect((escalated.oneOf as unknown[]).map((m) => objectOf(objectOf(objectOf(m).properties).reason).const)).toEqual(['threshold', 'case_action']);
  });

  it('refuses to publish when the envelope lacks a type', () => {
    expect(() => withWebhooks({ components: { schemas: { WebhookEnvelope: { oneOf: [] } } } })).toThrow(/no member for alert\.opened/);
  });
});

import { z } from 'zod';

// Pieces every part of the OpenAPI document is made of.
export type JsonSchema = Record<string, unknown>;

export function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('ProblemDetails') } },
});

export const signedRequest = [{ SvcKeyId: [], SvcTimestamp: [], SvcNonce: [], SvcSignature: [] }];
export const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
export const AUTH_FAILURES = {
  '401': problemResponse('signature missing, wrong, stale or replayed'),
  '403': problemResponse('the credential lacks the scope'),
};
export const idParam = (name: string, prefix: string) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description: `${prefix}<uuid>, or the bare uuid` });

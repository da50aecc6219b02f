import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { bodyRefusal, rawBody, readJsonBody } from '../../../platform/http/json-body.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import type { FieldError } from '../../../schemas/problem.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';
import { problem } from './route-schema.ts';

const NOTHING = z.strictObject({});

// What a route that takes no body declares besides its own answers.
export const NO_BODY_RESPONSES = {
  400: problem('svc:request/malformed_json; svc:validation/schema (a member: this action takes no body, or {})'),
  415: problem('a body that is not application/json'),
};

export type BodyRefusal = { code: ErrorCode; detail: string; errors?: FieldError[] };

// For actions that take no body: none, or an empty JSON object. Anything else is refused as a
// route that reads a body would refuse it (415, malformed JSON, unknown member at its path):
// ignored, a parameter these actions do not have (an overlap, a reason) looked honoured, and
// bytes that were not even JSON were acted on.
export function refuseBody(request: FastifyRequest, what: string): BodyRefusal | undefined {
  if (rawBody(request).length === 0) return undefined;
  const body = readJsonBody(request);
  if (!body.ok) return { code: body.code, ...bodyRefusal(body) };
  const parsed = NOTHING.safeParse(body.value);
  if (parsed.success) return undefined;
  return { code: 'svc:validation/schema', detail: `the ${what} action takes no body, or {}`, errors: requestSchemaErrors(parsed.error) };
}

// Route schemas on the console app (fastify-type-provider-zod): zod validates params, query and
// body and encodes every declared response, and handlers are typed from the same schemas
// (schemas/console/). A request that does not match its schema still answers the console's own
// problems, after the session guard (no session: 401 before any 400):
//   - a body that is not JSON: 415 or 400 svc:request/malformed_json, as readJsonBody says;
//   - a body that does not match: 400 svc:validation/schema, one error per field path;
//   - a query that does not match: 400 svc:request/invalid_parameter, one error per parameter.
// Bodies arrive as raw bytes (createEdgeApp); a route with a body schema has them parsed here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { ZodType, type z } from 'zod';
import type { FieldError } from '../../schemas/problem.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { bodyRefusal, readJsonBody, type JsonBody } from '../api/http/json-body.ts';
import { sendProblem } from '../api/http/problem-reply.ts';

type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

// A part of the request that failed its schema, with the findings as field errors.
class ContractViolation extends Error {
  constructor(
    readonly part: HttpPart,
    readonly errors: FieldError[],
  ) {
    super(`the ${part} does not match its schema`);
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    // A body the route's schema could not see: not JSON, or past the request bounds.
    consoleBodyRefusal?: Extract<JsonBody, { ok: false }>;
  }
}

const hasBodySchema = (request: FastifyRequest) => request.routeOptions.schema?.body !== undefined;

// Call before any route is declared.
export function useConsoleContract(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart, url }) => {
    if (!(schema instanceof ZodType)) throw new Error(`console route ${url}: declare its ${httpPart} schema with zod`);
    return (data: unknown) => validate(schema, httpPart, data);
  });
  const validate = (schema: z.ZodType, httpPart: string | undefined, data: unknown) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const part = (httpPart ?? 'body') as HttpPart;
    const errors = requestSchemaErrors(result.error).map((e) => (part === 'querystring' ? { ...e, code: 'svc:request/invalid_parameter' as const } : e));
    return { error: new ContractViolation(part, errors) };
  };
  app.setSerializerCompiler(serializerCompiler);
  // The route's handler runs only after contractRefusal (below) let it through.
  app.addHook('onRoute', (route) => {
    if (route.schema) route.attachValidation = true;
  });
  app.addHook('preValidation', async (request) => {
    if (!hasBodySchema(request)) return;
    const body = readJsonBody(request);
    if (body.ok) request.body = body.value;
    else {
      request.consoleBodyRefusal = body;
      request.body = undefined;
    }
  });
}

// A preHandler: register it after the session guard.
export async function contractRefusal(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const refusal = request.consoleBodyRefusal;
  if (refusal) return sendProblem(request, reply, refusal.code, bodyRefusal(refusal));
  const violation = request.validationError;
  if (!violation) return undefined;
  if (!(violation instanceof ContractViolation)) throw violation;
  if (violation.part === 'querystring') return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: violation.errors });
  if (violation.part === 'params') return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no such resource in this tenant' });
  return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the request body is not valid', errors: violation.errors });
}

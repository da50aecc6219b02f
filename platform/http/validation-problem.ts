import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { FieldError } from '../../schemas/problem.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { sendProblem } from './problem-reply.ts';

export type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

// A part of the request that failed its declared zod schema (contracts.ts), with the findings as
// field errors: path = the parameter's name or the body member's dotted path, zod's message.
export class ContractViolation extends Error {
  readonly errors: FieldError[];

  constructor(
    readonly part: HttpPart,
    error: z.ZodError,
  ) {
    super(`the ${part} does not match its schema`);
    const errors = requestSchemaErrors(error);
    this.errors =
      part === 'querystring'
        ? errors.map((e) => ({ ...e, code: 'svc:request/invalid_parameter' as const, ...(e.message === 'unknown member' ? { message: 'unknown parameter' } : {}) }))
        : errors;
  }
}

export function isContractViolation(error: unknown): error is ContractViolation {
  return error instanceof ContractViolation;
}

// The governed problem of each refused part, every finding at once:
//   - a query: 400 svc:request/invalid_parameter naming each parameter;
//   - a path parameter: 404, as an id that cannot be one is unknown;
//   - a body (or declared headers): 400 svc:validation/schema, one error per field path.
export function sendContractViolation(request: FastifyRequest, reply: FastifyReply, violation: ContractViolation): FastifyReply {
  if (violation.part === 'querystring') return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: violation.errors });
  if (violation.part === 'params') return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no such resource in this tenant' });
  return sendProblem(request, reply, 'svc:validation/schema', { detail: 'the request body is not valid', errors: violation.errors });
}

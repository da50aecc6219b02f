import type { FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { FieldError } from '../../../schemas/problem.ts';
import { sendProblem } from './problem-reply.ts';

// A declared route's parameters refused by its zod schema, as the governed problem the spec
// gives: 400 svc:request/invalid_parameter naming each parameter (path = its name), every finding
// at once. Bodies are not validated here: they stay raw bytes until authenticated (contracts.ts).
export function isContractViolation(error: unknown): boolean {
  return hasZodFastifySchemaValidationErrors(error);
}

export function sendContractViolation(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const errors: FieldError[] = hasZodFastifySchemaValidationErrors(error)
    ? error.validation.map((finding) => ({
        path: finding.instancePath.replace(/^\//, '').replaceAll('/', '.'),
        code: 'svc:request/invalid_parameter',
        message: finding.message ?? 'is not valid',
      }))
    : [];
  return sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors });
}

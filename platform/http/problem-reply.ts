import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { buildProblem, PROBLEM_CONTENT_TYPE, type FieldError, type Problem } from '../../schemas/problem.ts';

export function requestPath(request: FastifyRequest): string {
  const q = request.url.indexOf('?');
  return q < 0 ? request.url : request.url.slice(0, q);
}

export function problemFor(
  request: FastifyRequest,
  code: ErrorCode,
  options: { detail?: string; errors?: FieldError[] } = {},
): Problem {
  return buildProblem(code, { instance: requestPath(request), correlationId: request.id, ...options });
}

// The one way a governed problem leaves the service.
export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  options: { detail?: string; errors?: FieldError[] } = {},
): FastifyReply {
  const problem = problemFor(request, code, options);
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}

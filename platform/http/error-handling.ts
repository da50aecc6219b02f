import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { isTransient } from '../bus/parking/transient.ts';
import { describeFailure } from '../failure-description.ts';
import { sendProblem } from './problem-reply.ts';
import { isContractViolation, sendContractViolation } from './validation-problem.ts';

// A store that does not answer (PostgreSQL restarting or failing over, a scale-out engine away)
// is no bug of the request's or ours: 503 with Retry-After, so that a client retries a request it
// sent with an Idempotency-Key (nothing was written: a write commits whole or not at all), and a
// warning of one line instead of an error with a stack per request. Five seconds: a restart takes
// a few, a failover often more, and clients back off further on their own.
const UNAVAILABLE_RETRY_AFTER_S = 5;

export function sendUnavailable(request: FastifyRequest, reply: FastifyReply, detail: string): FastifyReply {
  reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
  return sendProblem(request, reply, 'svc:service/unavailable', { detail });
}

// Fastify's own failures as governed problems. Only client errors are explained to the client;
// anything else is logged with its context and answered with a bare internal error.
// PostgreSQL refuses a text value holding U+0000 (22021): it came from the request (a path or
// query value; bodies are checked field by field before), and no stored value can hold it.
const NUL_IN_TEXT = '22021';

function codeFor(error: FastifyError): ErrorCode {
  switch (error.code) {
    case NUL_IN_TEXT:
      return 'svc:request/bad_request';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'svc:request/payload_too_large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_TYPE':
      return 'svc:request/unsupported_media_type';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'svc:request/malformed_json';
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return 'svc:request/payload_too_large';
  if (status === 415) return 'svc:request/unsupported_media_type';
  if (status === 404) return 'svc:request/not_found';
  if (status >= 400 && status < 500) return 'svc:request/bad_request';
  return 'svc:internal/error';
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A declared route's zod schema refused a parameter (contracts.ts answers these after
    // authentication; this is for a route that validates without attaching).
    if (isContractViolation(error)) return sendContractViolation(request, reply, error);
    const code = codeFor(error);
    if (code === 'svc:internal/error' && isTransient(error)) {
      request.log.warn({ failure: describeFailure(error) }, 'a store did not answer');
      return sendUnavailable(request, reply, 'a store the service depends on does not answer; retry later');
    }
    if (code === 'svc:internal/error') {
      request.log.error({ err: error }, 'request failed');
      return sendProblem(request, reply, code, { detail: 'the service failed to handle this request; it has been logged' });
    }
    const detail = error.code === NUL_IN_TEXT ? 'a value in the request holds the character U+0000, which no stored value can contain' : error.message;
    return sendProblem(request, reply, code, { detail });
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 'svc:request/not_found', { detail: `no route for ${request.method} ${request.url.split('?')[0]}` }),
  );
}

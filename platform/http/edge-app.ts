import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../../schemas/problem.ts';
import { clientErrorHandler } from './client-errors.ts';
import { registerErrorHandling } from './error-handling.ts';
import { RequestLogController } from './request-logging.ts';

// What every HTTP edge of the service shares (the /v1 API and the console): a request id on every
// log line and in the Svc-Correlation-Id header, the request log, 503 while closing, governed
// problems also for failures before routing (a path that cannot be decoded, for one) and for
// every error, and bodies kept as the raw bytes (each route parses its own, after its checks).
export function createEdgeApp(options: {
  logger: FastifyServerOptions['logger'];
  bodyLimit: number;
  trustProxy?: boolean;
  // The request id; a new UUID unless the app takes one from the request.
  requestId?: (request: IncomingMessage) => string;
}): FastifyInstance {
  const app = Fastify({
    logger: options.logger,
    bodyLimit: options.bodyLimit,
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    requestIdHeader: false,
    // A path parameter is an external id of up to 256 characters (as the spec allows), which may
    // take two UTF-16 units each; the router's default (100) refused longer ids before auth.
    routerOptions: { maxParamLength: 1024 },
    genReqId: options.requestId ?? (() => randomUUID()),
    logController: new RequestLogController(),
    return503OnClosing: true,
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => {
      const problem = buildProblem('svc:request/bad_request', {
        instance: (request.url ?? '').split('?')[0] ?? '',
        correlationId: request.id,
        detail: error.message,
      });
      // Fastify types this hook generically over each route's reply schema; none applies here.
      void (reply as FastifyReply).code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
    },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('Svc-Correlation-Id', request.id);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  registerErrorHandling(app);
  return app;
}

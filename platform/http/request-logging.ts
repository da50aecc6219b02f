import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

// One log line per request, on completion, with what an operator needs: method, path (never the
// query, which may carry identifiers), status, duration and the correlation id. Bodies and
// headers (signatures, key ids) are never logged.
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'correlation_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      path: request.url.split('?')[0],
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) request.log.error({ ...line, err: error }, 'request failed');
    else request.log.info(line, 'request completed');
  }
}

import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../../schemas/problem.ts';

// Requests Node's HTTP parser refuses before Fastify sees them (a lower-case method, bad framing,
// a malformed or oversized header, garbage on the wire) get a governed problem too, written on the
// socket, which then closes: a 400 `svc:request/bad_request` naming the parser's reason. Two cases
// cannot be: a connection already reset or no longer writable gets nothing, and a request that
// timed out (408) is answered as Fastify does, since no governed code carries that status.
export const clientErrorHandler: NonNullable<FastifyServerOptions['clientErrorHandler']> = function (error, socket: Socket) {
  const code = (error as { code?: string }).code;
  if (code === 'ECONNRESET' || socket.destroyed) return;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const body = '{"error":"Request Timeout","message":"Client Timeout","statusCode":408}';
    if (socket.writable) socket.write(`HTTP/1.1 408 ${STATUS_CODES[408]}\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
    socket.destroy(error);
    return;
  }
  const problem = buildProblem('svc:request/bad_request', {
    instance: '',
    correlationId: randomUUID(),
    detail: code === 'HPE_HEADER_OVERFLOW' ? 'the request headers are larger than the server accepts' : `the request is not valid HTTP/1.1 (${code ?? 'parse error'})`,
  });
  const body = Buffer.from(JSON.stringify(problem), 'utf8');
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Length: ${body.length}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nConnection: close\r\n\r\n`);
    socket.write(body);
  }
  socket.destroy(error);
};

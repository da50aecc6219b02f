// A real HTTP proxy on 127.0.0.1 in front of the service, for testing clients' retry behaviour:
// a script of faults (a 429 with Retry-After, a 5xx, a connection reset before or after the
// service saw the request) is played against matching requests, and every request received is
// logged with what retries must keep (Idempotency-Key, body bytes) and what they must change
// (Svc-Nonce), so a test can assert exactly which requests were repeated and how.
import { createHash } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../../schemas/problem.ts';

// A path to match: a string is a prefix of the path (query excluded), a RegExp is tested against
// the path (query excluded).
type PathMatch = string | RegExp;

// Retry-After as sent: a number is delay-seconds, a Date becomes an IMF-fixdate (HTTP date), a
// string is sent verbatim (for unreadable values).
export type RetryAfter = number | Date | string;

export type ServerErrorStatus = 500 | 502 | 503 | 504;

export type Fault =
  // Forward to the service and relay its answer (a "this one goes through" step in a script).
  | { kind: 'pass' }
  // 429 svc:rate_limit/exceeded as the service would send it, with Retry-After; not forwarded.
  | { kind: 'rate_limit'; retryAfter: RetryAfter }
  // A 5xx answered by the proxy (the service never sees the request): a plain text page as a load
  // balancer sends it, or a problem document; optionally with Retry-After.
  | { kind: 'server_error'; status: ServerErrorStatus; body: 'plain' | 'problem'; retryAfter?: RetryAfter | undefined }
  // The connection is reset once the request has arrived; the service never sees it.
  | { kind: 'reset_before_forwarding' }
  // The service processes the request and answers; the client gets a reset instead of the answer.
  | { kind: 'reset_after_forwarding' };

export const fault = {
  pass: (): Fault => ({ kind: 'pass' }),
  rateLimit: (retryAfter: RetryAfter): Fault => ({ kind: 'rate_limit', retryAfter }),
  serverError: (status: ServerErrorStatus, options: { body?: 'plain' | 'problem'; retryAfter?: RetryAfter } = {}): Fault => ({
    kind: 'server_error',
    status,
    body: options.body ?? 'plain',
    retryAfter: options.retryAfter,
  }),
  resetBeforeForwarding: (): Fault => ({ kind: 'reset_before_forwarding' }),
  resetAfterForwarding: (): Fault => ({ kind: 'reset_after_forwarding' }),
};

// What the proxy did with a request.
type ProxyAction =
  | 'forwarded' // relayed to the service, its answer relayed back
  | 'rate_limited' // answered 429 itself
  | 'server_error' // answered 5xx itself
  | 'reset_before_forwarding'
  | 'reset_after_forwarding' // the service answered upstreamStatus; the client saw a reset
  | 'upstream_failed'; // the service could not be reached: answered 502 itself

export interface ProxyLogEntry {
  seq: number; // 1 for the first request the proxy received
  method: string;
  target: string; // path and query, as sent
  path: string; // without the query
  nonce: string | undefined; // Svc-Nonce
  timestamp: string | undefined; // Svc-Timestamp
  idempotencyKey: string | undefined;
  bodySha256: string; // of the raw body bytes; the empty string's hash when there is none
  bodyBytes: number;
  action: ProxyAction;
  status: number | undefined; // what the client received; undefined after a reset
  upstreamStatus: number | undefined; // what the service answered, when it saw the request
}

interface PlannedFault {
  method: string;
  path: PathMatch;
  fault: Fault;
}

export interface FaultProxy {
  readonly url: string; // http://127.0.0.1:<port>, to use as a client's baseUrl
  readonly log: readonly ProxyLogEntry[];
  /**
   * Adds faults for requests with this method ('*' for any) and path, played in order: the next
   * matching request gets the first, the one after it the second... A request takes the next fault
   * of the first rule (in the order planned) that matches it and has one left; a request no rule
   * has a fault for passes through.
   */
  plan(method: string, path: PathMatch, ...faults: Fault[]): void;
  /** Faults planned and not yet played. */
  pending(): PlannedFault[];
  /** Log entries for this method and path (same matching as plan). */
  requests(method: string, path: PathMatch): ProxyLogEntry[];
  /** Forgets the plan and the log (between tests). */
  reset(): void;
  close(): Promise<void>;
}

// Connection-level headers a proxy must not relay (RFC 9110 section 7.6.1); content-length is
// set again from the buffered body.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length', 'host']);

interface Rule {
  method: string;
  path: PathMatch;
  faults: Fault[];
}

function matches(method: string, path: PathMatch, request: { method: string; path: string }): boolean {
  if (method !== '*' && method.toUpperCase() !== request.method) return false;
  return typeof path === 'string' ? request.path.startsWith(path) : path.test(request.path);
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function retryAfterValue(value: RetryAfter): string {
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return value.toUTCString();
  return value;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

// A reset (RST), not an orderly close: what a crashed peer or a dropped connection looks like.
function resetConnection(socket: Socket): void {
  socket.resetAndDestroy();
}

export async function startFaultProxy(upstreamBaseUrl: string): Promise<FaultProxy> {
  const upstream = new URL(upstreamBaseUrl);
  if (upstream.protocol !== 'http:') throw new TypeError('the fault proxy forwards to http:// only');
  const agent = new Agent({ keepAlive: true });
  let rules: Rule[] = [];
  let log: ProxyLogEntry[] = [];
  let seq = 0;

  const nextFault = (request: { method: string; path: string }): Fault => {
    for (const rule of rules) {
      if (rule.faults.length > 0 && matches(rule.method, rule.path, request)) return rule.faults.shift()!;
    }
    return fault.pass();
  };

  // Sends the request on to the service and buffers its whole answer.
  const forward = (request: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const headers: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(request.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
      headers.host = upstream.host;
      if (body.length > 0 || request.headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
      const outgoing = httpRequest(
        { agent, host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
        (response) => {
          readAll(response).then((answer) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: answer }), reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const answer = (response: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: Buffer | string): void => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    response.writeHead(status, { ...headers, 'content-length': String(bytes.length) });
    response.end(bytes);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readAll(request);
    const target = request.url ?? '/';
    const method = request.method ?? 'GET';
    const path = target.split('?', 1)[0] ?? target;
    const entry: ProxyLogEntry = {
      seq: ++seq,
      method,
      target,
      path,
      nonce: single(request.headers, 'svc-nonce'),
      timestamp: single(request.headers, 'svc-timestamp'),
      idempotencyKey: single(request.headers, 'idempotency-key'),
      bodySha256: createHash('sha256').update(body).digest('hex'),
      bodyBytes: body.length,
      action: 'forwarded',
      status: undefined,
      upstreamStatus: undefined,
    };
    log.push(entry);
    const planned = nextFault({ method, path });

    switch (planned.kind) {
      case 'rate_limit': {
        entry.action = 'rate_limited';
        entry.status = 429;
        const problem = buildProblem('svc:rate_limit/exceeded', { instance: path, correlationId: `fault-proxy-${entry.seq}`, detail: 'rate limit exceeded (injected by the fault proxy)' });
        answer(response, 429, { 'content-type': PROBLEM_CONTENT_TYPE, 'retry-after': retryAfterValue(planned.retryAfter) }, JSON.stringify(problem));
        return;
      }
      case 'server_error': {
        entry.action = 'server_error';
        entry.status = planned.status;
        const headers: OutgoingHttpHeaders = planned.retryAfter !== undefined ? { 'retry-after': retryAfterValue(planned.retryAfter) } : {};
        if (planned.body === 'plain') {
          answer(response, planned.status, { ...headers, 'content-type': 'text/plain; charset=utf-8' }, `${planned.status} (injected by the fault proxy)\n`);
        } else {
          // The catalog has no 502/503/504 of its own for this: an internal error, status as sent.
          const problem = { ...buildProblem('svc:internal/error', { instance: path, correlationId: `fault-proxy-${entry.seq}`, detail: 'injected by the fault proxy' }), status: planned.status };
          answer(response, planned.status, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE }, JSON.stringify(problem));
        }
        return;
      }
      case 'reset_before_forwarding':
        entry.action = 'reset_before_forwarding';
        resetConnection(request.socket);
        return;
      case 'pass':
      case 'reset_after_forwarding': {
        let upstreamAnswer: Awaited<ReturnType<typeof forward>>;
        try {
          upstreamAnswer = await forward(request, body);
        } catch (error) {
          entry.action = 'upstream_failed';
          entry.status = 502;
          answer(response, 502, { 'content-type': 'text/plain; charset=utf-8' }, `fault proxy: the service could not be reached: ${(error as Error).message}\n`);
          return;
        }
        entry.upstreamStatus = upstreamAnswer.status;
        if (planned.kind === 'reset_after_forwarding') {
          // The service has done its work and answered; the client never learns the outcome.
          entry.action = 'reset_after_forwarding';
          resetConnection(request.socket);
          return;
        }
        entry.status = upstreamAnswer.status;
        const headers: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(upstreamAnswer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
        answer(response, upstreamAnswer.status, headers, upstreamAnswer.body);
        return;
      }
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, { 'content-type': 'text/plain; charset=utf-8' }, `fault proxy failure: ${(error as Error).message}\n`);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get log() {
      return log;
    },
    plan(method, path, ...faults) {
      rules.push({ method, path, faults: [...faults] });
    },
    pending() {
      return rules.flatMap((rule) => rule.faults.map((planned) => ({ method: rule.method, path: rule.path, fault: planned })));
    },
    requests(method, path) {
      return log.filter((entry) => matches(method, path, entry));
    },
    reset() {
      rules = [];
      log = [];
      seq = 0;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

// A real HTTPS endpoint for webhook tests and the delivery benchmark: deliveries go through TLS,
// certificate verification and HTTP exactly as they would to a customer, and each one is checked
// by the independent spec verifier (spec-webhook-verifier.ts), never by product code.
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { verifyWebhookDelivery, type Channel, type Verification } from './spec-webhook-verifier.ts';
import { makeTestCertificate, type TestCertificate } from './tls-certificate.ts';

;

// Settings given for this key apply to every path that has none of its own.
export const ANY_PATH = '*';

interface Behaviour {
  status?: number; // default 200, or 302 with redirectTo
  delayMs?: number; // answer only after this long
  hang?: boolean; // never answer; close() ends the request
  hangAfterHeaders?: boolean; // send the status and the body so far, then never end the response
  retryAfter?: string; // Retry-After header, as given
  body?: string;
  redirectTo?: string; // Location header
}

// attempt: 1 for the first request on the path, 2 for the second, ... ("fail twice, then succeed").
type BehaviourSpec = Behaviour | ((attempt: number) => Behaviour);

interface ReceivedDelivery {
  path: string; // the request's path without its query
  url: string; // the request target as sent
  method: string;
  attempt: number; // which request on this path it was, from 1
  headers: IncomingHttpHeaders; // names lower-cased by Node
  body: Buffer; // raw bytes as received
  receivedAt: number; // receiver clock, ms
  verification: Verification;
}

interface ReceiverCounts {
  total: number;
  verified: number;
  failed: number; // failed verification, whatever the response was
  byPath: Record<string, number>;
}

export interface WebhookReceiverOptions {
  // The receiver's clock for timestamp tolerance and receivedAt, ms; default Date.now.
  now?: () => number;
  // false: keep only counters, not deliveries, so a long benchmark's memory stays flat.
  keep?: boolean;
  // Reuse a certificate across receivers; one is made otherwise.
  certificate?: TestCertificate;
}

type DeliveriesPredicate = (deliveries: readonly ReceivedDelivery[], counts: ReceiverCounts) => boolean;

export interface WebhookReceiver {
  url(path?: string): string; // https://127.0.0.1:<port><path>
  readonly caPem: string;
  readonly deliveries: ReceivedDelivery[]; // empty with keep: false
  counts(): ReceiverCounts;
  setBehaviour(path: string, behaviour: BehaviourSpec): void; // path or ANY_PATH
  setSecrets(path: string, secrets: readonly string[]): void; // path or ANY_PATH
  setChannel(path: string, channel: Channel): void; // path or ANY_PATH
  // Resolves with the deliveries once predicate holds; rejects after timeoutMs or on close.
  waitFor(predicate: DeliveriesPredicate, timeoutMs: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

// Far above any envelope; only guards against a runaway sender filling memory.
const MAX_BODY_BYTES = 8 * 1024 * 1024;

interface Waiter {
  predicate: DeliveriesPredicate;
  resolve: (deliveries: ReceivedDelivery[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const now = options.now ?? Date.now;
  const keep = options.keep ?? true;
  const certificate = options.certificate ?? (await makeTestCertificate());

  const behaviours = new Map<string, BehaviourSpec>();
  const secrets = new Map<string, readonly string[]>();
  const channels = new Map<string, Channel>();
  const deliveries: ReceivedDelivery[] = [];
  const byPath = new Map<string, number>();
  const counters = { total: 0, verified: 0, failed: 0 };
  const waiters = new Set<Waiter>();
  // Everything close() must end: sockets (idle keep-alive ones too), held requests, pending delays.
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  let closing: Promise<void> | undefined;

  const lookup = <T>(map: Map<string, T>, path: string): T | undefined => map.get(path) ?? map.get(ANY_PATH);

  const counts = (): ReceiverCounts => ({ ...counters, byPath: Object.fromEntries(byPath) });

  const settleWaiters = (): void => {
    if (waiters.size === 0) return;
    const snapshot = counts();
    for (const waiter of waiters) {
      if (!waiter.predicate(deliveries, snapshot)) continue;
      waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve([...deliveries]);
    }
  };

  const record = (request: IncomingMessage, body: Buffer): ReceivedDelivery => {
    const url = request.url ?? '/';
    const path = url.split('?', 1)[0] ?? url;
    const attempt = (byPath.get(path) ?? 0) + 1;
    byPath.set(path, attempt);
    const receivedAt = now();
    const verification = verifyWebhookDelivery({
      body,
      // Distinct values, so a repeated header is seen as such rather than joined with ", ".
      headers: request.headersDistinct,
      secrets: lookup(secrets, path) ?? [],
      channel: lookup(channels, path),
      now: receivedAt,
    });
    counters.total += 1;
    if (verification.verified) counters.verified += 1;
    else counters.failed += 1;
    const delivery = { path, url, method: request.method ?? '', attempt, headers: request.headers, body, receivedAt, verification };
    if (keep) deliveries.push(delivery);
    settleWaiters();
    return delivery;
  };

  const respond = (response: ServerResponse, behaviour: Behaviour): void => {
    if (behaviour.hang || behaviour.hangAfterHeaders) {
      if (behaviour.hangAfterHeaders) response.writeHead(behaviour.status ?? 200, { 'content-type': 'text/plain; charset=utf-8' }).write(behaviour.body ?? '');
      held.add(response);
      response.on('close', () => held.delete(response));
      return;
    }
    const send = (): void => {
      const body = Buffer.from(behaviour.body ?? '', 'utf8');
      const headers: OutgoingHttpHeaders = { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length };
      if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
      if (behaviour.redirectTo !== undefined) headers.location = behaviour.redirectTo;
      response.writeHead(behaviour.status ?? (behaviour.redirectTo !== undefined ? 302 : 200), headers).end(body);
    };
    if (!behaviour.delayMs) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, behaviour.delayMs);
    timers.add(timer);
    // A sender that gives up (its own timeout) should not leave the timer to answer nobody.
    response.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  };

  const server: Server = createServer({ key: certificate.keyPem, cert: certificate.certPem }, (request, response) => {
    if (closing) {
      request.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.socket.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const delivery = record(request, Buffer.concat(chunks, size));
      const spec = lookup(behaviours, delivery.path) ?? {};
      respond(response, typeof spec === 'function' ? spec(delivery.attempt) : spec);
    });
  });
  // 'connection' is the TCP socket (also one still in its handshake); 'secureConnection' is the TLS
  // socket over it. Tracking both lets close() end either kind at once.
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  server.on('connection', track);
  server.on('secureConnection', track);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('receiver has no TCP address');
  const origin = `https://127.0.0.1:${address.port}`;

  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const waiter of waiters) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error('webhook receiver closed while waiting'));
      }
      waiters.clear();
      server.close(() => resolve());
      server.closeAllConnections();
      for (const response of held) response.socket?.destroy();
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  };

  return {
    url: (path = '/') => `${origin}${path.startsWith('/') ? path : `/${path}`}`,
    caPem: certificate.caPem,
    deliveries,
    counts,
    setBehaviour: (path, behaviour) => void behaviours.set(path, behaviour),
    setSecrets: (path, list) => void secrets.set(path, [...list]),
    setChannel: (path, channel) => void channels.set(path, channel),
    waitFor: (predicate, timeoutMs) =>
      new Promise<ReceivedDelivery[]>((resolve, reject) => {
        if (closing) return reject(new Error('webhook receiver is closed'));
        if (predicate(deliveries, counts())) return resolve([...deliveries]);
        const waiter: Waiter = {
          predicate,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(waiter);
            reject(new Error(`webhook receiver: condition not met within ${timeoutMs} ms (${counters.total} deliveries received)`));
          }, timeoutMs),
        };
        waiters.add(waiter);
      }),
    close,
  };
}

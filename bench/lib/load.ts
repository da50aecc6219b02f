import { Agent, request as httpRequest } from 'node:http';
import type { Outcome } from './closed-loop.ts';

// HTTP requests for the closed-loop driver (bench/lib/closed-loop.ts): over keep-alive sockets, each
// loop sending its next request as soon as the previous response has been read.

export interface Target {
  name: string;
  host: string;
  port: number;
  path: string;
  body: Buffer;
  // Called for every request, so signed targets sign each one with a fresh nonce.
  headers: () => Record<string, string>;
}

export interface Response {
  status: number;
  body: Buffer;
}

const REQUEST_TIMEOUT_MS = 10_000;

export function newAgent(connections: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
}

export function send(target: Target, agent: Agent): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: target.host,
        port: target.port,
        method: 'POST',
        path: target.path,
        headers: { ...target.headers(), 'content-length': String(target.body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(target.body);
  });
}

// One request per operation, a success when the target answers `status`; any other status is a
// failure named after it ("HTTP 429"), a transport error is thrown for the driver to count.
export function requestOperation(target: Target, agent: Agent, status = 200): () => Promise<Outcome> {
  return async () => {
    const response = await send(target, agent);
    return response.status === status ? { ok: true, units: 1 } : { ok: false, reason: `HTTP ${response.status}` };
  };
}

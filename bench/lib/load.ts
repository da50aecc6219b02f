import { Agent, request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';

// A closed-loop load generator on node:http: `connections` request loops, each sending its next
// request as soon as the previous response has been read, over keep-alive sockets.

export interface Target {
  name: string;
  host: string;
  port: number;
  path: string;
  body: Buffer;
  // Called for every request, so signed targets sign each one with a fresh nonce.
  headers: () => Record<string, string>;
}

export interface LoadResult {
  target: string;
  seconds: number;
  ok: number;
  // Non-200 responses by status, and transport errors by message.
  failures: Map<string, number>;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
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

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

// Drives the target for `seconds` with `connections` concurrent loops and summarises the 200s.
export async function runLoad(target: Target, agent: Agent, connections: number, seconds: number): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let ok = 0;
  const failures = new Map<string, number>();
  const fail = (reason: string) => failures.set(reason, (failures.get(reason) ?? 0) + 1);

  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const response = await send(target, agent);
        const elapsed = performance.now() - t0;
        if (response.status === 200) {
          if (ok === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[ok++] = elapsed;
        } else {
          fail(`HTTP ${response.status}`);
        }
      } catch (error) {
        fail((error as Error).message || String(error));
        // A refused or reset connection would otherwise spin; back off a little.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsedS = (performance.now() - started) / 1000;

  const sorted = latencies.subarray(0, ok).sort();
  return {
    target: target.name,
    seconds: elapsedS,
    ok,
    failures,
    requestsPerSecond: ok / elapsedS,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: ok > 0 ? sorted[ok - 1]! : NaN,
  };
}

import { signRequest } from '../../clients/typescript/src/signing.ts';
import type { Response, Target } from './load.ts';
import type { BenchService } from './bench-service.ts';

// Requests to the service's API as a client with the bench's ingest key would send them.

// A POST of `body` to `path`, signed afresh (new nonce) for every request.
export function signedTarget(service: Pick<BenchService, 'port' | 'key'>, name: string, path: string, body: Buffer): Target {
  return {
    name,
    host: '127.0.0.1',
    port: service.port,
    path,
    body,
    headers: () => ({
      'content-type': 'application/json',
      ...signRequest({ keyId: service.key.key_id, secret: service.key.secret, method: 'POST', target: path, body }),
    }),
  };
}

const BATCH_RECEIPT = /^\{"accepted":(\d+),"rejected":(\d+)/;

// The counts that lead a POST /v1/batches receipt; the per-event receipts after them are not
// parsed (a thousand of them would cost more than the request). undefined when they are missing.
export function batchCounts(response: Response): { accepted: number; rejected: number } | undefined {
  const counts = response.body.subarray(0, 64).toString('utf8').match(BATCH_RECEIPT);
  return counts ? { accepted: Number(counts[1]), rejected: Number(counts[2]) } : undefined;
}

// For error messages: the status and the start of the body.
export function answered(response: Response): string {
  return `${response.status}: ${response.body.subarray(0, 2000).toString('utf8')}`;
}

// A signed GET of `target` (path and query) with `key`; rejects on anything but a 200.
export async function signedGetJson<T>(service: Pick<BenchService, 'port'>, key: { key_id: string; secret: string }, target: string): Promise<T> {
  const headers = signRequest({ keyId: key.key_id, secret: key.secret, method: 'GET', target });
  const res = await fetch(`http://127.0.0.1:${service.port}${target}`, { headers });
  if (res.status !== 200) throw new Error(`GET ${target}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

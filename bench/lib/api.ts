import { signRequest, SvcClient } from '../../clients/typescript/src/index.ts';
import type { Response, Target } from './load.ts';
import type { BenchService, IngestKey } from './bench-service.ts';

// Requests to the service's API as a client with the bench's ingest key would send them.

// The SDK's client of the bench's service with `key` (the ingest key unless another is given):
// for the calls around what a bench measures (setting up, reading results back). The SDK's
// defaults: reads and keyless writes are not retried, so a failure shows as the error it is.
export function benchClient(service: Pick<BenchService, 'port' | 'key'>, key: IngestKey = service.key): SvcClient {
  return new SvcClient({ baseUrl: `http://127.0.0.1:${service.port}`, keyId: key.key_id, secret: key.secret, appInfo: 'svc-bench' });
}

// A POST of `body` to `path`, for the closed-loop load generator (bench/lib/load.ts): raw HTTP over
// keep-alive sockets with the body built once, the headers signed afresh (new nonce) for every
// request by the SDK's signer.
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

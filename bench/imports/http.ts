import { signRequest } from '../../clients/typescript/src/signing.ts';
import type { BenchService } from '../lib/bench-service.ts';

// Signed requests of the import side (fetch: keep-alive, no per-request timeout of its own).

export interface Answer {
  status: number;
  text: string;
}

export async function signedRequest(
  service: Pick<BenchService, 'port' | 'key'>,
  method: 'GET' | 'POST' | 'PUT',
  target: string,
  body?: { bytes: Buffer; contentType: string },
): Promise<Answer> {
  const headers: Record<string, string> = signRequest({ keyId: service.key.key_id, secret: service.key.secret, method, target, ...(body ? { body: body.bytes } : {}) });
  if (body) headers['content-type'] = body.contentType;
  const res = await fetch(`http://127.0.0.1:${service.port}${target}`, { method, headers, ...(body ? { body: body.bytes } : {}) });
  return { status: res.status, text: await res.text() };
}

export function jsonBody(value: unknown): { bytes: Buffer; contentType: string } {
  return { bytes: Buffer.from(JSON.stringify(value), 'utf8'), contentType: 'application/json' };
}

// The answer's JSON when it has the expected status; an error naming the request otherwise.
export function expectJson<T>(what: string, answer: Answer, status: number): T {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${answer.text.slice(0, 2000)}`);
  return JSON.parse(answer.text) as T;
}

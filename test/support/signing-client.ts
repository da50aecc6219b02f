import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { signRequest } from '../../clients/typescript/src/index.ts';

export interface Credential {
  keyId: string;
  secret: string;
}

export interface SignedRequest {
  method?: InjectOptions['method'];
  url: string;
  // An object is serialised once; a string or Buffer is sent as the exact bytes.
  body?: unknown;
  key: Credential;
  headers?: Record<string, string>;
  timestamp?: number;
  nonce?: string;
}

function bodyBytes(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body), 'utf8');
}

// Signs like a real client would: the exact bytes sent are the bytes hashed.
export class SigningClient {
  constructor(
    private readonly app: FastifyInstance,
    private readonly now: () => Date = () => new Date(),
  ) {}

  headersFor(request: SignedRequest): Record<string, string> {
    const method = request.method ?? (request.body === undefined ? 'GET' : 'POST');
    const payload = bodyBytes(request.body);
    return {
      ...(payload ? { 'content-type': 'application/json' } : {}),
      ...signRequest({
        keyId: request.key.keyId,
        secret: request.key.secret,
        method,
        target: request.url,
        body: payload ?? '',
        timestamp: request.timestamp ?? Math.floor(this.now().getTime() / 1000),
        nonce: request.nonce,
      }),
      ...request.headers,
    };
  }

  async send(request: SignedRequest): Promise<LightMyRequestResponse> {
    const method = request.method ?? (request.body === undefined ? 'GET' : 'POST');
    const payload = bodyBytes(request.body);
    return this.app.inject({
      method,
      url: request.url,
      headers: this.headersFor(request),
      ...(payload ? { payload } : {}),
    });
  }

  post(url: string, body: unknown, key: Credential, headers?: Record<string, string>) {
    return this.send({ method: 'POST', url, body, key, headers });
  }

  get(url: string, key: Credential, headers?: Record<string, string>) {
    return this.send({ method: 'GET', url, key, headers });
  }
}

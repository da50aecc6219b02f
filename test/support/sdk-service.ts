// The service listening on 127.0.0.1 (a real HTTP server, not inject) and SDK clients for it,
// one per scope, signing with the service's manual clock: what the SDK suites build on.
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { SvcApiError, SvcClient, SvcError } from '../../clients/typescript/src/index.ts';
import type { ClientOptions } from '../../clients/typescript/src/http.ts';
import type { Scope } from '../../platform/keys/api-keys.ts';
import { startTestApi, type TestApi } from './test-api.ts';

export interface SdkService {
  api: TestApi;
  baseUrl: string;
  // A client with the tenant's key of this scope; options go over the defaults (e.g. baseUrl to
  // go through a proxy, fetch, sleep).
  client: (scope: Scope, options?: Partial<ClientOptions>) => SvcClient;
  close: () => Promise<void>;
}

export async function startSdkService(env: Record<string, string> = {}, options: Parameters<typeof startTestApi>[1] = {}): Promise<SdkService> {
  return serveForSdk(await startTestApi(env, options));
}

// The same for an API already started elsewhere (a detection world, say): it starts listening on
// 127.0.0.1 and clients are made for it. close() closes the API; a world that owns the API is
// closed through the world instead.
export async function serveForSdk(api: TestApi): Promise<SdkService> {
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = api.app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    api,
    baseUrl,
    client: (scope, overrides = {}) =>
      new SvcClient({ baseUrl, keyId: api.keys[scope].keyId, secret: api.keys[scope].secret, now: () => api.clock.now().getTime(), ...overrides }),
    close: () => api.close(),
  };
}

// The SvcApiError a call rejects with; fails the test when it resolves or rejects otherwise.
export async function apiError(call: Promise<unknown>): Promise<SvcApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SvcApiError);
  expect(error).toBeInstanceOf(SvcError);
  return error as SvcApiError;
}

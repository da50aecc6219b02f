// A tenant on a running service and SDK clients for it, made as an operator makes them (`svc
// tenants create`, `svc keys issue`), and a poll for what the pipelines have not written yet.
import { expect } from 'vitest';
import { SvcApiError, SvcClient, type ClientOptions } from '../../clients/typescript/src/index.ts';
import { runSvc } from './svc-process.ts';

export type ClientScope = 'ingest' | 'read' | 'compliance';

// `options`: the clients' own settings (retries, timeouts).
export async function createTenantClients(
  baseUrl: string,
  env: NodeJS.ProcessEnv,
  tenant: string,
  options: Omit<ClientOptions, 'baseUrl' | 'keyId' | 'secret'> = {},
): Promise<Record<ClientScope, SvcClient>> {
  const created = await runSvc(['tenants', 'create', tenant, '--base-asset', 'USD'], env);
  expect(created.code, created.stderr).toBe(0);
  const client = async (scope: ClientScope) => {
    const issued = await runSvc(['keys', 'issue', '--tenant', tenant, '--scope', scope, '--json'], env);
    expect(issued.code, issued.stderr).toBe(0);
    const key = JSON.parse(issued.stdout) as { key_id: string; secret: string };
    return new SvcClient({ ...options, baseUrl, keyId: key.key_id, secret: key.secret });
  };
  const [ingest, read, compliance] = await Promise.all([client('ingest'), client('read'), client('compliance')]);
  return { ingest, read, compliance };
}

// Polls `attempt` every 250 ms until it gives a value; undefined or a 404 mean "not there yet".
// Fails with `what` after `ms`.
export async function waitFor<T>(what: string, attempt: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt().catch((error: unknown) => {
      if (error instanceof SvcApiError && error.status === 404) return undefined;
      throw error;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

import type { ApiDeps } from '../app.ts';
import { buildApp } from '../app.ts';

// The OpenAPI document without a running service (the SDK's type generation): the API's routes
// registered on an app that never listens, whose dependencies are never reached (registering a
// route reads none of them; any use fails loudly).
const unreachable: unknown = new Proxy(function unreachableDependency() {}, {
  get: (_target, key) => (key === 'then' ? undefined : unreachable),
  apply: () => {
    throw new Error('the documentation app serves no request');
  },
});

export async function generateOpenApiDocument(): Promise<Record<string, unknown>> {
  const deps = new Proxy({} as ApiDeps, {
    get: (_target, key) =>
      key === 'settings' ? { maxBodyBytes: 1024, occurredAtFutureSkewS: 0, idempotencyRetentionS: 0 } : key === 'logger' ? false : key === 'consumerGroups' ? [] : unreachable,
  });
  const app = await buildApp(deps);
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

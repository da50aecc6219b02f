import type { FastifyInstance } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';
import { registerOpenApi } from '../http/openapi.ts';

// The OpenAPI document generated from the routes' contracts and a browsable page over it, both
// public. Registered before every documented route (the document collects them as they are added);
// the document itself is built on its first request, once every route is in.
export async function registerDocsRoutes(app: FastifyInstance): Promise<void> {
  await registerOpenApi(app);
  // The page's own routes are added by the plugin: declared public as they are registered, in a
  // context of their own so that no other route is.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => void (route.config = { ...route.config, public: true }));
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });
  app.get('/openapi.json', { config: { public: true } }, async () => app.swagger());
}

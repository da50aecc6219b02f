import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { buildOpenApiDocument } from '../../../schemas/openapi.ts';

// The generated OpenAPI document and a browsable page over it, both public.
export async function registerDocsRoutes(app: FastifyInstance): Promise<void> {
  const document = buildOpenApiDocument();
  await app.register(swagger, { mode: 'static', specification: { document: document as any } });
  // The page's own routes are added by the plugin: declared public as they are registered, in a
  // context of their own so that no other route is.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => void (route.config = { ...route.config, public: true }));
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });
  app.get('/openapi.json', { config: { public: true } }, async () => document);
}

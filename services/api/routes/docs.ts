import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { buildOpenApiDocument } from '../../../schemas/openapi.ts';

// The generated OpenAPI document and a browsable page over it, both public.
export async function registerDocsRoutes(app: FastifyInstance): Promise<void> {
  const document = buildOpenApiDocument();
  await app.register(swagger, { mode: 'static', specification: { document: document as any } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', async () => document);
}

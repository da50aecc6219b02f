// Receiving webhooks with Fastify: the route takes its JSON body as a Buffer, so the signature is
// checked over the bytes received.
//   SVC_WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks-fastify.ts
import Fastify, { type FastifyInstance } from 'fastify';
import { pathToFileURL } from 'node:url';
import { constructWebhookEvent } from '../src/webhooks.ts'; // in your project: '@svc-controlplane/client/webhooks'
import { MemoryInbox, secretsFromEnv, type WebhookInbox } from './inbox.ts';

export function createWebhookApp(options: { secrets: () => string[]; inbox: WebhookInbox; path?: string }): FastifyInstance {
  const app = Fastify({ bodyLimit: 1024 * 1024 });
  app.register(async (scope) => {
    // Inside this plugin only: JSON bodies stay raw bytes instead of being parsed.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(options.path ?? '/webhooks/svc', async (request, reply) => {
      const result = constructWebhookEvent(request.body as Buffer, request.headers['svc-webhook-signature'], options.secrets());
      if (!result.ok) {
        request.log.warn({ reason: result.reason }, 'webhook refused'); // never echoed to the sender
        return reply.code(400).send();
      }
      await options.inbox.add(result.event); // a repeat (same id) is acknowledged, not re-processed
      return reply.code(204).send();
    });
  });
  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await createWebhookApp({ secrets: () => secretsFromEnv(), inbox: new MemoryInbox() }).listen({ port: Number(process.env.PORT ?? 8080) });
}

// Receiving webhooks with Express: express.raw() on this route keeps the body as a Buffer, so the
// signature is checked over the bytes received (express.json() would re-serialise it).
//   SVC_WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks-express.ts
import express, { type Express } from 'express';
import { pathToFileURL } from 'node:url';
import { constructWebhookEvent } from '../src/webhooks.ts'; // in your project: '@svc-controlplane/client/webhooks'
import { MemoryInbox, secretsFromEnv, type WebhookInbox } from './inbox.ts';

export function createWebhookApp(options: { secrets: () => string[]; inbox: WebhookInbox; path?: string }): Express {
  const app = express();
  app.post(options.path ?? '/webhooks/svc', express.raw({ type: '*/*', limit: '1mb' }), async (req, res) => {
    // With no body at all, express.raw leaves req.body unset: verify an empty one (it fails).
    const rawBody: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const result = constructWebhookEvent(rawBody, req.get('svc-webhook-signature'), options.secrets());
    if (!result.ok) {
      console.warn('webhook refused:', result.reason); // never echoed to the sender
      res.status(400).end();
      return;
    }
    try {
      await options.inbox.add(result.event); // a repeat (same id) is acknowledged, not re-processed
      res.status(204).end();
    } catch {
      res.status(500).end(); // not acknowledged: the service retries
    }
  });
  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  createWebhookApp({ secrets: () => secretsFromEnv(), inbox: new MemoryInbox() }).listen(Number(process.env.PORT ?? 8080));
}

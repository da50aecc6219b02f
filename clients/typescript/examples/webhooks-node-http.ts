// Receiving webhooks with Node's own http module.
//   SVC_WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks-node-http.ts
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { constructWebhookEvent } from '../src/webhooks.ts'; // in your project: '@svc-controlplane/client/webhooks'
import { MemoryInbox, secretsFromEnv, type WebhookInbox } from './inbox.ts';

const MAX_BODY_BYTES = 1024 * 1024;

export function createWebhookServer(options: { secrets: () => string[]; inbox: WebhookInbox; path?: string }): Server {
  const path = options.path ?? '/webhooks/svc';
  return createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== path) {
      res.writeHead(404).end();
      return;
    }
    try {
      const rawBody = await readRawBody(req);
      if (rawBody === undefined) {
        res.writeHead(413).end();
        return;
      }
      // Verify the exact bytes received, before any JSON.parse.
      const result = constructWebhookEvent(rawBody, req.headers['svc-webhook-signature'], options.secrets());
      if (!result.ok) {
        console.warn('webhook refused:', result.reason); // log it; never echo it to the sender
        res.writeHead(400).end();
        return;
      }
      await options.inbox.add(result.event); // a repeat (same id) is acknowledged, not re-processed
      res.writeHead(204).end();
    } catch {
      if (!res.headersSent) res.writeHead(500).end(); // not acknowledged: the service retries
    }
  });
}

function readRawBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined));
    req.on('error', reject);
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  createWebhookServer({ secrets: () => secretsFromEnv(), inbox: new MemoryInbox() }).listen(Number(process.env.PORT ?? 8080));
}

// The SDK's examples run for real: the webhook receivers take deliveries signed by the service's
// own signer, and the ingest example talks to the running service.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvelope } from '../../../services/webhooks/envelope.ts';
import { newWebhookSecret, signatureHeader } from '../src/webhook-signing.ts';
import { startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import { startTestPipeline, type TestPipeline } from '../../../test/support/test-pipeline.ts';
import { MemoryInbox } from '../examples/inbox.ts';
import { ingestAndRead } from '../examples/ingest-and-read.ts';
import { createWebhookApp as createExpressApp } from '../examples/webhooks-express.ts';
import { createWebhookApp as createFastifyApp } from '../examples/webhooks-fastify.ts';
import { createWebhookServer } from '../examples/webhooks-node-http.ts';

const OLD = newWebhookSecret();
const NEW = newWebhookSecret();

function delivery(envelopeUuid: string, attempt = 1): Buffer {
  const built = buildEnvelope(
    { tenantId: 'acme', envelopeId: envelopeUuid, type: 'webhook.test', classification: 'operational', createdAt: new Date(), data: { message: 'hello' } },
    'operational',
    { attempt, deliveryId: `0190d9a0-0000-7000-8000-00000000000${attempt}` },
  );
  if (!built.ok) throw new Error(built.reason);
  return built.body;
}

interface Receiver {
  url: string;
  inbox: MemoryInbox;
  close: () => Promise<void>;
}

async function listening(server: Server, inbox: MemoryInbox): Promise<Receiver> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhooks/svc`, inbox, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

// During a rotation the receiver holds both secrets.
const secrets = () => [NEW, OLD];

const RECEIVERS: Array<[string, () => Promise<Receiver>]> = [
  ['node http', async () => {
    const inbox = new MemoryInbox();
    return listening(createWebhookServer({ secrets, inbox }), inbox);
  }],
  ['fastify', async () => {
    const inbox = new MemoryInbox();
    const app = createFastifyApp({ secrets, inbox });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/webhooks/svc`, inbox, close: () => app.close() };
  }],
  ['express', async () => {
    const inbox = new MemoryInbox();
    const app = createExpressApp({ secrets, inbox });
    return listening(app.listen(0, '127.0.0.1'), inbox);
  }],
];

const post = (url: string, body: Buffer | string, headers: Record<string, string>) => fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const now = () => Math.floor(Date.now() / 1000);

describe.each(RECEIVERS)('the %s webhook example', (_, start) => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await start();
  });
  afterAll(() => receiver.close());

  it('acknowledges a genuine delivery and takes it in once, however often it comes', async () => {
    const body = delivery('0190d9a0-0000-7000-8000-0000000000aa');
    const headers = { 'svc-webhook-signature': signatureHeader(now(), body, [NEW]) };
    expect((await post(receiver.url, body, headers)).status).toBe(204);
    expect((await post(receiver.url, body, headers)).status).toBe(204);
    expect([...receiver.inbox.events.keys()]).toEqual(['whe_0190d9a0-0000-7000-8000-0000000000aa']);
    expect(receiver.inbox.events.get('whe_0190d9a0-0000-7000-8000-0000000000aa')).toMatchObject({ type: 'webhook.test', data: { message: 'hello' } });
  });

  it('verifies a delivery signed only with the previous secret during the overlap', async () => {
    const body = delivery('0190d9a0-0000-7000-8000-0000000000bb');
    expect((await post(receiver.url, body, { 'svc-webhook-signature': signatureHeader(now(), body, [OLD]) })).status).toBe(204);
  });

  it('refuses a body changed after signing, even by re-serialising the same JSON', async () => {
    const body = delivery('0190d9a0-0000-7000-8000-0000000000cc');
    const header = signatureHeader(now(), body, [NEW]);
    const reserialised = JSON.stringify(JSON.parse(body.toString('utf8')), null, 2);
    expect((await post(receiver.url, reserialised, { 'svc-webhook-signature': header })).status).toBe(400);
    expect(receiver.inbox.events.has('whe_0190d9a0-0000-7000-8000-0000000000cc')).toBe(false);
  });

  it('refuses a stale signature, a stranger\'s secret and a missing header', async () => {
    const body = delivery('0190d9a0-0000-7000-8000-0000000000dd');
    expect((await post(receiver.url, body, { 'svc-webhook-signature': signatureHeader(now() - 301, body, [NEW]) })).status).toBe(400);
    expect((await post(receiver.url, body, { 'svc-webhook-signature': signatureHeader(now(), body, [newWebhookSecret()]) })).status).toBe(400);
    expect((await post(receiver.url, body, {})).status).toBe(400);
    expect(receiver.inbox.events.has('whe_0190d9a0-0000-7000-8000-0000000000dd')).toBe(false);
  });
});

describe('the ingest-and-read example', () => {
  let service: SdkService;
  let pipeline: TestPipeline;
  beforeAll(async () => {
    service = await startSdkService();
    pipeline = await startTestPipeline(service.api);
  });
  afterAll(async () => {
    await pipeline.stop();
    await service.close();
  });

  it('lands a party, an account and three movements, and reads them back once canonical', async () => {
    const at = service.api.clock.now();
    const first = await ingestAndRead(service.client('ingest'), service.client('read'), at);
    expect(first.accepted).toBe(5);
    await pipeline.drain();
    // Run again: every event is a duplicate (still accepted), and the reads now find them.
    const second = await ingestAndRead(service.client('ingest'), service.client('read'), at);
    expect(second).toEqual({ accepted: 5, movements: 3 });
  });
});

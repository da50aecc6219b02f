// The receiver and its independent verifier, exercised with deliveries signed here by hand (plain
// node:crypto) and sent over real TLS, so the rules are tested apart from the product's signer.
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCertificate, type TestCertificate } from './tls-certificate.ts';
import { ANY_PATH, startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';
import { verifyWebhookDelivery, isDateTime } from './spec-webhook-verifier.ts';

const SECRET = 'whsec_test_primary_0123456789';
const OTHER_SECRET = 'whsec_test_other_9876543210';
const NOW_MS = Date.parse('2026-09-01T12:00:00Z');
const NOW_S = Math.floor(NOW_MS / 1000);

interface Sent {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  ms: number;
}

function sign(secret: string, t: number | string, body: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.`).update(body).digest('hex');
}

function envelope(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `whe_${randomUUID()}`,
    type: 'coverage.degraded',
    classification: 'operational',
    created_at: '2026-09-01T11:59:58.123Z',
    tenant_id: 'acme',
    data: { source: 'movements' },
    delivery: { attempt: 1, delivery_id: `whd_${randomUUID()}` },
    ...overrides,
  };
}

interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

// A correct delivery of `content`; tests then spoil one thing each.
function delivery(content: Record<string, unknown> = envelope(), options: { secrets?: string[]; t?: number | string } = {}): Delivery {
  const body = Buffer.from(JSON.stringify(content), 'utf8');
  const t = options.t ?? NOW_S;
  const v1 = (options.secrets ?? [SECRET]).map((secret) => `v1=${sign(secret, t, body)}`).join(',');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'svc-webhook-signature': `t=${t},${v1}`,
      'svc-webhook-timestamp': String(t),
      'svc-webhook-id': String(content.id),
    },
  };
}

function send(url: string, options: RequestOptions & { body?: Buffer }): Promise<Sent> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const { body, ...rest } = options;
    // agent: false, so no pooled connection carries state from one test into another.
    const req = httpsRequest(url, { method: 'POST', agent: false, ...rest }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('webhook receiver', () => {
  let certificate: TestCertificate;
  let receiver: WebhookReceiver;
  let pathCounter = 0;
  // A fresh path per test: attempts, secrets and channels are per path, so tests cannot meet.
  const freshPath = (): string => `/hooks/${++pathCounter}`;

  const deliver = async (d: Delivery, path: string) => {
    await send(receiver.url(path), { ca: receiver.caPem, headers: d.headers, body: d.body });
    const [received] = await receiver.waitFor((all) => all.some((x) => x.path === path), 5_000).then((all) => all.filter((x) => x.path === path));
    if (!received) throw new Error('no delivery recorded');
    return received;
  };

  beforeAll(async () => {
    certificate = await makeTestCertificate();
    // The receiver's clock stands still, so offsets of t from it are exact.
    receiver = await startWebhookReceiver({ certificate, now: () => NOW_MS });
  });
  afterAll(async () => {
    await receiver.close();
  });

  describe('TLS', () => {
    it('is verified by a client trusting only the test CA, for localhost and for 127.0.0.1', async () => {
      const port = new URL(receiver.url()).port;
      const path = freshPath();
      receiver.setSecrets(path, [SECRET]);
      receiver.setChannel(path, 'operational');
      // family 4: the receiver listens on 127.0.0.1; the host name checked is still "localhost".
      const viaName = await send(`https://localhost:${port}${path}`, { ca: receiver.caPem, family: 4, rejectUnauthorized: true, ...withBody(delivery()) });
      const viaIp = await send(receiver.url(path), { ca: receiver.caPem, rejectUnauthorized: true, ...withBody(delivery()) });
      expect([viaName.status, viaIp.status]).toEqual([200, 200]);
      const received = receiver.deliveries.filter((d) => d.path === path);
      expect(received.map((d) => d.verification)).toEqual([
        { verified: true, problems: [] },
        { verified: true, problems: [] },
      ]);
      expect(received.map((d) => d.attempt)).toEqual([1, 2]);
    });

    it('is refused by a client that does not trust the test CA', async () => {
      const error = await send(receiver.url(freshPath()), { rejectUnauthorized: true, ...withBody(delivery()) }).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(error?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
    });

    it('is refused for a host name the certificate does not name', async () => {
      // Node checks the servername it asked for; the certificate names only localhost and loopback.
      const error = await send(receiver.url(freshPath()), { ca: receiver.caPem, servername: 'example.com', ...withBody(delivery()) }).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(error?.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    });
  });

  describe('verification', () => {
    const check = async (d: Delivery, channel: 'compliance' | 'operational' = 'operational', secrets = [SECRET]) => {
      const path = freshPath();
      receiver.setSecrets(path, secrets);
      receiver.setChannel(path, channel);
      return (await deliver(d, path)).verification;
    };

    it('verifies a correct delivery, with any held secret matching any v1 (rotation)', async () => {
      expect(await check(delivery(envelope(), { secrets: [OTHER_SECRET, SECRET] }))).toEqual({ verified: true, problems: [] });
      expect(await check(delivery(), 'operational', [OTHER_SECRET, SECRET])).toEqual({ verified: true, problems: [] });
    });

    it('verifies a webhook.test event on either channel', async () => {
      for (const channel of ['compliance', 'operational'] as const) {
        const content = envelope({
          type: 'webhook.test',
          data: { endpoint_id: 'whk_1', channel, message: 'hello', sent_at: '2026-09-01T12:00:00+02:00' },
        });
        expect(await check(delivery(content), channel)).toEqual({ verified: true, problems: [] });
      }
    });

    it('accepts t exactly 300 s away, either side', async () => {
      expect((await check(delivery(envelope(), { t: NOW_S - 300 }))).verified).toBe(true);
      expect((await check(delivery(envelope(), { t: NOW_S + 300 }))).verified).toBe(true);
    });

    const rejects = async (d: Delivery, problems: RegExp | RegExp[], channel: 'compliance' | 'operational' = 'operational') => {
      const verification = await check(d, channel);
      expect(verification.verified).toBe(false);
      for (const problem of [problems].flat()) expect(verification.problems.join('\n')).toMatch(problem);
    };

    it('rejects a tampered body', async () => {
      const d = delivery();
      const body = Buffer.from(d.body.toString('utf8').replace('"acme"', '"evil"'), 'utf8');
      await rejects({ ...d, body }, /no v1 signature matches/);
    });

    it('rejects a stale t (301 s) and one from the future', async () => {
      await rejects(delivery(envelope(), { t: NOW_S - 301 }), /is 301 s from the receiver's clock/);
      await rejects(delivery(envelope(), { t: NOW_S + 301 }), /is -301 s from the receiver's clock/);
    });

    it('rejects a signature made with a secret it does not hold', async () => {
      await rejects(delivery(envelope(), { secrets: [OTHER_SECRET] }), /no v1 signature matches any of the 1 held secret/);
    });

    it('rejects a 13-digit t as malformed', async () => {
      await rejects(delivery(envelope(), { t: '1' + String(NOW_S).padStart(12, '0') }), /t="\d{13}" is not 1-12 digits/);
    });

    it('rejects a header without v1, and one without t', async () => {
      const d = delivery();
      await rejects({ ...d, headers: { ...d.headers, 'svc-webhook-signature': `t=${NOW_S}` } }, /no v1/);
      const v1 = d.headers['svc-webhook-signature']!.split(',')[1]!;
      await rejects({ ...d, headers: { ...d.headers, 'svc-webhook-signature': v1 } }, /no t/);
    });

    it('rejects upper-case hex and a timestamp header that differs from t', async () => {
      const d = delivery();
      const upper = `t=${NOW_S},v1=${sign(SECRET, NOW_S, d.body).toUpperCase()}`;
      await rejects({ ...d, headers: { ...d.headers, 'svc-webhook-signature': upper } }, /not 64 lower-case hex/);
      await rejects({ ...d, headers: { ...d.headers, 'svc-webhook-timestamp': String(NOW_S - 1) } }, /differs from the signature's t/);
    });

    it('rejects an id header that differs from the envelope, and a content-type other than JSON', async () => {
      const d = delivery();
      await rejects({ ...d, headers: { ...d.headers, 'svc-webhook-id': 'whe_other' } }, /Svc-Webhook-Id "whe_other" differs/);
      await rejects({ ...d, headers: { ...d.headers, 'content-type': 'text/plain' } }, /is not application\/json/);
    });

    it('rejects a classification that disagrees with the catalog', async () => {
      await rejects(delivery(envelope({ type: 'alert.opened', classification: 'operational' })), /classification "operational" disagrees with the catalog's restricted_aml/, 'compliance');
    });

    it('rejects a restricted event on an operational endpoint', async () => {
      await rejects(delivery(envelope({ type: 'case.disposed', classification: 'restricted_aml' })), /case.disposed is not deliverable on the operational channel/);
    });

    it('rejects envelopes that break the schema', async () => {
      const { tenant_id: _omitted, ...withoutTenant } = envelope();
      await rejects(delivery(withoutTenant), /envelope lacks member tenant_id/);
      await rejects(delivery(envelope({ schema_version: '2026-09-01' })), /unexpected member schema_version/);
      await rejects(delivery(envelope({ extra: 1 })), /unexpected member extra/);
      await rejects(delivery(envelope({ delivery: { attempt: 0, delivery_id: 'whd_1' } })), /delivery.attempt 0 is not an integer >= 1/);
      await rejects(delivery(envelope({ id: 'evt_1' })), /envelope id "evt_1" is not a string with prefix whe_/);
      await rejects(delivery(envelope({ created_at: '2026-02-30T00:00:00Z' })), /created_at .* is not an RFC 3339 date-time/);
      await rejects(delivery(envelope({ type: 'webhook.test', data: { endpoint_id: 'ep_1', channel: 'operational', message: 'x', sent_at: 'now' } })), [/endpoint_id "ep_1"/, /sent_at "now"/]);
    });

    it('reports a path with no secrets or no channel instead of passing it', async () => {
      const path = freshPath();
      const received = await deliver(delivery(), path);
      expect(received.verification.problems.join('\n')).toMatch(/no secrets held.*\n.*no channel registered/s);
    });

    it('treats a repeated signature header as a problem (called directly, as Node would not send one)', () => {
      const d = delivery();
      const headers = { ...d.headers, 'svc-webhook-signature': [d.headers['svc-webhook-signature']!, d.headers['svc-webhook-signature']!] };
      const verification = verifyWebhookDelivery({ body: d.body, headers, secrets: [SECRET], channel: 'operational', now: NOW_MS });
      expect(verification.problems).toEqual(['header svc-webhook-signature appears 2 times']);
    });

    it('checks RFC 3339 calendars', () => {
      expect(['2024-02-29T00:00:00Z', '2026-12-31t23:59:60.5-05:30'].map(isDateTime)).toEqual([true, true]);
      expect(['2025-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00'].map(isDateTime)).toEqual([false, false, false, false]);
    });
  });

  describe('behaviours', () => {
    it('answers 503 with Retry-After and a body', async () => {
      const path = freshPath();
      receiver.setBehaviour(path, { status: 503, retryAfter: '7', body: 'busy' });
      const sent = await send(receiver.url(path), { ca: receiver.caPem, ...withBody(delivery()) });
      expect([sent.status, sent.headers['retry-after'], sent.body]).toEqual([503, '7', 'busy']);
    });

    it('redirects with Location', async () => {
      const path = freshPath();
      receiver.setBehaviour(path, { status: 307, redirectTo: 'https://elsewhere.example/hook' });
      const sent = await send(receiver.url(path), { ca: receiver.caPem, ...withBody(delivery()) });
      expect([sent.status, sent.headers.location]).toEqual([307, 'https://elsewhere.example/hook']);
    });

    it('delays its answer', async () => {
      const path = freshPath();
      receiver.setBehaviour(path, { delayMs: 300 });
      const sent = await send(receiver.url(path), { ca: receiver.caPem, ...withBody(delivery()) });
      expect(sent.status).toBe(200);
      expect(sent.ms).toBeGreaterThanOrEqual(290);
    });

    it('fails twice, then succeeds (behaviour by attempt)', async () => {
      const path = freshPath();
      receiver.setBehaviour(path, (attempt) => (attempt <= 2 ? { status: 500 } : { status: 204 }));
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(receiver.url(path), { ca: receiver.caPem, ...withBody(delivery()) })).status);
      expect(statuses).toEqual([500, 500, 204, 204]);
    });

    it('hangs until close(), which ends the request and every socket promptly', async () => {
      const own = await startWebhookReceiver({ certificate });
      own.setBehaviour('/slow', { hang: true });
      const hanging = send(own.url('/slow'), { ca: own.caPem, ...withBody(delivery()) }).then(
        () => 'answered',
        (e: NodeJS.ErrnoException) => e.code ?? e.message,
      );
      const waiting = own.waitFor(() => false, 60_000).catch((e: Error) => e.message);
      await own.waitFor((all) => all.length === 1, 5_000);
      // A client whose connection is idle (keep-alive) must not hold close() up either.
      const keepAlive = new Agent({ keepAlive: true });
      const idle = await send(own.url('/other'), { ca: own.caPem, ...withBody(delivery()), agent: keepAlive });
      expect(idle.status).toBe(200);
      const started = Date.now();
      await own.close();
      expect(Date.now() - started).toBeLessThan(1_000);
      keepAlive.destroy();
      expect(await hanging).toMatch(/ECONNRESET|socket hang up/);
      expect(await waiting).toMatch(/closed/);
    });
  });

  describe('keep: false', () => {
    it('keeps counters only', async () => {
      const own = await startWebhookReceiver({ certificate, keep: false, now: () => NOW_MS });
      try {
        own.setSecrets(ANY_PATH, [SECRET]);
        own.setChannel(ANY_PATH, 'operational');
        for (const path of ['/a', '/a', '/b']) await send(own.url(path), { ca: own.caPem, ...withBody(delivery()) });
        await send(own.url('/b'), { ca: own.caPem, ...withBody(delivery(envelope(), { secrets: [OTHER_SECRET] })) });
        // Secrets and channel came from ANY_PATH: three verify, the one signed with another secret fails.
        expect(await own.waitFor((_, counts) => counts.total === 4, 5_000)).toEqual([]);
        expect(own.deliveries).toEqual([]);
        expect(own.counts()).toEqual({ total: 4, verified: 3, failed: 1, byPath: { '/a': 2, '/b': 2 } });
      } finally {
        await own.close();
      }
    });
  });
});

function withBody(d: Delivery): { headers: Record<string, string>; body: Buffer } {
  return { headers: d.headers, body: d.body };
}

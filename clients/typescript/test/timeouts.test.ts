// Per-attempt timeouts and the retry settings, against servers that hang or fail on purpose.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcClient, SvcConnectionError, type PartyEvent } from '../src/index.ts';

const party: PartyEvent = { external_id: 'p-1', schema_version: '2026-09-01', occurred_at: '2026-09-01T12:00:00Z', sequence: 1, data: { type: 'person', status: 'active', created_at: '2026-01-01T00:00:00Z' } };
const SECRET = Buffer.alloc(32, 7).toString('base64url');

let hanging: Server;
let failing: Server;
let hangingUrl: string;
let failingUrl: string;
let seen = 0;
const keysSeen: Array<string | undefined> = [];

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  // Takes the request and never answers.
  hanging = createServer(() => {});
  hangingUrl = await listen(hanging);
  failing = createServer((req, res) => {
    seen++;
    keysSeen.push(req.headers['idempotency-key'] as string | undefined);
    res.writeHead(503).end();
  });
  failingUrl = await listen(failing);
});

afterAll(async () => {
  hanging.closeAllConnections();
  await Promise.all([new Promise((r) => hanging.close(r)), new Promise((r) => failing.close(r))]);
});

const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof SvcClient>[0]> = {}) =>
  new SvcClient({ baseUrl, keyId: 'svc_test_k', secret: SECRET, timeoutMs: 50, sleep: async () => {}, ...extra });

async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('a per-attempt timeout', () => {
  it('is a transport failure: a keyed call is retried, then fails as connection_timeout', async () => {
    const error = await rejection(client(hangingUrl).parties.ingest(party));
    expect(error).toBeInstanceOf(SvcConnectionError);
    expect(error).toMatchObject({ code: 'connection_timeout', failure: 'timeout', attempts: 4 });
  });

  it('names the Idempotency-Key it sent every attempt, so the caller can send the same request again', async () => {
    const error = (await rejection(client(hangingUrl).parties.ingest(party))) as SvcConnectionError;
    expect(error.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const given = (await rejection(client(hangingUrl).parties.ingest(party, { idempotencyKey: 'order-42' }))) as SvcConnectionError;
    expect(given.idempotencyKey).toBe('order-42');
    const keyless = (await rejection(client(hangingUrl).webhookEndpoints.create({ url: 'https://example.com/h', channel: 'operational', event_types: ['webhook.test'] }))) as SvcConnectionError;
    expect(keyless.idempotencyKey).toBeUndefined();
  });

  it('is not retried for a keyless write', async () => {
    const error = await rejection(client(hangingUrl).webhookEndpoints.create({ url: 'https://example.com/h', channel: 'operational', event_types: ['webhook.test'] }));
    expect(error).toMatchObject({ code: 'connection_timeout', attempts: 1 });
  });

  it('gives way to the caller\'s own cancellation, which is not retried', async () => {
    const controller = new AbortController();
    const call = client(hangingUrl, { timeoutMs: 60_000 }).parties.ingest(party, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller gave up')), 20);
    await expect(call).rejects.toThrow('caller gave up');
  });
});

describe('downloads', () => {
  // Answers the headers at once, then a CSV line every 40 ms for `lines` lines.
  const trickling = async (lines: number) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      let sent = 0;
      const timer = setInterval(() => {
        res.write(`line ${sent}\n`);
        if (++sent === lines) {
          clearInterval(timer);
          res.end();
        }
      }, 40);
      res.on('close', () => clearInterval(timer));
    });
    return { server, url: await listen(server) };
  };

  it('itemsCsv reads the whole body within the attempt: a body slower than timeoutMs is an SvcConnectionError', async () => {
    const { server, url } = await trickling(10);
    try {
      const error = await rejection(client(url, { timeoutMs: 150 }).reconciliations.itemsCsv('rcn_1'));
      expect(error).toBeInstanceOf(SvcConnectionError);
      expect(error).toMatchObject({ code: 'connection_timeout' });
      expect(await client(url, { timeoutMs: 5_000 }).reconciliations.itemsCsv('rcn_1')).toBe(Array.from({ length: 10 }, (_, i) => `line ${i}\n`).join(''));
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('rejectsCsv bounds the wait for the headers by timeoutMs, then streams at the reader\'s pace', async () => {
    const error = await rejection(client(hangingUrl).imports.rejectsCsv('imp_1'));
    expect(error).toBeInstanceOf(SvcConnectionError);
    expect(error).toMatchObject({ code: 'connection_timeout' });
    const { server, url } = await trickling(6);
    try {
      // Six lines over about 240 ms, past a 100 ms timeout: the stream is not cut.
      const stream = await client(url, { timeoutMs: 100 }).imports.rejectsCsv('imp_1');
      expect(await new Response(stream).text()).toBe(Array.from({ length: 6 }, (_, i) => `line ${i}\n`).join(''));
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('retry settings', () => {
  it('keep their defaults where given as undefined (3 retries, not endless)', async () => {
    seen = 0;
    keysSeen.length = 0;
    // A generous timeout: under load a 50 ms attempt may time out before the server counts it.
    const error = await rejection(client(failingUrl, { timeoutMs: 10_000, retry: { maxRetries: undefined, baseDelayMs: undefined } }).parties.ingest(party));
    expect(error).toMatchObject({ status: 503, attempts: 4 });
    expect(seen).toBe(4);
    // The last answer's error names the one key all four attempts carried.
    expect(new Set(keysSeen).size).toBe(1);
    expect(error).toMatchObject({ idempotencyKey: keysSeen[0] });
  });

  it('refuse values that are not finite numbers >= 0', () => {
    expect(() => client(failingUrl, { retry: { maxRetries: -1 } })).toThrow(RangeError);
    expect(() => client(failingUrl, { retry: { baseDelayMs: Number.NaN } })).toThrow(RangeError);
  });

  it('refuse delays a timer cannot wait for (past about 24.8 days it fires at once)', () => {
    expect(() => client(failingUrl, { retry: { maxRetryAfterMs: 1e12 } })).toThrow(RangeError);
    expect(() => client(failingUrl, { retry: { maxDelayMs: 2 ** 31 } })).toThrow(RangeError);
    expect(() => client(failingUrl, { retry: { maxRetries: 2 ** 31 } })).not.toThrow();
  });
});

describe('the timeout setting', () => {
  it('refuses what would make every call time out at once (NaN from an unset variable, a negative, too long a delay)', async () => {
    for (const timeoutMs of [Number.NaN, -1, 2 ** 31]) expect(() => client(failingUrl, { timeoutMs })).toThrow(RangeError);
    await expect(client(failingUrl, { timeoutMs: 10_000 }).parties.ingest(party, { timeoutMs: Number.NaN })).rejects.toThrow(RangeError);
  });

  it('takes Infinity, like 0, for no timeout', async () => {
    seen = 0;
    const error = await rejection(client(failingUrl, { timeoutMs: Number.POSITIVE_INFINITY, retry: { maxRetries: 0 } }).parties.ingest(party));
    expect(error).toMatchObject({ status: 503 });
    expect(seen).toBe(1);
  });
});

// The SDK's retry policy end to end: SDK -> fault proxy -> the real service on 127.0.0.1. The
// proxy injects 429s, 5xx and connection resets and logs every request it received, so each test
// shows which requests were repeated and that a repeat was the same request (same
// Idempotency-Key, same body bytes) with a fresh nonce. The spec's guidance (Errors): retry 429,
// 500, 502, 503, 504 and transport failures only when the request carried an Idempotency-Key,
// with full-jitter backoff honouring Retry-After; never 400, 403, 409 or 413; never a keyless
// write. On top of it, the SDK's own choices: GETs only with retryReads, keyless calls only with
// safeToRepeat, maxRetries, maxRetryAfterMs, and the caller's AbortSignal.
//
// The SDK's sleep is injected everywhere (it records the delay and returns at once), so no test
// waits for real and nothing here depends on wall-clock time.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../../platform/keys/api-keys.ts';
import { accountEvent, controlEventEvent, instrumentEvent, movementEvent, relationshipEvent } from '../../../test/fixtures/events.ts';
import { movementMapping } from '../../../test/fixtures/import-mappings.ts';
import { fault, startFaultProxy, type Fault, type FaultProxy, type ProxyLogEntry } from '../../../test/support/fault-proxy.ts';
import { startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import type { ClientOptions, ResponseMeta, RetryNotice } from '../src/http.ts';
import { SvcApiError, SvcConnectionError, SvcClient, type AccountEvent, type ControlEventEvent, type InstrumentEvent, type MovementEvent, type PartyEvent, type RelationshipEvent } from '../src/index.ts';

let service: SdkService;
let proxy: FaultProxy;

// Names resolve through this table, never real DNS: webhook registration checks the address.
const HOSTS: Record<string, string> = { 'hooks.example': '93.184.215.14' };

beforeAll(async () => {
  // A small body cap, so a 413 needs no megabytes.
  service = await startSdkService({ SVC_MAX_BODY_BYTES: String(64 * 1024) }, {
    resolve: async (host) => (HOSTS[host] ? [{ address: HOSTS[host], family: 4 as const }] : []),
  });
  proxy = await startFaultProxy(service.baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await service?.close();
});
beforeEach(() => proxy.reset());

interface Harness {
  client: SvcClient;
  sleeps: number[]; // every backoff delay the SDK asked for, in order
  retries: RetryNotice[]; // what onRetry saw
}

// A client of this scope that goes through the proxy, with a sleep that records and returns at once.
function through(scope: Scope, options: Partial<ClientOptions> = {}): Harness {
  const sleeps: number[] = [];
  const retries: RetryNotice[] = [];
  const client = service.client(scope, {
    baseUrl: proxy.url,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      signal?.throwIfAborted();
    },
    onRetry: (notice) => retries.push(notice),
    ...options,
  });
  return { client, sleeps, retries };
}

let counter = 0;
const uid = (prefix: string) => `${prefix}-${++counter}-${randomBytes(3).toString('hex')}`;

function party(externalId: string): PartyEvent {
  return {
    external_id: externalId,
    schema_version: '2026-09-01',
    occurred_at: '2026-09-01T11:59:00Z',
    sequence: 1,
    data: { type: 'person', status: 'active', created_at: '2025-01-15T09:30:00Z', legal_names: ['Ada Lovelace'] },
  };
}

// The import tests' CSV movement mapping.
const MOVEMENT_CSV = movementMapping({ kind: 'csv' });

async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.unreachable('the call should have failed'),
    (error: unknown) => error,
  );
}

async function apiError(call: Promise<unknown>): Promise<SvcApiError> {
  const error = await rejection(call);
  expect(error).toBeInstanceOf(SvcApiError);
  return error as SvcApiError;
}

async function connectionError(call: Promise<unknown>): Promise<SvcConnectionError> {
  const error = await rejection(call);
  expect(error).toBeInstanceOf(SvcConnectionError);
  return error as SvcConnectionError;
}

// The attempts of one call: one request repeated, never a new one. Same target, same
// Idempotency-Key (or none) and the same body bytes, so the service can match a keyed repeat to
// the original; and a fresh nonce each time, since a reused one is refused as a replay (401).
function expectRepeatsOfOneRequest(entries: readonly ProxyLogEntry[], count: number): void {
  expect(entries).toHaveLength(count);
  const first = entries[0]!;
  for (const entry of entries) {
    expect(entry).toMatchObject({ method: first.method, target: first.target, idempotencyKey: first.idempotencyKey, bodySha256: first.bodySha256 });
  }
  expect(new Set(entries.map((entry) => entry.nonce)).size).toBe(count);
}

async function inboxCount(externalId: string): Promise<number> {
  const { rows } = await service.api.db.pool.query('SELECT count(*)::int AS n FROM inbox_events WHERE external_id = $1', [externalId]);
  return rows[0].n;
}

// Each way the proxy fails a request before the service sees it: all retryable, when retrying is
// allowed at all.
const TRANSIENT: Array<[string, Fault]> = [
  ['429 with Retry-After', fault.rateLimit(1)],
  ['503', fault.serverError(503)],
  ['a connection reset', fault.resetBeforeForwarding()],
];

// What the SDK reports for each of those when it does not retry: the error after one attempt.
function expectFirstAttemptError(error: unknown, injected: Fault): void {
  if (injected.kind === 'reset_before_forwarding') {
    expect(error).toBeInstanceOf(SvcConnectionError);
    expect(error).toMatchObject({ failure: 'reset', attempts: 1 });
  } else {
    expect(error).toBeInstanceOf(SvcApiError);
    expect(error).toMatchObject(injected.kind === 'rate_limit' ? { status: 429, code: 'svc:rate_limit/exceeded', retryAfterMs: 1_000, attempts: 1 } : { status: 503, attempts: 1 });
  }
}

type Receipted = Promise<{ readonly lastResponse: ResponseMeta }>;

describe('keyed ingest is retried: the same request again, with a fresh nonce', () => {
  const keyedCalls: Array<[string, string, (client: SvcClient, id: string) => Receipted]> = [
    ['parties.ingest', '/v1/parties', (client, id) => client.parties.ingest(party(id))],
    ['batches.create', '/v1/batches', (client, id) => client.batches.create({ events: [{ object: 'party', event: party(id) }] })],
  ];

  describe.each(keyedCalls)('%s', (_name, path, call) => {
    it.each(TRANSIENT)('after %s', async (_what, injected) => {
      const { client, sleeps } = through('ingest');
      proxy.plan('POST', path, injected);
      const id = uid('p');
      const result = await call(client, id);
      expect(result.lastResponse).toMatchObject({ status: 202, attempts: 2, idempotentReplayed: false });
      const sent = proxy.requests('POST', path);
      expectRepeatsOfOneRequest(sent, 2);
      expect(sent[0]!.idempotencyKey).toBe(result.lastResponse.idempotencyKey);
      expect(sent.map((entry) => entry.upstreamStatus)).toEqual([undefined, 202]);
      expect(sleeps).toHaveLength(1);
      expect(await inboxCount(id)).toBe(1);
    });
  });

  it('retries every retryable status: 500, 502, 503, 504 (plain pages or problem documents) and 429', async () => {
    const { client } = through('ingest', { retry: { maxRetries: 5 } });
    proxy.plan('POST', '/v1/parties', fault.serverError(500), fault.serverError(502), fault.serverError(503, { body: 'problem' }), fault.serverError(504, { body: 'problem' }), fault.rateLimit(1));
    const receipt = await client.parties.ingest(party(uid('p')));
    expect(receipt.lastResponse.attempts).toBe(6);
    const sent = proxy.requests('POST', '/v1/parties');
    expectRepeatsOfOneRequest(sent, 6);
    expect(sent.map((entry) => entry.status)).toEqual([500, 502, 503, 504, 429, 202]);
  });

  // The SDK makes an Idempotency-Key for every ingest call (the six families and batches), which
  // is what makes each of them retryable.
  const everyIngest: Array<[string, string, (client: SvcClient, id: string) => Receipted]> = [
    ['parties.ingest', '/v1/parties', (client, id) => client.parties.ingest(party(id))],
    ['accounts.ingest', '/v1/accounts', (client, id) => client.accounts.ingest(accountEvent(id) as AccountEvent)],
    ['instruments.ingest', '/v1/instruments', (client, id) => client.instruments.ingest(instrumentEvent(id) as InstrumentEvent)],
    ['movements.ingest', '/v1/movements', (client, id) => client.movements.ingest(movementEvent(id) as MovementEvent)],
    ['relationships.ingest', '/v1/relationships', (client, id) => client.relationships.ingest(relationshipEvent(id) as RelationshipEvent)],
    ['controlEvents.ingest', '/v1/control-events', (client, id) => client.controlEvents.ingest(controlEventEvent(id) as ControlEventEvent)],
    ['batches.create', '/v1/batches', (client, id) => client.batches.create({ events: [{ object: 'party', event: party(id) }] })],
  ];
  it.each(everyIngest)('%s carries an SDK-made Idempotency-Key and is retried after a 503', async (_name, path, call) => {
    const { client } = through('ingest');
    proxy.plan('POST', path, fault.serverError(503));
    const result = await call(client, uid('x'));
    expect(result.lastResponse).toMatchObject({ status: 202, attempts: 2 });
    const sent = proxy.requests('POST', path);
    expectRepeatsOfOneRequest(sent, 2);
    expect(sent[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("keeps the caller's own Idempotency-Key across retries", async () => {
    const { client } = through('ingest');
    proxy.plan('POST', '/v1/parties', fault.resetBeforeForwarding(), fault.serverError(502));
    const receipt = await client.parties.ingest(party(uid('p')), { idempotencyKey: 'order-42-party' });
    expect(receipt.lastResponse).toMatchObject({ attempts: 3, idempotencyKey: 'order-42-party' });
    expect(proxy.log.map((entry) => entry.idempotencyKey)).toEqual(['order-42-party', 'order-42-party', 'order-42-party']);
  });

  // The service processed the first attempt and answered; the client saw only a reset. The retry
  // is answered from the idempotency store: the receipt of the first, and nothing done twice.
  it.each(keyedCalls)('%s after a reset that followed processing: the replayed receipt, one event', async (_name, path, call) => {
    const { client } = through('ingest');
    proxy.plan('POST', path, fault.resetAfterForwarding());
    const id = uid('p');
    const result = await call(client, id);
    expect(result.lastResponse).toMatchObject({ status: 202, attempts: 2, idempotentReplayed: true });
    const sent = proxy.requests('POST', path);
    expectRepeatsOfOneRequest(sent, 2);
    expect(sent.map((entry) => [entry.action, entry.upstreamStatus])).toEqual([['reset_after_forwarding', 202], ['forwarded', 202]]);
    expect(await inboxCount(id)).toBe(1);
  });

  it('the replayed receipt names the one event, which the service knows', async () => {
    const { client } = through('ingest');
    proxy.plan('POST', '/v1/parties', fault.resetAfterForwarding());
    const id = uid('p');
    const receipt = await client.parties.ingest(party(id));
    // The spec's key replay returns the stored response verbatim, with Idempotent-Replayed: true.
    // The body is the first attempt's receipt, so its idempotent_replay stays false (that field
    // is about dedup onto an earlier event); the header, lastResponse.idempotentReplayed, says replay.
    expect(receipt.lastResponse.idempotentReplayed).toBe(true);
    expect(receipt.idempotent_replay).toBe(false);
    const { rows } = await service.api.db.pool.query('SELECT event_id FROM inbox_events WHERE external_id = $1', [id]);
    expect(rows).toHaveLength(1);
    const status = await client.events.retrieve(receipt.event_id);
    expect(status).toMatchObject({ event_id: receipt.event_id, object: 'party', external_id: id });
    expect(receipt.event_id).toContain(rows[0].event_id);
  });
});

describe('Retry-After is honoured', () => {
  it('waits at least the seconds of a 429 Retry-After', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0.999 });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(2));
    await client.parties.ingest(party(uid('p')));
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2_000);
  });

  it('waits exactly the Retry-After when the jitter is shorter', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0 });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(3));
    await client.parties.ingest(party(uid('p')));
    expect(sleeps).toEqual([3_000]);
  });

  // The SDK's clock is the service's manual clock (sdk-service), so the date is read against it.
  it('reads a Retry-After HTTP date against the clock', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0 });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(new Date(service.api.clock.now().getTime() + 7_000)));
    await client.parties.ingest(party(uid('p')));
    expect(sleeps).toEqual([7_000]);
  });

  it('honours a Retry-After on a 503 too', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0 });
    proxy.plan('POST', '/v1/batches', fault.serverError(503, { retryAfter: 4 }));
    await client.batches.create({ events: [{ object: 'party', event: party(uid('p')) }] });
    expect(sleeps).toEqual([4_000]);
  });

  // An unreadable Retry-After is ignored: plain backoff, not "wait until 2030" (which is longer
  // than maxRetryAfterMs and would turn a retryable 503 into a final error).
  it('ignores an unreadable Retry-After and backs off as usual', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0.999, retry: { baseDelayMs: 100 } });
    proxy.plan('POST', '/v1/parties', fault.serverError(503, { retryAfter: 'abc 2030' }));
    const receipt = await client.parties.ingest(party(uid('p')));
    expect(receipt.lastResponse.attempts).toBe(2);
    expect(sleeps).toEqual([99]);
  });
});

describe('never retried, even with an Idempotency-Key: a repeat gets the same answer', () => {
  it('400: a payload that does not match the schema', async () => {
    const { client, sleeps } = through('ingest');
    const invalid = { ...party(uid('p')), data: { type: 'person', created_at: '2025-01-15T09:30:00Z' } } as unknown as PartyEvent;
    const error = await apiError(client.parties.ingest(invalid));
    expect(error).toMatchObject({ status: 400, code: 'svc:validation/schema', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
    expect(proxy.log[0]!.idempotencyKey).toBeDefined();
    expect(sleeps).toEqual([]);
  });

  it('401: a bad signature fails the same way every time', async () => {
    const { client } = through('ingest', { secret: randomBytes(32).toString('base64url') });
    const error = await apiError(client.parties.ingest(party(uid('p'))));
    expect(error).toMatchObject({ status: 401, code: 'svc:auth/invalid_signature', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('403: the credential lacks the ingest scope', async () => {
    const { client } = through('read');
    const error = await apiError(client.parties.ingest(party(uid('p'))));
    expect(error).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('409: the Idempotency-Key reused with a different body', async () => {
    const { client } = through('ingest');
    await client.parties.ingest(party(uid('p')), { idempotencyKey: 'reused-key' });
    proxy.reset();
    const error = await apiError(client.parties.ingest(party(uid('p')), { idempotencyKey: 'reused-key' }));
    expect(error).toMatchObject({ status: 409, code: 'svc:idempotency/key_conflict', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('409: the same entity sequence with different content', async () => {
    const { client } = through('ingest');
    const id = uid('p');
    await client.parties.ingest(party(id));
    proxy.reset();
    const changed = party(id);
    changed.data.status = 'closed';
    const error = await apiError(client.parties.ingest(changed));
    expect(error).toMatchObject({ status: 409, code: 'svc:sequence/conflict', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('413: a body above the payload cap', async () => {
    const { client } = through('ingest');
    const oversized = party(uid('p'));
    oversized.data.occupation = 'x'.repeat(100 * 1024);
    const error = await apiError(client.parties.ingest(oversized));
    expect(error).toMatchObject({ status: 413, code: 'svc:request/payload_too_large', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('413: a batch of more than 1000 events', async () => {
    const { client } = through('ingest');
    const events = Array.from({ length: 1001 }, () => ({}) as { object: 'party'; event: PartyEvent });
    const error = await apiError(client.batches.create({ events }));
    expect(error).toMatchObject({ status: 413, code: 'svc:batch/too_large', attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });
});

describe('keyless writes are never retried: a repeat could do the work twice', () => {
  const keylessWrites: Array<[string, Scope, string, (client: SvcClient) => Promise<unknown>]> = [
    ['webhookEndpoints.create', 'webhook_mgmt', '/v1/webhook-endpoints', (client) =>
      client.webhookEndpoints.create({ url: 'https://hooks.example/svc', channel: 'compliance', event_types: ['alert.opened'] })],
    ['reconciliations.create', 'ingest', '/v1/reconciliations', (client) =>
      client.reconciliations.create({
        scope: { kind: 'tenant' },
        direction: 'both',
        asset: 'USD',
        period: { from: '2026-08-01T00:00:00Z', to: '2026-09-01T00:00:00Z' },
        declared: { count: 0, sum: { value: '0', asset: 'USD', scale: 2 } },
      })],
    ['imports.create', 'ingest', '/v1/imports', (client) =>
      client.imports.create({ mapping: MOVEMENT_CSV, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2025-01-01T00:00:00Z' })],
    ['episodes.updateCase', 'compliance', '/v1/episodes/', (client) => client.episodes.updateCase(`epsd_${randomUUID()}`, { status: 'investigating', note: 'looking' })],
    ['validate', 'ingest', '/v1/validate', (client) => client.validate({ object: 'party', event: party(uid('p')) })],
  ];

  describe.each(keylessWrites)('%s', (_name, scope, path, call) => {
    it.each(TRANSIENT)('not after %s', async (_what, injected) => {
      const { client, sleeps, retries } = through(scope);
      // A pass after the fault: a wrong retry would succeed, and show as a second request.
      proxy.plan('*', path, injected, fault.pass());
      expectFirstAttemptError(await rejection(call(client)), injected);
      expect(proxy.log).toHaveLength(1);
      expect(proxy.log[0]!.idempotencyKey).toBeUndefined();
      expect(sleeps).toEqual([]);
      expect(retries).toEqual([]);
    });
  });

  // Why: the service did the work, and the client cannot know. A retry would register the
  // endpoint twice; the error goes to the caller instead.
  it('not after a reset that followed processing: the one endpoint the service created stays the only one', async () => {
    const { client } = through('webhook_mgmt');
    const url = `https://hooks.example/${uid('once')}`;
    proxy.plan('POST', '/v1/webhook-endpoints', fault.resetAfterForwarding());
    const error = await connectionError(client.webhookEndpoints.create({ url, channel: 'compliance', event_types: ['alert.opened'] }));
    expect(error).toMatchObject({ failure: 'reset', attempts: 1 });
    expect(proxy.log.map((entry) => [entry.action, entry.upstreamStatus])).toEqual([['reset_after_forwarding', 201]]);
    const { rows } = await service.api.db.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = $1', [url]);
    expect(rows[0].n).toBe(1);
  });
});

describe('reads', () => {
  let eventId: string;
  beforeAll(async () => {
    // Straight to the service, not through the proxy.
    eventId = (await service.client('ingest').parties.ingest(party(uid('read')))).event_id;
  });

  it.each(TRANSIENT)('a GET is not retried by default, after %s', async (_what, injected) => {
    const { client, sleeps } = through('ingest');
    proxy.plan('GET', '/v1/events/', injected, fault.pass());
    expectFirstAttemptError(await rejection(client.events.retrieve(eventId)), injected);
    expect(proxy.log).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it.each(TRANSIENT)('a GET is retried with retryReads, after %s', async (_what, injected) => {
    const { client, sleeps } = through('ingest', { retryReads: true });
    proxy.plan('GET', '/v1/events/', injected);
    const status = await client.events.retrieve(eventId);
    expect(status.lastResponse).toMatchObject({ status: 200, attempts: 2, idempotencyKey: undefined });
    expectRepeatsOfOneRequest(proxy.log, 2);
    expect(proxy.log[0]!.idempotencyKey).toBeUndefined();
    expect(sleeps).toHaveLength(1);
  });

  it('retryReads still does not retry a final answer (404)', async () => {
    const { client } = through('ingest', { retryReads: true });
    const error = await apiError(client.events.retrieve(`evt_${randomUUID()}`));
    expect(error).toMatchObject({ status: 404, attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('retryReads applies to GETs only: a keyless write stays unretried', async () => {
    const { client } = through('ingest', { retryReads: true });
    proxy.plan('POST', '/v1/validate', fault.serverError(503), fault.pass());
    const error = await apiError(client.validate({ object: 'party', event: party(uid('p')) }));
    expect(error).toMatchObject({ status: 503, attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('safeToRepeat on one GET retries it without retryReads', async () => {
    const { client } = through('ingest');
    proxy.plan('GET', '/v1/events/', fault.serverError(502));
    const status = await client.events.retrieve(eventId, { safeToRepeat: true });
    expect(status.lastResponse.attempts).toBe(2);
    expect(proxy.log).toHaveLength(2);
  });
});

describe('safeToRepeat: a keyless call the caller declares harmless', () => {
  let importId: string;
  const chunk = new TextEncoder().encode('id,at,amount\ni-1,2026-06-01T10:00:00Z,10.00\ni-2,2026-06-02T10:00:00Z,3.50\n');
  beforeAll(async () => {
    const created = await service.client('ingest').imports.create({ mapping: MOVEMENT_CSV, go_live_at: '2026-08-01T00:00:00Z', backfill_from: '2025-01-01T00:00:00Z' });
    importId = created.import_id;
  });

  // Staging a chunk again replaces it with the same bytes, so even a repeat of a chunk the
  // service already stored (the reset after forwarding) is harmless.
  it.each([...TRANSIENT, ['a reset after the service stored the chunk', fault.resetAfterForwarding()] as [string, Fault]])(
    'imports.uploadChunk is retried after %s',
    async (_what, injected) => {
      const { client, sleeps } = through('ingest');
      proxy.plan('PUT', '/v1/imports/', injected);
      const staged = await client.imports.uploadChunk(importId, 0, chunk, { safeToRepeat: true, contentType: 'text/csv' });
      expect(staged).toMatchObject({ chunk_no: 0, bytes: chunk.length });
      expect(staged.lastResponse).toMatchObject({ status: 201, attempts: 2 });
      expectRepeatsOfOneRequest(proxy.log, 2);
      expect(proxy.log[0]).toMatchObject({ method: 'PUT', idempotencyKey: undefined, bodyBytes: chunk.length });
      expect(sleeps).toHaveLength(1);
    },
  );

  it('imports.uploadChunk without it is a keyless write: not retried', async () => {
    const { client } = through('ingest');
    proxy.plan('PUT', '/v1/imports/', fault.serverError(503), fault.pass());
    const error = await apiError(client.imports.uploadChunk(importId, 1, chunk, { contentType: 'text/csv' }));
    expect(error).toMatchObject({ status: 503, attempts: 1 });
    expect(proxy.log).toHaveLength(1);
  });

  it('validate with safeToRepeat is retried (it stores nothing)', async () => {
    const { client } = through('ingest');
    proxy.plan('POST', '/v1/validate', fault.resetBeforeForwarding());
    const result = await client.validate({ object: 'party', event: party(uid('p')) }, { safeToRepeat: true });
    expect(result).toMatchObject({ valid: true });
    expect(result.lastResponse.attempts).toBe(2);
    expectRepeatsOfOneRequest(proxy.log, 2);
  });
});

describe('limits', () => {
  it('stops after maxRetries: the last error goes to the caller with the attempts made', async () => {
    const { client, sleeps, retries } = through('ingest', { retry: { maxRetries: 2 } });
    proxy.plan('POST', '/v1/parties', fault.serverError(503), fault.serverError(503), fault.serverError(503), fault.serverError(503));
    const error = await apiError(client.parties.ingest(party(uid('p'))));
    expect(error).toMatchObject({ status: 503, attempts: 3 });
    expectRepeatsOfOneRequest(proxy.log, 3);
    expect(proxy.pending()).toHaveLength(1);
    expect(sleeps).toHaveLength(2);
    expect(retries.map((notice) => notice.attempt)).toEqual([1, 2]);
  });

  it('stops after maxRetries of connection resets with a connection error carrying the attempts', async () => {
    const { client } = through('ingest', { retry: { maxRetries: 2 } });
    proxy.plan('POST', '/v1/parties', fault.resetBeforeForwarding(), fault.resetBeforeForwarding(), fault.resetBeforeForwarding());
    const error = await connectionError(client.parties.ingest(party(uid('p'))));
    expect(error).toMatchObject({ failure: 'reset', code: 'connection_reset', attempts: 3 });
    expect(proxy.log).toHaveLength(3);
  });

  it('makes 1 + 3 attempts by default', async () => {
    const { client } = through('ingest');
    proxy.plan('POST', '/v1/parties', ...Array.from({ length: 5 }, () => fault.serverError(500)));
    const error = await apiError(client.parties.ingest(party(uid('p'))));
    expect(error.attempts).toBe(4);
    expect(proxy.log).toHaveLength(4);
  });

  it('maxRetries 0 turns retrying off', async () => {
    const { client } = through('ingest', { retry: { maxRetries: 0 } });
    proxy.plan('POST', '/v1/parties', fault.serverError(503), fault.pass());
    expect((await apiError(client.parties.ingest(party(uid('p'))))).attempts).toBe(1);
    expect(proxy.log).toHaveLength(1);
  });

  it('does not wait for a Retry-After beyond maxRetryAfterMs: the 429 goes to the caller', async () => {
    const { client, sleeps } = through('ingest', { retry: { maxRetryAfterMs: 5_000 } });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(6), fault.pass());
    const error = await apiError(client.parties.ingest(party(uid('p'))));
    expect(error).toMatchObject({ status: 429, code: 'svc:rate_limit/exceeded', retryAfterMs: 6_000, attempts: 1 });
    expect(proxy.log).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('waits for a Retry-After of exactly maxRetryAfterMs', async () => {
    const { client, sleeps } = through('ingest', { retry: { maxRetryAfterMs: 5_000 } });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(5));
    await client.parties.ingest(party(uid('p')));
    expect(sleeps).toEqual([5_000]);
  });

  it('by default waits up to 60 s of Retry-After and no longer', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0 });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(60), fault.rateLimit(61));
    const error = await apiError(client.parties.ingest(party(uid('p'))));
    expect(error).toMatchObject({ status: 429, attempts: 2, retryAfterMs: 61_000 });
    expect(sleeps).toEqual([60_000]);
  });
});

describe('backoff: exponential with full jitter', () => {
  it('stays just under base·2^(n−1), capped at maxDelayMs, for random just under 1', async () => {
    const { client, sleeps, retries } = through('ingest', { random: () => 0.999, retry: { baseDelayMs: 100, maxDelayMs: 250 } });
    proxy.plan('POST', '/v1/parties', fault.serverError(503), fault.serverError(503), fault.serverError(503));
    await client.parties.ingest(party(uid('p')));
    // Ceilings 100, 200, then 400 capped to 250.
    expect(sleeps).toEqual([99, 199, 249]);
    expect(retries).toEqual([1, 2, 3].map((attempt, i) => ({ method: 'POST', path: '/v1/parties', attempt, delayMs: sleeps[i], reason: 'HTTP 503' })));
  });

  it('follows the default policy: ceilings of 500 ms, 1 s, 2 s', async () => {
    const { client, sleeps, retries } = through('ingest', { random: () => 0.999 });
    proxy.plan('POST', '/v1/batches', fault.resetBeforeForwarding(), fault.resetBeforeForwarding(), fault.resetBeforeForwarding());
    await client.batches.create({ events: [{ object: 'party', event: party(uid('p')) }] });
    expect(sleeps).toEqual([499, 999, 1_998]);
    expect(retries.every((notice) => /reset/.test(notice.reason))).toBe(true);
  });

  it('is 0 for random 0 (the bottom of the full-jitter range)', async () => {
    const { client, sleeps } = through('ingest', { random: () => 0 });
    proxy.plan('POST', '/v1/parties', fault.serverError(502), fault.serverError(504));
    await client.parties.ingest(party(uid('p')));
    expect(sleeps).toEqual([0, 0]);
  });

  it('draws each delay from the injected random', async () => {
    const draws = [0.5, 0.25];
    const { client, sleeps } = through('ingest', { random: () => draws.shift()!, retry: { baseDelayMs: 1_000 } });
    proxy.plan('POST', '/v1/parties', fault.serverError(503), fault.serverError(503));
    await client.parties.ingest(party(uid('p')));
    expect(sleeps).toEqual([500, 500]); // 0.5 of 1000, 0.25 of 2000
  });
});

describe("the caller's AbortSignal", () => {
  it('abort during the backoff sleep rejects with the abort reason, and no further attempt is made', async () => {
    const controller = new AbortController();
    const reason = new Error('the caller gave up');
    let sleepingWith: AbortSignal | undefined;
    const { client } = through('ingest', {
      // Like the SDK's own sleep: ends only when the signal it is given aborts.
      sleep: (_ms, signal) =>
        new Promise<void>((_resolve, reject) => {
          sleepingWith = signal;
          if (!signal) return reject(new Error('the SDK did not give its sleep the caller signal'));
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          controller.abort(reason);
        }),
    });
    proxy.plan('POST', '/v1/parties', fault.serverError(503));
    await expect(client.parties.ingest(party(uid('p')), { signal: controller.signal })).rejects.toBe(reason);
    expect(sleepingWith).toBe(controller.signal);
    expect(proxy.log).toHaveLength(1);
    expect(proxy.pending()).toEqual([]);
  });

  it('abort during a sleep that ignores the signal still stops before the next attempt', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const { client } = through('ingest', {
      sleep: async () => {
        controller.abort(reason);
      },
    });
    proxy.plan('POST', '/v1/parties', fault.resetBeforeForwarding());
    await expect(client.parties.ingest(party(uid('p')), { signal: controller.signal })).rejects.toBe(reason);
    expect(proxy.log).toHaveLength(1);
  });

  // The SDK's own sleep, not an injected one: a 50 s Retry-After is cut short by the abort (if it
  // were not, the test would time out rather than pass).
  it("the SDK's own sleep ends at the abort", async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const client = service.client('ingest', { baseUrl: proxy.url, onRetry: () => setImmediate(() => controller.abort(reason)) });
    proxy.plan('POST', '/v1/parties', fault.rateLimit(50));
    await expect(client.parties.ingest(party(uid('p')), { signal: controller.signal })).rejects.toBe(reason);
    expect(proxy.log).toHaveLength(1);
  });

  it('an already aborted signal makes no attempt at all', async () => {
    const reason = new Error('never mind');
    const { client } = through('ingest');
    await expect(client.parties.ingest(party(uid('p')), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(proxy.log).toEqual([]);
  });
});

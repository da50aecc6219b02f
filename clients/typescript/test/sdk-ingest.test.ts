// The SDK's ingestion calls against the real service over 127.0.0.1: the six single-event
// endpoints, batches, validation, event status and health, with the metadata every result carries
// (status, Idempotency-Key, replay flag, rate limit) and the typed errors of refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiError, startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import {
  type SvcClient,
  type AccountEvent,
  type BatchItem,
  type ControlEventEvent,
  type InstrumentEvent,
  type MovementEvent,
  type PartyEvent,
  type RelationshipEvent,
  type RetryNotice,
} from '../src/index.ts';

const OCCURRED_AT = '2026-09-01T11:59:00Z';
const RECEIVED_AT = '2026-09-01T12:00:00.000Z';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EVENT_ID = /^evt_[0-9a-f-]{36}$/;

// Events typed as the SDK's callers write them (the generated request types, not `any`).
const party = (id: string, sequence = 1): PartyEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: OCCURRED_AT,
  sequence,
  data: { type: 'person', status: 'active', created_at: '2025-01-15T09:30:00Z', legal_names: ['Ada Lovelace'] },
});
const account = (id: string, holder: string): AccountEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: OCCURRED_AT,
  sequence: 1,
  data: { type: 'wallet', holder_party_id: holder, asset: 'USD', status: 'active', opened_at: '2025-02-01T00:00:00Z' },
});
const instrument = (id: string): InstrumentEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: OCCURRED_AT,
  sequence: 1,
  data: { type: 'card_token', status: 'active', first_seen_at: '2025-02-01T00:00:00Z', masked_identifier: '411111******1111' },
});
const movement = (id: string, value = '12550'): MovementEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: OCCURRED_AT,
  data: { type: 'p2p', status: 'completed', amount: { value, asset: 'USD', scale: 2 }, debit: { account_id: 'acct-1' }, credit: { account_id: 'acct-2' } },
});
const relationship = (id: string): RelationshipEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: OCCURRED_AT,
  sequence: 1,
  data: { type: 'beneficial_owner', from: { kind: 'party', external_id: 'p-1' }, to: { kind: 'party', external_id: 'p-2' }, valid_from: '2025-01-01T00:00:00Z' },
});
const controlEvent = (id: string): ControlEventEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: OCCURRED_AT,
  data: { type: 'auth.failed', subject: { kind: 'party', external_id: 'p-1' }, outcome: 'denied' },
});

describe('ingestion through the SDK', () => {
  let svc: SdkService;
  let ingest: SvcClient;
  beforeAll(async () => {
    svc = await startSdkService();
    ingest = svc.client('ingest');
  });
  afterAll(async () => svc?.close());

  const receiptOf = (object: string, externalId: string) => ({
    event_id: expect.stringMatching(EVENT_ID),
    object,
    external_id: externalId,
    received_at: RECEIVED_AT,
    idempotent_replay: false,
  });

  it('ingests each of the six families: 202 with a typed receipt and the exchange metadata', async () => {
    const results = [
      ['party', 's-party', await ingest.parties.ingest(party('s-party'))],
      ['account', 's-account', await ingest.accounts.ingest(account('s-account', 's-party'))],
      ['instrument', 's-instrument', await ingest.instruments.ingest(instrument('s-instrument'))],
      ['movement', 's-movement', await ingest.movements.ingest(movement('s-movement'))],
      ['relationship', 's-relationship', await ingest.relationships.ingest(relationship('s-relationship'))],
      ['control_event', 's-control', await ingest.controlEvents.ingest(controlEvent('s-control'))],
    ] as const;
    for (const [object, externalId, receipt] of results) {
      // Each went to its own endpoint: the service named the family it stored.
      expect(receipt).toEqual(receiptOf(object, externalId));
      expect(receipt.lastResponse).toMatchObject({ status: 202, attempts: 1, idempotentReplayed: false });
      // No key was given: the SDK made one (a UUID) and sent it.
      expect(receipt.lastResponse.idempotencyKey).toMatch(UUID);
      expect(receipt.lastResponse.headers.get('content-type')).toMatch(/^application\/json/);
      expect(receipt.lastResponse.rateLimit).toMatchObject({ limit: 10_000 });
    }
    expect(new Set(results.map(([, , r]) => r.lastResponse.idempotencyKey)).size).toBe(6);
    // The result's metadata is not part of its data.
    expect(Object.keys(results[0][2])).not.toContain('lastResponse');
    expect(JSON.parse(JSON.stringify(results[0][2]))).not.toHaveProperty('lastResponse');
  });

  it('stores the generated key: sending it again replays the stored receipt', async () => {
    const first = await ingest.movements.ingest(movement('s-generated-key'));
    const key = first.lastResponse.idempotencyKey!;
    const again = await ingest.movements.ingest(movement('s-generated-key'), { idempotencyKey: key });
    expect(again.lastResponse.idempotentReplayed).toBe(true);
    expect(again).toEqual(first);
  });

  it('replays a request repeated with the same explicit key, verbatim and flagged in lastResponse', async () => {
    const first = await ingest.parties.ingest(party('s-idem'), { idempotencyKey: 'sdk-key-1' });
    expect(first.lastResponse).toMatchObject({ status: 202, idempotencyKey: 'sdk-key-1', idempotentReplayed: false });
    const again = await ingest.parties.ingest(party('s-idem'), { idempotencyKey: 'sdk-key-1' });
    expect(again.lastResponse).toMatchObject({ status: 202, idempotencyKey: 'sdk-key-1', idempotentReplayed: true });
    // The stored response verbatim: the body still says what it said the first time.
    expect(again).toEqual(first);
    const { rows } = await svc.api.db.pool.query(`SELECT count(*)::int AS n FROM inbox_events WHERE external_id = 's-idem'`);
    expect(rows[0].n).toBe(1);
  });

  it('tells a content duplicate under a new key (body idempotent_replay) from a key replay (header)', async () => {
    const first = await ingest.movements.ingest(movement('s-dup'));
    const again = await ingest.movements.ingest(movement('s-dup'));
    expect(again.lastResponse.idempotencyKey).not.toBe(first.lastResponse.idempotencyKey);
    expect(again).toEqual({ ...first, idempotent_replay: true });
    expect(again.lastResponse.idempotentReplayed).toBe(false);
  });

  it('sends the correlation id: recorded on the inbox row', async () => {
    await ingest.movements.ingest(movement('s-correlated'), { correlationId: 'sdk-corr-1' });
    const { rows } = await svc.api.db.pool.query(`SELECT correlation_id FROM inbox_events WHERE external_id = 's-correlated'`);
    expect(rows[0].correlation_id).toBe('sdk-corr-1');
  });

  it('reports the rate limit on every ingest result, charged one token per event', async () => {
    const one = await ingest.movements.ingest(movement('s-rate-1'));
    expect(one.lastResponse.rateLimit).toEqual({ limit: 10_000, remaining: expect.any(Number), resetSeconds: expect.any(Number) });
    const two = await ingest.movements.ingest(movement('s-rate-2'));
    // The service's clock stands still, so nothing refills between the calls.
    expect(two.lastResponse.rateLimit!.remaining).toBe(one.lastResponse.rateLimit!.remaining - 1);
    const batch = await ingest.batches.create({ events: [1, 2, 3].map((i): BatchItem => ({ object: 'movement', event: movement(`s-rate-b${i}`) })) });
    expect(batch.lastResponse.rateLimit!.remaining).toBe(two.lastResponse.rateLimit!.remaining - 3);
    expect(batch.lastResponse.rateLimit!.resetSeconds).toBeGreaterThan(0);
  });

  it('throws SvcApiError 400 svc:validation/schema with the field path for an invalid movement, not retried', async () => {
    // A sequence on a fact: the type refuses it too, so it gets past the compiler only by a cast,
    // as it would from plain JavaScript.
    const error = await apiError(ingest.movements.ingest({ ...movement('s-bad'), sequence: 3 } as MovementEvent, { correlationId: 'sdk-corr-bad' }));
    expect(error).toMatchObject({ status: 400, code: 'svc:validation/schema', attempts: 1 });
    expect(error.errors).toEqual([expect.objectContaining({ path: 'event.sequence', code: 'svc:validation/schema' })]);
    expect(error.problem).toMatchObject({ status: 400, code: 'svc:validation/schema', correlation_id: 'sdk-corr-bad', instance: '/v1/movements' });
    expect(error.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(error.message).toContain('400 svc:validation/schema');
  });

  it('throws the path of a bad amount inside the event data', async () => {
    const bad = movement('s-bad-amount');
    bad.data.amount.value = '12.50';
    const error = await apiError(ingest.movements.ingest(bad));
    expect(error.status).toBe(400);
    expect(error.errors.map((e) => e.path)).toContain('event.data.amount.value');
  });

  it('throws 403 svc:auth/insufficient_scope for a read key on an ingest call, writing nothing', async () => {
    const error = await apiError(svc.client('read').parties.ingest(party('s-scope')));
    expect(error).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope', attempts: 1 });
    const { rows } = await svc.api.db.pool.query(`SELECT count(*)::int AS n FROM inbox_events WHERE external_id = 's-scope'`);
    expect(rows[0].n).toBe(0);
  });

  it('throws 409 svc:idempotency/key_conflict for a key reused with another body, without retrying', async () => {
    await ingest.movements.ingest(movement('s-conflict-a'), { idempotencyKey: 'sdk-key-conflict' });
    const error = await apiError(ingest.movements.ingest(movement('s-conflict-b'), { idempotencyKey: 'sdk-key-conflict' }));
    expect(error).toMatchObject({ status: 409, code: 'svc:idempotency/key_conflict', attempts: 1 });
  });

  it('throws 401 svc:auth/invalid_signature when signed with the wrong secret', async () => {
    const forged = svc.client('ingest', { secret: Buffer.alloc(32, 7).toString('base64url') });
    const error = await apiError(forged.parties.ingest(party('s-forged')));
    expect(error).toMatchObject({ status: 401, code: 'svc:auth/invalid_signature' });
  });

  describe('batches.create', () => {
    it('resolves 202 with each item reported, accepted and rejected alike', async () => {
      const bad = movement('s-batch-bad');
      bad.data.amount.scale = 3;
      const result = await ingest.batches.create({
        events: [
          { object: 'party', event: party('s-batch-p') },
          { object: 'movement', event: bad },
          { object: 'movement', event: movement('s-batch-m') },
        ],
      });
      expect(result.lastResponse).toMatchObject({ status: 202, idempotentReplayed: false, idempotencyKey: expect.stringMatching(UUID) });
      expect(result).toMatchObject({ accepted: 2, rejected: 1 });
      expect(result.results.map((r) => r.outcome)).toEqual(['accepted', 'rejected', 'accepted']);
      expect(result.results[0]!.receipt).toEqual(receiptOf('party', 's-batch-p'));
      expect(result.results[1]!.problem).toMatchObject({ code: 'svc:validation/money_scale_mismatch', errors: [expect.objectContaining({ path: 'events.1.event.data.amount.scale' })] });
    });

    it('resolves (does not throw) on 422 when every item is rejected', async () => {
      const bad = movement('s-batch-422');
      bad.data.amount.scale = 3;
      const result = await ingest.batches.create({ events: [{ object: 'movement', event: bad }] });
      expect(result.lastResponse.status).toBe(422);
      expect(result).toMatchObject({ accepted: 0, rejected: 1, results: [{ index: 0, outcome: 'rejected' }] });
      expect(result.results[0]!.problem!.code).toBe('svc:validation/money_scale_mismatch');
    });

    it('replays a batch repeated with the same key', async () => {
      const request = { events: [{ object: 'movement', event: movement('s-batch-idem') }] satisfies BatchItem[] };
      const first = await ingest.batches.create(request, { idempotencyKey: 'sdk-batch-key' });
      const again = await ingest.batches.create(request, { idempotencyKey: 'sdk-batch-key' });
      expect(again.lastResponse).toMatchObject({ status: 202, idempotencyKey: 'sdk-batch-key', idempotentReplayed: true });
      expect(again).toEqual(first);
    });

    it('throws 400 for an empty batch', async () => {
      const error = await apiError(ingest.batches.create({ events: [] }));
      expect(error.status).toBe(400);
      expect(error.errors[0]!.path).toBe('events');
    });
  });

  describe('validate', () => {
    it('answers 200 valid for a batch of every family, storing nothing', async () => {
      const events: BatchItem[] = [
        { object: 'party', event: party('v-party') },
        { object: 'account', event: account('v-account', 'v-party') },
        { object: 'instrument', event: instrument('v-instrument') },
        { object: 'movement', event: movement('v-movement') },
        { object: 'relationship', event: relationship('v-relationship') },
        { object: 'control_event', event: controlEvent('v-control') },
      ];
      const result = await ingest.validate({ events });
      expect(result.lastResponse.status).toBe(200);
      expect(result).toMatchObject({ valid: true, checked: 6, accepted: 6, rejected: 0 });
      expect(result.results[3]).toEqual({ index: 3, outcome: 'valid', object: 'movement', external_id: 'v-movement' });
      // Validation takes no Idempotency-Key.
      expect(result.lastResponse.idempotencyKey).toBeUndefined();
      const { rows } = await svc.api.db.pool.query(`SELECT count(*)::int AS n FROM inbox_events WHERE external_id LIKE 'v-%'`);
      expect(rows[0].n).toBe(0);
    });

    it('takes one bare item with a read key', async () => {
      const result = await svc.client('read').validate({ object: 'party', event: party('v-bare') });
      expect(result).toMatchObject({ valid: true, checked: 1, results: [{ outcome: 'valid', object: 'party', external_id: 'v-bare' }] });
    });

    it('resolves on 422 with valid false and each problem at its body path', async () => {
      const bad = movement('v-bad');
      bad.data.memo = 'card 4111 1111 1111 1111 thanks';
      const result = await ingest.validate({ events: [{ object: 'movement', event: movement('v-good') }, { object: 'movement', event: bad }] });
      expect(result.lastResponse.status).toBe(422);
      expect(result).toMatchObject({ valid: false, checked: 2, accepted: 1, rejected: 1 });
      expect(result.results[1]!.problem!.errors).toEqual([{ path: 'events.1.event.data.memo', code: 'svc:validation/pan_detected', message: expect.any(String) }]);
    });

    it('throws 403 for a key with neither ingest nor read scope', async () => {
      const error = await apiError(svc.client('webhook_mgmt').validate({ object: 'party', event: party('v-scope') }));
      expect(error).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
    });
  });

  describe('events.retrieve', () => {
    it('answers where an accepted event is, by evt_ id or bare uuid, with the rate limit', async () => {
      const receipt = await ingest.parties.ingest(party('s-status', 7));
      const status = await ingest.events.retrieve(receipt.event_id);
      expect(status.lastResponse.status).toBe(200);
      expect(status).toMatchObject({
        event_id: receipt.event_id,
        object: 'party',
        external_id: 's-status',
        sequence: 7,
        status: 'pending',
        received_at: receipt.received_at,
        occurred_at: '2026-09-01T11:59:00.000Z',
        historical: false,
        import_id: null,
      });
      expect(status.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(status.stage_history).toEqual([expect.objectContaining({ stage: 'received', status: 'ok', at: receipt.received_at })]);
      expect(status.lastResponse.rateLimit).toMatchObject({ limit: 10_000 });
      const bare = await ingest.events.retrieve(receipt.event_id.slice('evt_'.length));
      expect(bare.event_id).toBe(receipt.event_id);
    });

    it('throws a governed 404 for an unknown or malformed id', async () => {
      for (const id of ['evt_00000000-0000-7000-8000-000000000000', 'not-an-id']) {
        const error = await apiError(ingest.events.retrieve(id));
        expect(error).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
      }
    });
  });

  it('health answers ok', async () => {
    const health = await svc.client('read').health();
    expect(health).toEqual({ status: 'ok' });
    expect(health.lastResponse).toMatchObject({ status: 200, attempts: 1, idempotencyKey: undefined, idempotentReplayed: false });
  });
});

describe('the rate limit through the SDK (a bucket of 1000 events)', () => {
  let svc: SdkService;
  beforeAll(async () => {
    svc = await startSdkService({ SVC_RATE_LIMIT_CAPACITY: '1000', SVC_RATE_LIMIT_REFILL_PER_S: '10' });
  });
  afterAll(async () => svc?.close());

  // Fills the bucket (100 s at 10 a second), then empties it: validation is charged like
  // ingestion and stores nothing.
  const drainBucket = async (client: SvcClient) => {
    svc.api.clock.advance(100);
    const events = Array.from({ length: 1000 }, (_, i): BatchItem => ({ object: 'movement', event: movement(`r-fill-${i}`) }));
    const result = await client.validate({ events });
    expect(result.lastResponse.rateLimit).toMatchObject({ limit: 1000, remaining: 0 });
  };

  it('throws 429 svc:rate_limit/exceeded with Retry-After when the bucket is empty and retries are off', async () => {
    const client = svc.client('ingest', { retry: { maxRetries: 0 } });
    await drainBucket(client);
    const error = await apiError(client.movements.ingest(movement('r-refused')));
    expect(error).toMatchObject({ status: 429, code: 'svc:rate_limit/exceeded', attempts: 1 });
    expect(error.retryAfterMs).toBeGreaterThan(0);
  });

  // Waiting is moving the service's clock on: the bucket refills while the SDK "sleeps".
  const refillingClient = (onRetry: (notice: RetryNotice) => void, sent: Headers[] = []) =>
    svc.client('ingest', {
      sleep: async (ms) => {
        svc.api.clock.advance(Math.ceil(ms / 1000));
      },
      random: () => 0,
      onRetry,
      // The real fetch, watched: what each attempt sent.
      fetch: (input, init) => {
        sent.push(new Headers(init?.headers));
        return fetch(input, init);
      },
    });

  it('retries a keyed ingest after Retry-After, with the same key, and succeeds', async () => {
    const retries: RetryNotice[] = [];
    const client = refillingClient((notice) => retries.push(notice));
    await drainBucket(client);
    const receipt = await client.movements.ingest(movement('r-retried'), { idempotencyKey: 'r-key' });
    expect(receipt).toMatchObject({ external_id: 'r-retried', idempotent_replay: false });
    expect(receipt.lastResponse).toMatchObject({ status: 202, attempts: 2, idempotencyKey: 'r-key' });
    expect(retries).toEqual([{ method: 'POST', path: '/v1/movements', attempt: 1, delayMs: expect.any(Number), reason: 'HTTP 429' }]);
    // random() is 0, so no jitter: the wait is the service's Retry-After (whole seconds, at least one).
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(retries[0]!.delayMs % 1000).toBe(0);
  });

  it('keeps the key it generated across retries, with a fresh nonce for every attempt', async () => {
    const sent: Headers[] = [];
    const client = refillingClient(() => {}, sent);
    await drainBucket(client);
    sent.length = 0;
    const receipt = await client.movements.ingest(movement('r-generated'));
    expect(receipt.lastResponse.attempts).toBe(2);
    expect(sent).toHaveLength(2);
    expect(sent.map((h) => h.get('idempotency-key'))).toEqual([receipt.lastResponse.idempotencyKey, receipt.lastResponse.idempotencyKey]);
    expect(receipt.lastResponse.idempotencyKey).toMatch(UUID);
    expect(sent[0]!.get('svc-nonce')).not.toBe(sent[1]!.get('svc-nonce'));
    // The key the service stored is that one: repeating it replays.
    const again = await client.movements.ingest(movement('r-generated'), { idempotencyKey: receipt.lastResponse.idempotencyKey! });
    expect(again.lastResponse.idempotentReplayed).toBe(true);
  });

  it('never retries a call without an Idempotency-Key: validate refused 429 is thrown at once', async () => {
    const retries: RetryNotice[] = [];
    const client = refillingClient((notice) => retries.push(notice));
    await drainBucket(client);
    // validate is charged like ingestion but takes no key, so the SDK may not repeat it.
    const error = await apiError(client.validate({ object: 'movement', event: movement('r-keyless') }));
    expect(error).toMatchObject({ status: 429, code: 'svc:rate_limit/exceeded', attempts: 1 });
    expect(retries).toEqual([]);
  });
});

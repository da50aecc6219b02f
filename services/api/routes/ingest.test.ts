import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountEvent, controlEventEvent, instrumentEvent, movementEvent, partyEvent, relationshipEvent } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { batchResponseSchema, eventStatusSchema, ingestReceiptSchema } from '../../../schemas/responses.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

const post = (url: string, body: unknown, headers?: Record<string, string>) => api.client.post(url, body, api.keys.ingest, headers);

async function counts(): Promise<{ inbox: number; outbox: number; stages: number }> {
  const { rows } = await api.db.pool.query(
    `SELECT (SELECT count(*) FROM inbox_events)::int AS inbox, (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM event_stages)::int AS stages`,
  );
  return rows[0];
}

describe('the six single-event endpoints', () => {
  it.each([
    ['/v1/parties', 'party', () => partyEvent('p-six')],
    ['/v1/accounts', 'account', () => accountEvent('a-six')],
    ['/v1/instruments', 'instrument', () => instrumentEvent('i-six')],
    ['/v1/movements', 'movement', () => movementEvent('m-six')],
    ['/v1/relationships', 'relationship', () => relationshipEvent('r-six')],
    ['/v1/control-events', 'control_event', () => controlEventEvent('c-six')],
  ])('%s answers 202 with a receipt, and the event is readable at once', async (path, object, make) => {
    const event = make();
    const res = await post(path, event);
    expect(res.statusCode).toBe(202);
    const receipt = ingestReceiptSchema.parse(res.json());
    expect(receipt).toEqual({
      event_id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      object,
      external_id: event.external_id,
      received_at: '2026-09-01T12:00:00.000Z',
      idempotent_replay: false,
    });
    const status = await api.client.get(`/v1/events/${receipt.event_id}`, api.keys.ingest);
    expect(status.statusCode).toBe(200);
    const record = eventStatusSchema.parse(status.json());
    expect(record).toMatchObject({
      event_id: receipt.event_id,
      object,
      external_id: event.external_id,
      sequence: 'sequence' in event ? event.sequence : null,
      status: 'pending',
      rejection: null,
      status_reason: null,
      attempts: 0,
      received_at: receipt.received_at,
      occurred_at: '2026-09-01T11:59:00.000Z',
      terminal_at: null,
      historical: false,
      import_id: null,
    });
    expect(record.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(record.stage_history).toEqual([{ stage: 'received', status: 'ok', at: receipt.received_at, worker: expect.any(String), duration_ms: null, detail: null }]);
  });

  it('stores occurred_at as its instant in UTC, a leap second and a far offset included', async () => {
    for (const [externalId, sent, stored] of [
      ['m-leap', '2016-12-31T18:59:60.25-05:00', '2016-12-31T23:59:59.999Z'],
      ['m-offset', '2026-09-01T00:00:00+23:59', '2026-08-31T00:01:00.000Z'],
    ] as const) {
      const res = await api.client.post('/v1/movements', { ...movementEvent(externalId), occurred_at: sent }, api.keys.ingest);
      expect(res.statusCode).toBe(202);
      const status = await api.client.get(`/v1/events/${ingestReceiptSchema.parse(res.json()).event_id}`, api.keys.ingest);
      expect(eventStatusSchema.parse(status.json()).occurred_at).toBe(stored);
    }
  });

  it('needs the ingest scope', async () => {
    const res = await api.client.post('/v1/parties', partyEvent('p-scope'), api.keys.read);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('svc:auth/insufficient_scope');
  });

  it('stores the raw body bytes exactly as received', async () => {
    const text = '{ "external_id":"p-raw",  "schema_version":"2026-09-01","occurred_at":"2026-09-01T11:59:00Z","sequence":1,\n "data":{"type":"person","status":"active","created_at":"2025-01-15T09:30:00Z"} }';
    const res = await post('/v1/parties', text);
    expect(res.statusCode).toBe(202);
    const { rows } = await api.db.pool.query('SELECT raw_event, correlation_id FROM inbox_events WHERE external_id = $1', ['p-raw']);
    expect(rows[0].raw_event.toString('utf8')).toBe(text);
  });

  it('refuses invalid input with 400 and item-form paths, writing nothing', async () => {
    const before = await counts();
    const event = movementEvent('m-bad');
    event.data.memo = 'pay 4111-1111-1111-1111';
    const res = await post('/v1/movements', event);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('svc:validation/pan_detected');
    expect(res.json().errors[0].path).toBe('event.data.memo');
    expect(await counts()).toEqual(before);
  });

  it('refuses a sequence on a fact', async () => {
    const res = await post('/v1/movements', { ...movementEvent('m-seq'), sequence: 3 });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ path: 'event.sequence', code: 'svc:validation/schema' })]);
  });
});

describe('dedup: the spec state table', () => {
  it('keeps every version of an entity, each with its own event', async () => {
    const one = (await post('/v1/parties', partyEvent('p-ver', 1))).json();
    const two = (await post('/v1/parties', partyEvent('p-ver', 2))).json();
    expect(two.event_id).not.toBe(one.event_id);
    expect(two.idempotent_replay).toBe(false);
  });

  it('coalesces identical canonical content onto the ORIGINAL event, whatever the key order and whitespace', async () => {
    const first = await post('/v1/parties', partyEvent('p-dup', 1));
    const before = await counts();
    const event = partyEvent('p-dup', 1);
    const reordered = `{\n  "data": ${JSON.stringify(event.data, null, 3)},\n "sequence": 1, "occurred_at": "${event.occurred_at}",  "schema_version": "2026-09-01", "external_id": "p-dup"}`;
    const again = await post('/v1/parties', reordered);
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual({ ...first.json(), idempotent_replay: true });
    expect(await counts()).toEqual(before);
  });

  it('refuses the same sequence with different content: 409 at event.sequence, nothing overwritten', async () => {
    await post('/v1/parties', partyEvent('p-conf', 4));
    const { rows: [stored] } = await api.db.pool.query('SELECT content_hash, raw_event FROM inbox_events WHERE external_id = $1', ['p-conf']);
    const changed = partyEvent('p-conf', 4);
    changed.data.status = 'closed';
    const res = await post('/v1/parties', changed);
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('svc:sequence/conflict');
    expect(res.json().errors).toEqual([{ path: 'event.sequence', code: 'svc:sequence/conflict', message: expect.any(String) }]);
    const { rows: [after] } = await api.db.pool.query('SELECT content_hash, raw_event FROM inbox_events WHERE external_id = $1', ['p-conf']);
    expect(after).toEqual(stored);
  });

  it('refuses any differing resubmission of a fact: 409 at event.external_id', async () => {
    await post('/v1/movements', movementEvent('m-conf'));
    const changed = movementEvent('m-conf');
    changed.data.amount.value = '12551';
    const res = await post('/v1/movements', changed);
    expect(res.statusCode).toBe(409);
    expect(res.json().errors[0].path).toBe('event.external_id');
  });

  it('lets exactly one of two concurrent different submissions of one key win', async () => {
    for (let round = 0; round < 5; round++) {
      const a = partyEvent(`p-race-${round}`, 1);
      const b = partyEvent(`p-race-${round}`, 1);
      b.data.status = 'other';
      const results = await Promise.all([post('/v1/parties', a), post('/v1/parties', b)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([202, 409]);
    }
  });
});

describe('Idempotency-Key', () => {
  it('replays the stored response verbatim with Idempotent-Replayed, processing nothing twice', async () => {
    const first = await post('/v1/movements', movementEvent('m-idem'), { 'Idempotency-Key': 'key-1' });
    expect(first.statusCode).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const before = await counts();
    const again = await post('/v1/movements', movementEvent('m-idem'), { 'Idempotency-Key': 'key-1' });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await counts()).toEqual(before);
  });

  it('refuses the same key with a different body: 409 svc:idempotency/key_conflict', async () => {
    await post('/v1/movements', movementEvent('m-idem-2'), { 'Idempotency-Key': 'key-2' });
    const res = await post('/v1/movements', movementEvent('m-idem-other'), { 'Idempotency-Key': 'key-2' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('svc:idempotency/key_conflict');
  });

  it('scopes the key to the route, however its path is spelled', async () => {
    const first = await post('/v1/%6dovements', movementEvent('m-idem-3'), { 'Idempotency-Key': 'key-3' });
    expect(first.statusCode, first.body).toBe(202);
    const replay = await post('/v1/movements', movementEvent('m-idem-3'), { 'Idempotency-Key': 'key-3' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const res = await post('/v1/movements', movementEvent('m-idem-other-3'), { 'Idempotency-Key': 'key-3' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('svc:idempotency/key_conflict');
  });

  it('makes 20 concurrent requests with one key wait and replay: identical receipts, one set of rows', async () => {
    const before = await counts();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => post('/v1/movements', movementEvent('m-idem-race'), { 'Idempotency-Key': 'key-race' })),
    );
    expect(results.every((r) => r.statusCode === 202)).toBe(true);
    expect(new Set(results.map((r) => r.body)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    const after = await counts();
    expect(after.inbox - before.inbox).toBe(1);
    expect(after.outbox - before.outbox).toBe(1);
  });

  it('scopes the key to the endpoint, and coalesces the same event under another key onto the original', async () => {
    const first = (await post('/v1/movements', movementEvent('m-idem-scope'), { 'Idempotency-Key': 'key-scope' })).json();
    const batch = await post('/v1/batches', { events: [{ object: 'movement', event: movementEvent('m-idem-scope') }] }, { 'Idempotency-Key': 'key-scope' });
    expect(batch.statusCode).toBe(202);
    expect(batch.json().results[0].receipt).toEqual({ ...first, idempotent_replay: true });
    const otherKey = await post('/v1/movements', movementEvent('m-idem-scope'), { 'Idempotency-Key': 'key-other' });
    expect(otherKey.json()).toEqual({ ...first, idempotent_replay: true });
    expect(otherKey.headers['idempotent-replayed']).toBeUndefined();
  });

  it('treats a key reused after retention as new', async () => {
    await post('/v1/movements', movementEvent('m-idem-old'), { 'Idempotency-Key': 'key-old' });
    api.clock.advance(24 * 3600 + 1);
    const res = await post('/v1/movements', movementEvent('m-idem-new'), { 'Idempotency-Key': 'key-old' });
    expect(res.statusCode).toBe(202);
    expect(res.json().external_id).toBe('m-idem-new');
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keys a batch holding an item past the bounds by that item\'s bytes, never walking it', async () => {
    const deep = (leaf: string) => `{"object":"movement","event":{"external_id":"m-deep","data":{"metadata":${'['.repeat(100_000)}${leaf}${']'.repeat(100_000)}}}}`;
    const body = (leaf: string) => `{"events":[{"object":"movement","event":${JSON.stringify(movementEvent('m-idem-deep'))}},${deep(leaf)}]}`;
    const send = (leaf: string) => api.client.send({ method: 'POST', url: '/v1/batches', body: body(leaf), key: api.keys.ingest, headers: { 'Idempotency-Key': 'key-deep' } });
    const first = await send('1');
    expect(first.statusCode, first.body).toBe(202);
    expect(batchResponseSchema.parse(first.json()).results.map((r) => r.outcome)).toEqual(['accepted', 'rejected']);
    const again = await send('1');
    expect([again.statusCode, again.headers['idempotent-replayed'], again.body]).toEqual([202, 'true', first.body]);
    const other = await send('2');
    expect([other.statusCode, other.json().code]).toEqual([409, 'svc:idempotency/key_conflict']);
  });

  it('refuses a malformed key', async () => {
    const res = await post('/v1/movements', movementEvent('m-idem-bad'), { 'Idempotency-Key': 'x'.repeat(256) });
    expect(res.statusCode).toBe(400);
  });
});

describe('POST /v1/batches', () => {
  it('accepts mixed families in one transaction and reports each item', async () => {
    const bad = movementEvent('b-m-bad');
    bad.data.memo = 'card 4111111111111111';
    const res = await post('/v1/batches', {
      events: [
        { object: 'party', event: partyEvent('b-p') },
        { object: 'account', event: accountEvent('b-a', 'b-p') },
        { object: 'movement', event: movementEvent('b-m') },
        { object: 'movement', event: bad },
        { object: 'movement', event: movementEvent('b-m') },
        { object: 'unicorn', event: {} },
      ],
    });
    expect(res.statusCode).toBe(202);
    const body = batchResponseSchema.parse(res.json());
    expect(body.accepted).toBe(4);
    expect(body.rejected).toBe(2);
    expect(body.results.map((r) => r.outcome)).toEqual(['accepted', 'accepted', 'accepted', 'rejected', 'accepted', 'rejected']);
    const [, , third, fourth, fifth, sixth] = body.results;
    expect(fourth?.problem?.errors[0]?.path).toBe('events.3.event.data.memo');
    expect(fourth?.problem?.code).toBe('svc:validation/pan_detected');
    // A duplicate inside the batch coalesces onto the first.
    expect(fifth?.receipt).toEqual({ ...third?.receipt, idempotent_replay: true });
    expect(sixth?.problem?.errors[0]?.path).toBe('events.5.object');
  });

  it('reports a conflict inside a batch at the item path', async () => {
    await post('/v1/parties', partyEvent('b-conf', 1));
    const changed = partyEvent('b-conf', 1);
    changed.data.status = 'x';
    const res = await post('/v1/batches', { events: [{ object: 'party', event: partyEvent('b-ok', 1) }, { object: 'party', event: changed }] });
    expect(res.statusCode).toBe(202);
    expect(res.json().results[1].problem).toMatchObject({ status: 409, code: 'svc:sequence/conflict', errors: [{ path: 'events.1.event.sequence' }] });
  });

  it('answers 422 with accepted 0 when every item is rejected', async () => {
    const res = await post('/v1/batches', { events: [{ object: 'movement', event: { external_id: 'x' } }] });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ accepted: 0, rejected: 1 });
  });

  it('answers 400 for a missing or empty events array and 413 over 1000', async () => {
    expect((await post('/v1/batches', {})).statusCode).toBe(400);
    expect((await post('/v1/batches', { events: [] })).statusCode).toBe(400);
    const big = await post('/v1/batches', { events: Array.from({ length: 1001 }, (_, i) => ({ object: 'movement', event: movementEvent(`big-${i}`) })) });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('svc:batch/too_large');
    const huge = await post('/v1/batches', { events: Array.from({ length: 100_001 }, () => 0) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('svc:batch/too_large');
  });

  it('accepts 1000 events in one request', async () => {
    const res = await post('/v1/batches', { events: Array.from({ length: 1000 }, (_, i) => ({ object: 'movement', event: movementEvent(`k-${i}`) })) });
    expect(res.statusCode).toBe(202);
    expect(res.json().accepted).toBe(1000);
  });
});

describe('GET /v1/events/{event_id}', () => {
  it('accepts the bare uuid and evt_<uuid>, and 404s unknown, malformed and foreign ids', async () => {
    const receipt = (await post('/v1/parties', partyEvent('p-status'))).json();
    const uuid = receipt.event_id.slice(4);
    expect((await api.client.get(`/v1/events/${uuid}`, api.keys.ingest)).json().event_id).toBe(receipt.event_id);
    const unknown = await api.client.get('/v1/events/evt_00000000-0000-7000-8000-000000000000', api.keys.ingest);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await api.client.get('/v1/events/evt_nonsense', api.keys.ingest)).statusCode).toBe(404);
    await createTenant(api.db.pool, 'other', 'EUR');
    const foreignKey = await api.issue('other', 'ingest');
    expect((await api.client.get(`/v1/events/${receipt.event_id}`, foreignKey)).statusCode).toBe(404);
    expect((await api.client.get(`/v1/events/${receipt.event_id}`, api.keys.read)).statusCode).toBe(403);
  });
});

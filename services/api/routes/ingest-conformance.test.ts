import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { movementEvent, partyEvent } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';

// The ingest routes count what became of every item for conformance drift (decision 0077); the
// counts reach the database every few seconds and when the API closes.
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.db.drop());

const post = (url: string, body: unknown, headers?: Record<string, string>) => api.client.post(url, body, api.keys.ingest, headers);

describe('conformance tallies of the ingest routes', () => {
  it('counts accepted items and refused ones by first finding, once per request answered', async () => {
    const bad = { ...movementEvent('m-bad'), data: { ...movementEvent('m-bad').data, amount: { value: 12, asset: 'USD', scale: 2 } } };
    const batch = { events: [{ object: 'movement', event: movementEvent('m-1') }, { object: 'movement', event: bad }, { object: 'payment', event: {} }, { object: 'party', event: partyEvent('p-1') }] };
    expect((await post('/v1/batches', batch)).statusCode).toBe(202);
    expect((await post('/v1/movements', movementEvent('m-2'))).statusCode).toBe(202);
    expect((await post('/v1/movements', { ...movementEvent('m-2'), occurred_at: '2026-08-31T00:00:00Z' })).statusCode).toBe(409);
    // With an Idempotency-Key: counted when answered, not when replayed.
    const keyed = { events: [{ object: 'movement', event: bad }] };
    expect((await post('/v1/batches', keyed, { 'Idempotency-Key': 'k-1' })).statusCode).toBe(422);
    expect((await post('/v1/batches', keyed, { 'Idempotency-Key': 'k-1' })).headers['idempotent-replayed']).toBe('true');
    await api.app.close();
    const { rows } = await api.db.pool.query(`SELECT family, bucket, code, path, items::int FROM conformance_tallies ORDER BY family, code, path`);
    const bucket = new Date('2026-09-01T12:00:00Z');
    expect(rows).toEqual([
      { family: 'movement', bucket, code: '', path: '', items: 2 },
      { family: 'movement', bucket, code: 'svc:sequence/conflict', path: 'event.external_id', items: 1 },
      { family: 'movement', bucket, code: 'svc:validation/schema', path: 'event.data.amount.value', items: 2 },
      { family: 'party', bucket, code: '', path: '', items: 1 },
    ]);
  });
});

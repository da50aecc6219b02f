import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { movementEvent, partyEvent, VALID_EVENTS } from '../../../test/fixtures/events.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

describe('POST /v1/validate', () => {
  it('answers 200 for a batch of every family, valid', async () => {
    const events = Object.entries(VALID_EVENTS).map(([object, make]) => ({ object, event: make() }));
    const res = await api.client.post('/v1/validate', { events }, api.keys.ingest);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ valid: true, checked: 6, accepted: 6, rejected: 0 });
    expect(body.results[3]).toEqual({ index: 3, outcome: 'valid', object: 'movement', external_id: 'mv-1' });
  });

  it('accepts the read scope and one bare item', async () => {
    const res = await api.client.post('/v1/validate', { object: 'party', event: partyEvent() }, api.keys.read);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ valid: true, checked: 1 });
  });

  it('refuses a credential with neither scope', async () => {
    const res = await api.client.post('/v1/validate', { object: 'party', event: partyEvent() }, api.keys.webhook_mgmt);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('svc:auth/insufficient_scope');
  });

  it('answers 422 with per-item problems and body paths', async () => {
    const bad = movementEvent('mv-bad');
    bad.data.memo = 'card 4111 1111 1111 1111 thanks';
    const res = await api.client.post('/v1/validate', { events: [{ object: 'movement', event: movementEvent() }, { object: 'movement', event: bad }] }, api.keys.ingest);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({ valid: false, checked: 2, accepted: 1, rejected: 1 });
    expect(body.results[1].outcome).toBe('rejected');
    expect(body.results[1].external_id).toBe('mv-bad');
    expect(body.results[1].problem.code).toBe('svc:validation/pan_detected');
    expect(body.results[1].problem.errors).toEqual([
      { path: 'events.1.event.data.memo', code: 'svc:validation/pan_detected', message: expect.any(String) },
    ]);
    expect(JSON.stringify(body)).not.toContain('4111 1111');
  });

  it('answers 413 svc:batch/too_large over 1000 items', async () => {
    const events = Array.from({ length: 1001 }, (_, i) => ({ object: 'movement', event: movementEvent(`mv-${i}`) }));
    const res = await api.client.post('/v1/validate', { events }, api.keys.ingest);
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('svc:batch/too_large');
  });

  it('answers 413 svc:batch/too_large however many items past 1000 (past 100,000 too)', async () => {
    const res = await api.client.post('/v1/validate', { events: Array.from({ length: 100_001 }, () => 0) }, api.keys.ingest);
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('svc:batch/too_large');
  });

  it('answers 400 when events is empty or missing', async () => {
    const empty = await api.client.post('/v1/validate', { events: [] }, api.keys.ingest);
    expect(empty.statusCode).toBe(400);
    expect(empty.json().errors[0].path).toBe('events');
  });

  it('answers 413 svc:request/payload_too_large over the body cap', async () => {
    const res = await api.client.post('/v1/validate', { object: 'party', event: partyEvent(), pad: 'x'.repeat(5 * 1024 * 1024) }, api.keys.ingest);
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('svc:request/payload_too_large');
  });

  it('stores nothing: every table but the nonce ledger is unchanged', async () => {
    const snapshot = async () => {
      const { rows } = await api.db.pool.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'api_nonces' ORDER BY 1`,
      );
      const counts: Record<string, string> = {};
      for (const { table_name } of rows) {
        counts[table_name] = (await api.db.pool.query(`SELECT count(*)::text AS n FROM "${table_name}"`)).rows[0].n;
      }
      return counts;
    };
    const before = await snapshot();
    const events = Object.entries(VALID_EVENTS).map(([object, make]) => ({ object, event: make() }));
    expect((await api.client.post('/v1/validate', { events }, api.keys.ingest)).statusCode).toBe(200);
    expect(await snapshot()).toEqual(before);
  });
});

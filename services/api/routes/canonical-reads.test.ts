import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { canonicalViewSchema, movementPageSchema, postureSchema } from '../../../schemas/responses.ts';
import { accountEvent, movementEvent, partyEvent } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { startTestPipeline, type TestPipeline } from '../../../test/support/test-pipeline.ts';

let api: TestApi;
let run: TestPipeline;
const MOVEMENTS = 137;

beforeAll(async () => {
  api = await startTestApi();
  run = await startTestPipeline(api);
  const events: unknown[] = [
    { object: 'party', event: partyEvent('alice') },
    { object: 'party', event: partyEvent('bob') },
    { object: 'account', event: accountEvent('alice-acct', 'alice') },
    { object: 'account', event: accountEvent('bob-acct', 'bob') },
  ];
  for (let i = 0; i < MOVEMENTS; i++) {
    const mv = movementEvent(`pg-${i}`);
    // Alternate direction; several movements share one instant so the order needs its tiebreak.
    const outgoing = i % 3 !== 0;
    mv.occurred_at = new Date(Date.parse('2026-08-01T00:00:00Z') + Math.floor(i / 4) * 60_000).toISOString();
    mv.data.debit = { account_id: outgoing ? 'alice-acct' : 'bob-acct' };
    mv.data.credit = { account_id: outgoing ? 'bob-acct' : 'alice-acct' };
    delete mv.data.fees;
    events.push({ object: 'movement', event: mv });
  }
  const res = await api.client.post('/v1/batches', { events }, api.keys.ingest);
  expect(res.json().accepted).toBe(events.length);
  await run.drain();
});
afterAll(async () => {
  await run?.stop();
  await api?.close();
});

const read = (path: string) => api.client.get(path, api.keys.read);

async function pages(query: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const res = await read(`/v1/parties/alice/movements?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = movementPageSchema.parse(res.json());
    seen.push(...body.data.map((m) => m.external_id));
    if (!body.has_more) {
      expect(body.next_cursor).toBeUndefined();
      return seen;
    }
    cursor = body.next_cursor;
  }
  throw new Error('too many pages');
}

describe('GET /v1/parties/{id}/movements', () => {
  it('returns every movement exactly once across pages, newest first', async () => {
    const all = await pages('limit=10');
    expect(all).toHaveLength(MOVEMENTS);
    expect(new Set(all).size).toBe(MOVEMENTS);
    const first = (await read('/v1/parties/alice/movements?limit=3')).json();
    expect(first.data).toHaveLength(3);
    expect(Date.parse(first.data[0].occurred_at)).toBeGreaterThanOrEqual(Date.parse(first.data[2].occurred_at));
    expect((await read('/v1/parties/alice/movements')).json().data).toHaveLength(50);
  });

  it('filters by direction (resolved through the account holder) and by time', async () => {
    const incoming = await pages('direction=in&limit=200');
    const outgoing = await pages('direction=out&limit=7');
    expect(incoming.length + outgoing.length).toBe(MOVEMENTS);
    expect(incoming.every((id) => Number(id.slice(3)) % 3 === 0)).toBe(true);
    const window = await pages('from=2026-08-01T00:05:00Z&to=2026-08-01T00:09:59Z&limit=2');
    expect(window.sort()).toEqual(['pg-20', 'pg-21', 'pg-22', 'pg-23', 'pg-24', 'pg-25', 'pg-26', 'pg-27', 'pg-28', 'pg-29', 'pg-30', 'pg-31', 'pg-32', 'pg-33', 'pg-34', 'pg-35', 'pg-36', 'pg-37', 'pg-38', 'pg-39'].sort());
  });

  it('reads a window written with any RFC 3339 offset as the same instants, across pages', async () => {
    // PostgreSQL itself refuses offsets past ±15:59; these are the window above, written far east and west.
    const east = await pages(`from=${encodeURIComponent('2026-08-01T23:35:00+23:30')}&to=${encodeURIComponent('2026-07-31T04:09:59-20:00')}&limit=2`);
    const utc = await pages('from=2026-08-01T00:05:00Z&to=2026-08-01T00:09:59Z&limit=2');
    expect(east).toHaveLength(20);
    expect(east).toEqual(utc);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['direction=sideways', 'direction'],
    ['from=2026-08-01', 'from'],
    ['to=yesterday', 'to'],
    ['from=2026-08-02T00:00:00Z&to=2026-08-01T00:00:00Z', 'from'],
    ['cursor=not-a-cursor', 'cursor'],
  ])('answers 400 for %s', async (query, path) => {
    const res = await read(`/v1/parties/alice/movements?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().errors[0].path).toBe(path);
  });

  it('refuses an edited cursor, and a cursor reused with other filters', async () => {
    const cursor = (await read('/v1/parties/alice/movements?limit=5')).json().next_cursor as string;
    const [body, sig] = cursor.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    payload.o = '2030-01-01 00:00:00+00';
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
    expect((await read(`/v1/parties/alice/movements?limit=5&cursor=${encodeURIComponent(forged)}`)).statusCode).toBe(400);
    expect((await read(`/v1/parties/alice/movements?limit=5&direction=in&cursor=${encodeURIComponent(cursor)}`)).statusCode).toBe(400);
    expect((await read(`/v1/parties/bob/movements?limit=5&cursor=${encodeURIComponent(cursor)}`)).statusCode).toBe(400);
  });
});

describe('single reads', () => {
  it('answers the current party, account and movement', async () => {
    for (const path of ['/v1/parties/alice', '/v1/accounts/alice-acct', '/v1/movements/pg-1']) canonicalViewSchema.parse((await read(path)).json());
    expect((await read('/v1/parties/alice')).json()).toMatchObject({ object: 'party', external_id: 'alice', type: 'person', sequence: 1, version_count: 1 });
    expect((await read('/v1/accounts/alice-acct')).json()).toMatchObject({ object: 'account', holder_party_id: 'alice' });
    expect((await read('/v1/movements/pg-1')).json()).toMatchObject({ external_id: 'pg-1', amount: { value: '12550', asset: 'USD', scale: 2 }, parties: { debit: 'alice', credit: 'bob' } });
  });

  it('reads back an external id of 256 characters through every route that names one, after authentication', async () => {
    // Characters outside ASCII take several bytes in the path: the router must not count them out.
    const long = `long-${'é'.repeat(120)}${'x'.repeat(131)}`;
    expect(long).toHaveLength(256);
    const events = [
      { object: 'party', event: partyEvent(long) },
      { object: 'account', event: accountEvent(long, long) },
    ];
    expect((await api.client.post('/v1/batches', { events }, api.keys.ingest)).json().accepted).toBe(2);
    await run.drain();
    const id = encodeURIComponent(long);
    for (const path of [`/v1/parties/${id}`, `/v1/accounts/${id}`, `/v1/parties/${id}/movements`, `/v1/posture/parties/${id}`, `/v1/graph/parties/${id}/network`]) {
      const res = await read(path);
      expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
    }
    expect((await read(`/v1/parties/${id}`)).json()).toMatchObject({ external_id: long });
    expect((await read(`/v1/movements/${id}`)).statusCode).toBe(404);
    // Unsigned: the authentication failure comes first, whatever the path.
    expect((await api.app.inject({ method: 'GET', url: `/v1/parties/${id}` })).statusCode).toBe(401);
  });

  it('refuses a direction given twice, as any malformed direction', async () => {
    for (const direction of ['in,in', 'out,out', 'both,both', 'in,out']) {
      const res = await read(`/v1/parties/alice/movements?direction=${direction}`);
      expect(res.statusCode, direction).toBe(400);
      expect(res.json()).toMatchObject({ code: 'svc:request/invalid_parameter', errors: [{ path: 'direction' }] });
    }
  });

  it('answers a governed 404 for unknown ids, and needs the read scope', async () => {
    for (const path of ['/v1/parties/nobody', '/v1/accounts/nobody', '/v1/instruments/nobody', '/v1/movements/nobody', '/v1/parties/nobody/movements', '/v1/posture/parties/nobody']) {
      const res = await read(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.json().code).toBe('svc:resource/not_found');
    }
    expect((await api.client.get('/v1/parties/alice', api.keys.ingest)).statusCode).toBe(403);
  });

  it('never shows one tenant the data of another', async () => {
    await createTenant(api.db.pool, 'intruder', 'USD');
    const key = await api.issue('intruder', 'read');
    for (const path of ['/v1/parties/alice', '/v1/accounts/alice-acct', '/v1/movements/pg-1', '/v1/parties/alice/movements', '/v1/posture/parties/alice']) {
      expect((await api.client.get(path, key)).statusCode, path).toBe(404);
    }
  });

  it('answers posture honestly as unknown, with no reasons', async () => {
    const posture = postureSchema.parse((await read('/v1/posture/parties/alice')).json());
    expect(posture).toEqual({ external_id: 'alice', band: 'unknown', computed_at: null, staleness_seconds: null, coverage: 'none' });
  });

  it('answers the band detection computed, how stale it is and the coverage behind it, and nothing more', async () => {
    const pool = api.db.pool;
    const setBand = (band: string) =>
      pool.query(
        `INSERT INTO party_postures (tenant_id, party_id, band, computed_at, evaluated_at) VALUES ('acme', 'alice', $1, $2, $2)
         ON CONFLICT (tenant_id, party_id) DO UPDATE SET band = EXCLUDED.band, computed_at = EXCLUDED.computed_at`,
        [band, new Date(api.clock.now().getTime() - 3_600_500)],
      );
    const setFeed = (tenant: string, state: 'active' | 'degraded') =>
      pool.query(
        `INSERT INTO feed_coverage (tenant_id, family, last_received_at, last_occurred_at, state, state_changed_at) VALUES ($1, 'movement', $2, $2, $3, $2)
         ON CONFLICT (tenant_id, family) DO UPDATE SET state = EXCLUDED.state`,
        [tenant, api.clock.now(), state],
      );
    const posture = async () => postureSchema.parse((await read('/v1/posture/parties/alice')).json());
    const computedAt = new Date(api.clock.now().getTime() - 3_600_500).toISOString();
    try {
      await setBand('high');
      expect(await posture()).toEqual({ external_id: 'alice', band: 'high', computed_at: computedAt, staleness_seconds: 3600, coverage: 'complete' });
      await setBand('low');
      expect(await posture()).toMatchObject({ band: 'low', coverage: 'complete' });
      await setBand('incomplete');
      expect(await posture()).toMatchObject({ band: 'incomplete', coverage: 'partial' });
      // A silent feed elsewhere changes nothing here; an active feed of our own neither.
      await setFeed('intruder', 'degraded');
      await setFeed('acme', 'active');
      await setBand('low');
      expect(await posture()).toMatchObject({ band: 'low', coverage: 'complete' });
      // A silent feed of our own: the coverage says so; the band stays the one risk_state.changed
      // announced, so a client mirroring posture from webhooks reads the same band.
      await setFeed('acme', 'degraded');
      expect(await posture()).toMatchObject({ band: 'low', coverage: 'degraded' });
      await setBand('critical');
      expect(await posture()).toEqual({ external_id: 'alice', band: 'critical', computed_at: computedAt, staleness_seconds: 3600, coverage: 'degraded' });
      // A later evaluation that left the band as it was confirmed it: computed as of then.
      const confirmedAt = new Date(api.clock.now().getTime() - 60_000);
      await pool.query(
        `INSERT INTO subject_evaluations (tenant_id, subject_kind, subject_id, mode, ruleset_version, event_at, fact_at, evaluated_at, outcomes)
         VALUES ('acme', 'party', 'alice', 'live', 0, $1, $1, $1, '{}')`,
        [confirmedAt],
      );
      expect(await posture()).toEqual({ external_id: 'alice', band: 'critical', computed_at: confirmedAt.toISOString(), staleness_seconds: 60, coverage: 'degraded' });
      // bob has never been looked at.
      expect(await read('/v1/posture/parties/bob').then((r) => r.json())).toMatchObject({ band: 'unknown', coverage: 'none', computed_at: null, staleness_seconds: null });
    } finally {
      await pool.query(`DELETE FROM subject_evaluations WHERE subject_id = 'alice'`);
      await pool.query(`DELETE FROM party_postures WHERE party_id = 'alice'`);
      await pool.query('DELETE FROM feed_coverage');
    }
  });
});

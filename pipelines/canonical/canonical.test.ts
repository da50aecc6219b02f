import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRateFile } from '../../platform/fx/rate-files.ts';
import { eventStatusSchema } from '../../schemas/responses.ts';
import { createTenant } from '../../platform/tenants/tenants.ts';
import { accountEvent, controlEventEvent, movementEvent, partyEvent, relationshipEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { startTestPipeline, type TestPipeline } from '../../test/support/test-pipeline.ts';
import { quarantineOverdue } from './event-status.ts';

let api: TestApi;
let run: TestPipeline;
beforeAll(async () => {
  api = await startTestApi();
  run = await startTestPipeline(api);
});
afterAll(async () => {
  await run?.stop();
  await api?.close();
});

const ingest = async (path: string, event: unknown) => {
  const res = await api.client.post(path, event, api.keys.ingest);
  expect(res.statusCode, res.body).toBe(202);
  return res.json().event_id as string;
};
const status = async (eventId: string) => eventStatusSchema.parse((await api.client.get(`/v1/events/${eventId}`, api.keys.ingest)).json());
const read = (path: string) => api.client.get(path, api.keys.read);

describe('references: out-of-order arrival', () => {
  it('holds a movement whose accounts have not arrived, and releases it when they do', async () => {
    const movement = movementEvent('ooo-m');
    movement.data.debit = { account_id: 'ooo-a1', party_id: 'ooo-p1' };
    movement.data.credit = { account_id: 'ooo-a2', party_id: 'ooo-p2', counterparty: { institution: 'Bank B', country: 'US' } };
    const movementId = await ingest('/v1/movements', movement);
    await run.drain();
    const held = await status(movementId);
    expect(held.status).toBe('held');
    expect(held.terminal_at).toBeNull();
    expect(held.stage_history.map((s) => `${s.stage}/${s.status}`)).toEqual(['received/ok', 'canonical/held']);
    expect(held.stage_history[1]?.detail?.missing).toHaveLength(4);
    expect((await read('/v1/movements/ooo-m')).statusCode).toBe(404);

    await ingest('/v1/parties', partyEvent('ooo-p1'));
    await ingest('/v1/parties', partyEvent('ooo-p2'));
    await ingest('/v1/accounts', accountEvent('ooo-a1', 'ooo-p1'));
    await run.drain();
    expect((await status(movementId)).status).toBe('held');
    await ingest('/v1/accounts', accountEvent('ooo-a2', 'ooo-p2'));
    await run.drain();

    const released = await status(movementId);
    expect(released.status).toBe('processed');
    expect(released.terminal_at).not.toBeNull();
    expect(released.stage_history.map((s) => `${s.stage}/${s.status}`)).toEqual(['received/ok', 'canonical/held', 'canonical/ok']);
    const view = (await read('/v1/movements/ooo-m')).json();
    expect(view.parties).toEqual({ debit: 'ooo-p1', credit: 'ooo-p2' });
  });

  it('quarantines after 15 minutes held (injected clock), and a later arrival still releases it', async () => {
    const event = controlEventEvent('q-ce');
    event.data.subject = { kind: 'party', external_id: 'q-party' };
    const id = await ingest('/v1/control-events', event);
    await run.drain();
    expect((await status(id)).status).toBe('held');
    api.clock.advance(14 * 60);
    expect(await run.pipeline.sweep()).toBe(0);
    api.clock.advance(61);
    expect(await run.pipeline.sweep()).toBe(1);
    const quarantined = await status(id);
    expect(quarantined.status).toBe('quarantined');
    expect(quarantined.status_reason).toEqual({ code: 'referential_exception', held_since: quarantined.received_at, missing: [{ object: 'party', external_id: 'q-party' }] });
    expect(quarantined.stage_history.at(-1)).toMatchObject({ stage: 'quarantine', status: 'quarantined' });

    await ingest('/v1/parties', partyEvent('q-party'));
    await run.drain();
    const released = await status(id);
    expect(released.status).toBe('processed');
    expect(released.status_reason).toBeNull();
  });

  it('quarantines overdue holds a bounded batch per statement, oldest first, until none is left', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const event = controlEventEvent(`qb-ce-${n}`);
      event.data.subject = { kind: 'party', external_id: `qb-party-${n}` };
      ids.push(await ingest('/v1/control-events', event));
      api.clock.advance(1);
    }
    await run.drain();
    api.clock.advance(16 * 60);
    let statements = 0;
    const counting = { query: (...args: Parameters<typeof api.db.pool.query>) => (statements++, api.db.pool.query(...args)) } as unknown as typeof api.db.pool;
    expect(await quarantineOverdue(counting, api.clock.now(), 'test', 2)).toBe(3);
    expect(statements).toBe(2);
    expect(await Promise.all(ids.map(async (id) => (await status(id)).status))).toEqual(['quarantined', 'quarantined', 'quarantined']);
  });
});

describe('entity versions', () => {
  it('slots versions by sequence: a late lower sequence becomes history, never current', async () => {
    const v3 = partyEvent('seq-p', 3);
    v3.data.status = 'v3';
    const v1 = partyEvent('seq-p', 1);
    v1.data.status = 'v1';
    const v2 = partyEvent('seq-p', 2);
    v2.data.status = 'v2';
    await ingest('/v1/parties', v3);
    await run.drain();
    await ingest('/v1/parties', v1);
    await ingest('/v1/parties', v2);
    await run.drain();
    const view = (await read('/v1/parties/seq-p')).json();
    expect(view).toMatchObject({ external_id: 'seq-p', status: 'v3', sequence: 3, version_count: 3 });
    const v4 = partyEvent('seq-p', 4);
    v4.data.status = 'v4';
    await ingest('/v1/parties', v4);
    await run.drain();
    expect((await read('/v1/parties/seq-p')).json()).toMatchObject({ status: 'v4', sequence: 4, version_count: 4 });
  });

  it('holds a relationship until both ends exist', async () => {
    const rel = relationshipEvent('rel-hold');
    rel.data.from = { kind: 'party', external_id: 'rel-a' };
    rel.data.to = { kind: 'party', external_id: 'rel-b' };
    const id = await ingest('/v1/relationships', rel);
    await ingest('/v1/parties', partyEvent('rel-a'));
    await run.drain();
    expect((await status(id)).status).toBe('held');
    await ingest('/v1/parties', partyEvent('rel-b'));
    await run.drain();
    expect((await status(id)).status).toBe('processed');
  });
});

describe('identifiers are keyed hashes', () => {
  it('never shows or stores the raw value, and equal values hash equally within a tenant only', async () => {
    const a = partyEvent('hash-a');
    a.data.identifiers = [{ type: 'email', value: 'Shared@Example.com', verification_status: 'verified' }];
    const b = partyEvent('hash-b');
    b.data.identifiers = [{ type: 'email', value: 'shared@example.com', verification_status: 'verified' }];
    await ingest('/v1/parties', a);
    await ingest('/v1/parties', b);
    await createTenant(api.db.pool, 'hash-other', 'USD');
    const otherKey = await api.issue('hash-other', 'ingest');
    expect((await api.client.post('/v1/parties', a, otherKey)).statusCode).toBe(202);
    await run.drain();

    const viewA = (await read('/v1/parties/hash-a')).json();
    const viewB = (await read('/v1/parties/hash-b')).json();
    expect(viewA.identifiers[0]).toEqual({ type: 'email', value_hash: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/), verification_status: 'verified' });
    expect(viewA.identifiers[0].value_hash).toBe(viewB.identifiers[0].value_hash);
    expect(JSON.stringify(viewA)).not.toMatch(/example\.com/i);
    const { rows } = await api.db.pool.query(
      `SELECT tenant_id, data FROM canonical_entities WHERE external_id = 'hash-a'`,
    );
    expect(rows).toHaveLength(2);
    expect(rows[0].data.identifiers[0].value_hash).not.toBe(rows[1].data.identifiers[0].value_hash);
    const everything = await api.db.pool.query(`SELECT count(*)::int AS n FROM canonical_entity_versions WHERE data::text ILIKE '%example.com%'`);
    expect(everything.rows[0].n).toBe(0);
  });

  it('hashes device_ref and ip on movements and instrument identifiers', async () => {
    await ingest('/v1/parties', partyEvent('dev-p'));
    await ingest('/v1/instruments', { ...(await import('../../test/fixtures/events.ts')).instrumentEvent('dev-i'), data: { type: 'card_token', status: 'active', first_seen_at: '2025-02-01T00:00:00Z', masked_identifier: '411111******1111', fingerprint: 'fp-123' } });
    const mv = movementEvent('dev-m');
    mv.data.debit = { party_id: 'dev-p' };
    mv.data.credit = { counterparty: { institution: 'X' } };
    mv.data.device_ref = 'device-42';
    mv.data.instrument_ref = 'dev-i';
    await ingest('/v1/movements', mv);
    await run.drain();
    const view = (await read('/v1/movements/dev-m')).json();
    expect(view.device_ref).toBeUndefined();
    expect(view.ip).toBeUndefined();
    expect(view.device_ref_hash).toMatch(/^hmac-sha256:/);
    expect(view.ip_hash).toMatch(/^hmac-sha256:/);
    const inst = (await read('/v1/instruments/dev-i')).json();
    expect(inst.masked_identifier).toBeUndefined();
    expect(inst.fingerprint).toBeUndefined();
    expect(inst.fingerprint_hash).toMatch(/^hmac-sha256:/);
  });
});

describe('FX normalisation', () => {
  it('normalises to the base asset with complete provenance, and says so when no rate exists', async () => {
    const loaded = await loadRateFile(api.db.pool, 'rates.csv', 'base,quote,rate,rate_scale,valid_from\nEUR,USD,1.0825,4,2026-08-01T00:00:00Z\nEUR,USD,1.1000,4,2026-09-02T23:30:00+23:30\n', api.clock.now());
    expect(loaded.kind).toBe('loaded');
    await ingest('/v1/parties', partyEvent('fx-p'));
    const eur = movementEvent('fx-eur');
    eur.data.amount = { value: '10000', asset: 'EUR', scale: 2 };
    eur.data.debit = { party_id: 'fx-p' };
    eur.data.credit = { counterparty: { institution: 'X' } };
    delete eur.data.fees;
    const gbp = { ...eur, external_id: 'fx-gbp', data: { ...eur.data, amount: { value: '500', asset: 'GBP', scale: 2 } } };
    const usd = { ...eur, external_id: 'fx-usd', data: { ...eur.data, amount: { value: '500', asset: 'USD', scale: 2 } } };
    await ingest('/v1/movements', eur);
    await ingest('/v1/movements', gbp);
    await ingest('/v1/movements', usd);
    await run.drain();

    const view = (await read('/v1/movements/fx-eur')).json();
    expect(view.amount).toEqual({ value: '10000', asset: 'EUR', scale: 2 });
    expect(view.normalization).toEqual({ status: 'normalized' });
    expect(view.normalized_amount).toEqual({
      value: '10825',
      asset: 'USD',
      scale: 2,
      fx: {
        base: 'EUR',
        quote: 'USD',
        rate: '1.0825',
        rate_scale: 4,
        direction: 'direct',
        rate_file_id: (loaded as { fileId: string }).fileId,
        rate_valid_from: '2026-08-01T00:00:00.000Z',
        computed_at: expect.any(String),
      },
    });
    const none = (await read('/v1/movements/fx-gbp')).json();
    expect(none.normalized_amount).toBeNull();
    expect(none.normalization).toEqual({ status: 'unavailable', reason: 'no_rate', pair: 'GBP/USD', at: new Date(eur.occurred_at).toISOString() });
    expect((await read('/v1/movements/fx-usd')).json()).toMatchObject({ normalized_amount: null, normalization: { status: 'not_needed' } });
  });
});

describe('canonical change records', () => {
  const changesOf = async (eventId: string) =>
    (
      await api.db.pool.query<{ topic: string; partition_key: string; payload: string }>(
        `SELECT topic, partition_key, payload FROM outbox WHERE stream = 'canonical' AND event_id = $1`,
        [eventId.replace(/^evt_/, '')],
      )
    ).rows.map((r) => ({ topic: r.topic, key: r.partition_key, change: JSON.parse(r.payload) }));

  it('publishes one record per processed event, in the transaction that made it canonical', async () => {
    const party = await ingest('/v1/parties', partyEvent('cr-p1'));
    await ingest('/v1/parties', partyEvent('cr-p2'));
    const account = accountEvent('cr-a1', 'cr-p1');
    account.data.jurisdiction = 'GB';
    const accountId = await ingest('/v1/accounts', account);
    const mv = movementEvent('cr-m');
    mv.data.debit = { account_id: 'cr-a1' };
    mv.data.credit = { party_id: 'cr-p2', counterparty: { institution: 'Bank B', country: 'NG' } };
    const movementId = await ingest('/v1/movements', mv);
    const older = await ingest('/v1/parties', { ...partyEvent('cr-p1', 0), occurred_at: '2026-09-01T11:00:00Z' });
    await run.drain();

    const [partyRecord] = await changesOf(party);
    expect(partyRecord).toMatchObject({ topic: 'canonical.party', key: 'acme/party/cr-p1', change: { object: 'party', external_id: 'cr-p1', sequence: 1, current: true } });
    // Identifying values travel only as keyed hashes, as in the canonical model.
    expect(JSON.stringify(partyRecord!.change)).not.toContain('ada@example.com');
    expect(partyRecord!.change.data.identifiers[0].value_hash).toMatch(/^hmac-sha256:/);
    // A late lower sequence is published too, as a version that is not current.
    expect((await changesOf(older))[0]!.change).toMatchObject({ sequence: 0, current: false });
    expect((await changesOf(accountId))[0]!.change).toMatchObject({ object: 'account', current: true, data: { holder_party_id: 'cr-p1' } });

    const [movement] = await changesOf(movementId);
    expect(movement).toMatchObject({
      topic: 'canonical.movement',
      key: 'acme/account/cr-a1',
      change: {
        object: 'movement',
        event_id: movementId.replace(/^evt_/, ''),
        external_id: 'cr-m',
        type: 'p2p',
        status: 'completed',
        amount: { value: '12550', asset: 'USD', scale: 2 },
        base_amount: { value: '12550', asset: 'USD', scale: 2 },
        // The debit party is the account's holder; countries come from the counterparty, else the jurisdiction.
        debit: { account_id: 'cr-a1', party_id: 'cr-p1', country: 'GB' },
        credit: { account_id: null, party_id: 'cr-p2', country: 'NG' },
      },
    });
    expect(movement!.change.data.ip_hash).toMatch(/^hmac-sha256:/);
    expect(movement!.change.data.ip).toBeUndefined();
  });

  // Decision 0051: a fact's data is kept as the pipeline wrote it, not rebuilt into jsonb (which
  // would reorder its members and respace it).
  it("stores a fact's data as the text of its change record's data", async () => {
    await ingest('/v1/parties', partyEvent('cr-text-p1'));
    await ingest('/v1/parties', partyEvent('cr-text-p2'));
    const mv = movementEvent('cr-text-m');
    mv.data.debit = { party_id: 'cr-text-p1' };
    mv.data.credit = { party_id: 'cr-text-p2' };
    const movementId = await ingest('/v1/movements', mv);
    const controlEvent = controlEventEvent('cr-text-c');
    controlEvent.data.subject = { kind: 'party', external_id: 'cr-text-p1' };
    const control = await ingest('/v1/control-events', controlEvent);
    await run.drain();
    for (const [eventId, table] of [[movementId, 'canonical_movements'], [control, 'canonical_control_events']] as const) {
      const id = eventId.replace(/^evt_/, '');
      const { rows } = await api.db.pool.query<{ stored: string; payload: string }>(
        `SELECT f.data::text AS stored, o.payload FROM ${table} f JOIN outbox o ON o.stream = 'canonical' AND o.event_id = f.event_id WHERE f.event_id = $1`,
        [id],
      );
      expect(rows).toHaveLength(1);
      const { stored, payload } = rows[0]!;
      expect(payload.endsWith(`,"data":${stored}}`), `${table}: ${stored}`).toBe(true);
      expect(stored.startsWith('{"type":')).toBe(true);
    }
  });
});

describe('idempotence', () => {
  it('processing the same records again changes nothing', async () => {
    await ingest('/v1/parties', partyEvent('idem-p'));
    const mv = movementEvent('idem-m');
    mv.data.debit = { party_id: 'idem-p' };
    mv.data.credit = { party_id: 'idem-p' };
    await ingest('/v1/movements', mv);
    await run.drain();
    const snapshot = async () =>
      (
        await api.db.pool.query(`SELECT
          (SELECT count(*) FROM event_stages)::int AS stages,
          (SELECT count(*) FROM canonical_entity_versions)::int AS versions,
          (SELECT count(*) FROM canonical_movements)::int AS movements,
          (SELECT count(*) FROM outbox WHERE stream = 'canonical')::int AS change_records,
          (SELECT string_agg(status || attempts, ',' ORDER BY event_id) FROM inbox_events) AS statuses`)
      ).rows[0];
    const before = await snapshot();
    const { rows } = await api.db.pool.query(
      `SELECT o.topic, o.partition, o.position::text, o.partition_key, i.raw_event, i.tenant_id, i.event_id, i.object, i.received_at
         FROM outbox o JOIN inbox_events i USING (tenant_id, event_id) WHERE o.stream = 'inbox' ORDER BY o.position`,
    );
    const records = rows.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      offset: r.position,
      key: r.partition_key,
      value: r.raw_event,
      headers: { tenant_id: r.tenant_id, event_id: r.event_id, object: r.object, received_at: r.received_at.toISOString() },
    }));
    await run.pipeline.processor.handle(records);
    expect(await snapshot()).toEqual(before);
  });
});

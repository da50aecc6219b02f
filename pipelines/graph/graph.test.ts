import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { PostgresGraphStore } from '../../platform/graph/postgres/store.ts';
import type { NodeRef } from '../../platform/graph/port.ts';
import { accountEvent, movementEvent, partyEvent, relationshipEvent } from '../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../test/support/test-api.ts';
import { drain, startTestPipeline, type TestPipeline } from '../../test/support/test-pipeline.ts';
import { CANONICAL, GRAPH } from '../groups.ts';
import { startGraphPipeline, type GraphPipeline } from './pipeline.ts';
import { systemClock } from '../../platform/clock.ts';

// Events in August 2026: before the test clock (2026-09-01T12:00:00Z), as event time must be.
const AUGUST = (d: number) => `2026-08-${String(d).padStart(2, '0')}T10:00:00Z`;

let api: TestApi;
let run: TestPipeline;
let bus: PostgresLogBus;
let graph: GraphPipeline | undefined;
let store: PostgresGraphStore;
const errors: unknown[] = [];

beforeAll(async () => {
  api = await startTestApi();
  run = await startTestPipeline(api);
  bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
  store = new PostgresGraphStore(api.db.pool);
  graph = await startGraphPipeline({ bus, store, pool: api.db.pool, clock: systemClock });
});
afterAll(async () => {
  await graph?.stop();
  await run?.stop();
  await api?.close();
});

const ingest = async (path: string, event: unknown) => {
  const res = await api.client.post(path, event, api.keys.ingest);
  expect(res.statusCode, res.body).toBe(202);
};
const settle = async () => {
  await run.drain();
  await drain(bus, errors, [CANONICAL, GRAPH]);
};

const party = (key: string): NodeRef => ({ kind: 'party', key });
const account = (key: string): NodeRef => ({ kind: 'account', key });

const sendParty = (id: string) => {
  const event = { ...partyEvent(id), occurred_at: AUGUST(1) };
  // An e-mail of its own: the only thing parties share below is what the test gives them.
  event.data = { ...event.data, identifiers: [{ type: 'email', value: `${id}@example.com`, verification_status: 'verified' }] };
  return ingest('/v1/parties', event);
};
const sendAccount = (id: string, holder: string) => ingest('/v1/accounts', { ...accountEvent(id, holder), occurred_at: AUGUST(2) });
const sendMovement = (id: string, from: [string, string], to: [string, string], value: string, day: number, seen: { device_ref?: string; ip?: string }) => {
  const event = movementEvent(id);
  return ingest('/v1/movements', {
    ...event,
    occurred_at: AUGUST(day),
    recorded_at: AUGUST(day),
    data: {
      ...event.data,
      amount: { value, asset: 'USD', scale: 2 },
      debit: { account_id: from[0], party_id: from[1] },
      credit: { account_id: to[0], party_id: to[1] },
      ...seen,
    },
  });
};

describe('the graph pipeline, end to end', () => {
  it('builds the network from canonical changes, and a redelivery of every record changes nothing', async () => {
    for (const p of ['g-p1', 'g-p2', 'g-p3']) await sendParty(p);
    await sendAccount('g-a1', 'g-p1');
    await sendAccount('g-a2', 'g-p2');
    await sendAccount('g-a3', 'g-p3');
    const rel = relationshipEvent('g-r1');
    await ingest('/v1/relationships', { ...rel, occurred_at: AUGUST(3), data: { ...rel.data, from: { kind: 'party', external_id: 'g-p1' }, to: { kind: 'party', external_id: 'g-p2' } } });
    await settle();
    // Movements once their accounts are canonical: none waits for a reference.
    await sendMovement('g-m1', ['g-a1', 'g-p1'], ['g-a2', 'g-p2'], '10000', 10, { device_ref: 'dev-shared', ip: '198.51.100.1' });
    await sendMovement('g-m2', ['g-a1', 'g-p1'], ['g-a2', 'g-p2'], '2500', 11, { device_ref: 'dev-shared', ip: '198.51.100.1' });
    await sendMovement('g-m3', ['g-a3', 'g-p3'], ['g-a2', 'g-p2'], '700', 12, { device_ref: 'dev-shared', ip: '198.51.100.3' });
    await settle();

    expect(await store.node('acme', party('g-p1'))).toEqual({ kind: 'party', key: 'g-p1', attrs: { type: 'person', status: 'active', segment: 'consumer' } });
    const ego = await store.egoNetwork('acme', account('g-a1'), { depth: 1, nodeCap: 50 });
    expect(ego.nodes.map((n) => `${n.kind}:${n.key}`)).toEqual(['account:g-a1', 'account:g-a2', 'party:g-p1']);
    const holds = ego.edges.find((e) => e.id === 'holds:party:g-p1>account:g-a1');
    expect(holds).toMatchObject({ type: 'holds', validFrom: new Date('2025-02-01T00:00:00Z'), validTo: null });
    const pair = ego.edges.find((e) => e.id === 'transfer:account:g-a1>account:g-a2');
    expect(pair).toMatchObject({ count: 2, sum: 12_500n, unpriced: 0, firstAt: new Date(AUGUST(10)), lastAt: new Date(AUGUST(11)) });
    expect(pair?.recent?.map((m) => m.movementId)).toEqual(['g-m2', 'g-m1']);

    const p1 = await store.egoNetwork('acme', party('g-p1'), { depth: 1, nodeCap: 50 });
    expect(p1.edges.find((e) => e.id === 'beneficial_owner:party:g-p1>party:g-p2#g-r1')).toMatchObject({
      type: 'beneficial_owner',
      qualifier: 'g-r1',
      validFrom: new Date('2025-01-01T00:00:00Z'),
      attrs: { ownership_pct: 25, source: 'kyc', confidence: 0.9 },
    });
    const sightings = p1.edges.filter((e) => e.type === 'shares' && (e.to.kind === 'device' || e.to.kind === 'ip'));
    expect(sightings.map((e) => [e.to.kind, e.count])).toEqual([
      ['device', 2],
      ['ip', 2],
    ]);
    // Only hashes reach the graph.
    expect(JSON.stringify(p1)).not.toMatch(/dev-shared|198\.51\.100|example\.com/);

    const shared = await store.sharedAttributes('acme', 'g-p1', { limit: 10, until: new Date('2100-01-01T00:00:00Z') });
    expect(shared).toEqual({ shared: [{ via: { kind: 'device', key: expect.stringMatching(/^hmac-sha256:/) }, parties: ['g-p3'] }], truncated: false });
    expect(shared.shared[0]?.via.key).toBe(sightings[0]?.to.key);

    // Every record again, as after a lost offset: the store must recognise each event.
    const before = await store.egoNetwork('acme', party('g-p1'), { depth: 4, nodeCap: 100 });
    await graph!.stop();
    graph = undefined;
    await api.db.pool.query(`DELETE FROM consumer_offsets WHERE group_name = 'graph'`);
    expect((await bus.lag(GRAPH.group, GRAPH.topics)).reduce((n, p) => n + p.records, 0)).toBeGreaterThan(0);
    graph = await startGraphPipeline({ bus, store, pool: api.db.pool, clock: systemClock });
    await drain(bus, errors, [CANONICAL, GRAPH]);
    const after = await store.egoNetwork('acme', party('g-p1'), { depth: 4, nodeCap: 100 });
    expect(after).toEqual(before);
    expect(after.edges.find((e) => e.id === 'transfer:account:g-a1>account:g-a2')).toMatchObject({ count: 2, sum: 12_500n });
    // Each event's stage history shows the graph's part once, redelivery or not.
    const { rows } = await api.db.pool.query<{ events: number; stages: number }>(
      `SELECT count(DISTINCT event_id)::int AS events, count(*) FILTER (WHERE stage = 'graph')::int AS stages
         FROM event_stages WHERE tenant_id = 'acme' AND stage IN ('canonical', 'graph') AND status = 'ok'`,
    );
    expect(rows[0]!.events).toBeGreaterThan(0);
    expect(rows[0]!.stages).toBe(rows[0]!.events);
  });
});

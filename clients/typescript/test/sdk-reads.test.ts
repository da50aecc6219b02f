// The SDK's canonical reads against the real service over 127.0.0.1, with the canonical and graph
// pipelines draining what the SDK ingested: single reads of the four readable families, a party's
// movements across pages, posture and the graph.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresGraphStore } from '../../../platform/graph/postgres/store.ts';
import { startGraphPipeline, type GraphPipeline } from '../../../pipelines/graph/pipeline.ts';
import { CANONICAL, GRAPH } from '../../../pipelines/groups.ts';
import { apiError, startSdkService, type SdkService } from '../../../test/support/sdk-service.ts';
import { drain, startTestPipeline, type TestPipeline } from '../../../test/support/test-pipeline.ts';
import { systemClock } from '../../../platform/clock.ts';
import {
  type AccountEvent,
  type BatchItem,
  type BatchResponse,
  type InstrumentEvent,
  type MovementEvent,
  type MovementPage,
  type MovementView,
  type PartyEvent,
  type SvcClient,
  type WithResponse,
} from '../src/index.ts';

let svc: SdkService;
let run: TestPipeline;
let graph: GraphPipeline;
let read: SvcClient;
let ingested: WithResponse<BatchResponse>;

// A party whose external_id needs encoding in a path: each character must reach the service as
// part of the one segment.
// Also the characters encodeURIComponent leaves as they are (! ' ( ) *), and + and a space, which
// a query must not confuse.
const ODD_ID = "ops/team #1?x=ü&y=%41 +!'()*";
const MOVEMENTS = 11;

const party = (id: string): PartyEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: '2026-07-01T00:00:00Z',
  sequence: 1,
  data: { type: 'person', status: 'active', created_at: '2025-01-15T09:30:00Z' },
});
const account = (id: string, holder: string): AccountEvent => ({
  external_id: id,
  schema_version: '2026-09-01',
  occurred_at: '2026-07-01T00:00:00Z',
  sequence: 1,
  data: { type: 'wallet', holder_party_id: holder, asset: 'USD', status: 'active', opened_at: '2025-02-01T00:00:00Z' },
});
const instrument: InstrumentEvent = {
  external_id: 'card-1',
  schema_version: '2026-09-01',
  occurred_at: '2026-07-01T00:00:00Z',
  sequence: 1,
  data: { type: 'card_token', status: 'active', first_seen_at: '2025-02-01T00:00:00Z', country: 'US' },
};
// pg-0 .. pg-10 a minute apart between alice and bob; every third one comes in to alice.
const transfer = (i: number): MovementEvent => {
  const incoming = i % 3 === 0;
  return {
    external_id: `pg-${i}`,
    schema_version: '2026-09-01',
    occurred_at: new Date(Date.parse('2026-08-01T00:00:00Z') + i * 60_000).toISOString(),
    data: {
      type: 'p2p',
      status: 'completed',
      amount: { value: String(1000 + i), asset: 'USD', scale: 2 },
      debit: { account_id: incoming ? 'bob-acct' : 'alice-acct' },
      credit: { account_id: incoming ? 'alice-acct' : 'bob-acct' },
    },
  };
};

beforeAll(async () => {
  svc = await startSdkService();
  run = await startTestPipeline(svc.api);
  graph = await startGraphPipeline({ bus: run.bus, store: new PostgresGraphStore(svc.api.db.pool), pool: svc.api.db.pool, clock: systemClock });
  read = svc.client('read');
  const toCarol: MovementEvent = { ...transfer(100), external_id: 'to-carol' };
  toCarol.data = { ...toCarol.data, debit: { account_id: 'bob-acct' }, credit: { account_id: 'carol-acct' } };
  const events: BatchItem[] = [
    ...['alice', 'bob', 'carol', 'dave', ODD_ID].map((id): BatchItem => ({ object: 'party', event: party(id) })),
    { object: 'account', event: account('alice-acct', 'alice') },
    { object: 'account', event: account('bob-acct', 'bob') },
    { object: 'account', event: account('carol-acct', 'carol') },
    { object: 'instrument', event: instrument },
    ...Array.from({ length: MOVEMENTS }, (_, i): BatchItem => ({ object: 'movement', event: transfer(i) })),
    { object: 'movement', event: toCarol },
  ];
  ingested = await svc.client('ingest').batches.create({ events });
  expect(ingested.accepted, JSON.stringify(ingested.results.filter((r) => r.outcome === 'rejected'))).toBe(events.length);
  await drain(run.bus, [], [CANONICAL, GRAPH]);
});
afterAll(async () => {
  await graph?.stop();
  await run?.stop();
  await svc?.close();
});

const receiptFor = (externalId: string) => ingested.results.find((r) => r.receipt?.external_id === externalId)!.receipt!;
const idsOf = (movements: MovementView[]) => movements.map((m) => m.external_id);
// Newest first: pg-10 down to pg-0.
const NEWEST_FIRST = Array.from({ length: MOVEMENTS }, (_, i) => `pg-${MOVEMENTS - 1 - i}`);

describe('single reads', () => {
  it('parties.retrieve answers the current party', async () => {
    const alice = await read.parties.retrieve('alice');
    expect(alice.lastResponse).toMatchObject({ status: 200, attempts: 1, idempotencyKey: undefined });
    expect(alice).toMatchObject({ object: 'party', external_id: 'alice', type: 'person', status: 'active', sequence: 1, version_count: 1 });
    expect(alice.event_id).toBe(receiptFor('alice').event_id);
    expect(alice.occurred_at).toBe('2026-07-01T00:00:00.000Z');
  });

  it('accounts.retrieve, instruments.retrieve and movements.retrieve answer their families', async () => {
    const acct = await read.accounts.retrieve('alice-acct');
    expect(acct).toMatchObject({ object: 'account', external_id: 'alice-acct', holder_party_id: 'alice', asset: 'USD' });
    expect(acct.event_id).toBe(receiptFor('alice-acct').event_id);
    const card = await read.instruments.retrieve('card-1');
    expect(card).toMatchObject({ object: 'instrument', external_id: 'card-1', type: 'card_token', country: 'US' });
    const mv = await read.movements.retrieve('pg-1');
    expect(mv).toMatchObject({ object: 'movement', external_id: 'pg-1', amount: { value: '1001', asset: 'USD', scale: 2 }, parties: { debit: 'alice', credit: 'bob' } });
    expect(mv.lastResponse.status).toBe(200);
  });

  it('encodes an external_id as one path segment, whatever characters it holds', async () => {
    const odd = await read.parties.retrieve(ODD_ID);
    expect(odd.external_id).toBe(ODD_ID);
    expect(await read.posture.retrieve(ODD_ID)).toMatchObject({ external_id: ODD_ID });
    // In a path followed by a query, and as query values.
    expect(await read.parties.movements(ODD_ID, { limit: 5, direction: 'both' }).toArray()).toEqual([]);
    const network = await read.graph.network(ODD_ID, { depth: 1 });
    expect(network.center).toBe(`party:${ODD_ID}`);
    const paths = await read.graph.paths({ from: ODD_ID, to: 'alice' });
    expect(paths).toMatchObject({ from: `party:${ODD_ID}`, to: 'party:alice', paths: [] });
  });

  it('refuses an external_id that cannot be a path segment before sending anything', async () => {
    for (const id of ['', '.', '..']) expect(() => read.parties.retrieve(id)).toThrow(TypeError);
  });

  it('throws a governed 404 for an unknown id in every family', async () => {
    const calls = [() => read.parties.retrieve('nobody'), () => read.accounts.retrieve('nobody'), () => read.instruments.retrieve('nobody'), () => read.movements.retrieve('nobody')];
    for (const call of calls) {
      const error = await apiError(call());
      expect(error).toMatchObject({ status: 404, code: 'svc:resource/not_found', attempts: 1 });
      expect(error.problem!.status).toBe(404);
    }
  });

  it('throws 403 svc:auth/insufficient_scope for an ingest key', async () => {
    const error = await apiError(svc.client('ingest').parties.retrieve('alice'));
    expect(error).toMatchObject({ status: 403, code: 'svc:auth/insufficient_scope' });
  });
});

describe('parties.movements', () => {
  it('iterates every movement exactly once across several pages, newest first', async () => {
    const seen: MovementView[] = [];
    for await (const m of read.parties.movements('alice', { limit: 4 })) seen.push(m);
    expect(idsOf(seen)).toEqual(NEWEST_FIRST);
    expect(seen[0]).toMatchObject({ object: 'movement', event_id: receiptFor('pg-10').event_id });
  });

  it('pages() yields each page with its metadata, following next_cursor until has_more is false', async () => {
    const pages: Array<WithResponse<MovementPage>> = [];
    for await (const page of read.parties.movements('alice', { limit: 4 }).pages()) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([4, 4, 3]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, false]);
    expect(pages.map((p) => typeof p.next_cursor)).toEqual(['string', 'string', 'undefined']);
    expect(pages.every((p) => p.lastResponse.status === 200)).toBe(true);
    expect(pages.flatMap((p) => idsOf(p.data))).toEqual(NEWEST_FIRST);
  });

  it('firstPage() fetches one page only, and a cursor given in the query starts from its page', async () => {
    const first = await read.parties.movements('alice', { limit: 4 }).firstPage();
    expect(idsOf(first.data)).toEqual(NEWEST_FIRST.slice(0, 4));
    expect(first.has_more).toBe(true);
    expect(first.lastResponse.status).toBe(200);
    const rest = await read.parties.movements('alice', { limit: 4, cursor: first.next_cursor! }).toArray();
    expect(idsOf(rest)).toEqual(NEWEST_FIRST.slice(4));
  });

  it('keeps the filters on every page', async () => {
    const incoming = await read.parties.movements('alice', { direction: 'in', limit: 2 }).toArray();
    // pg-9, pg-6, pg-3 and pg-0 came in to alice: two full pages.
    expect(idsOf(incoming)).toEqual(['pg-9', 'pg-6', 'pg-3', 'pg-0']);
    const window = await read.parties.movements('alice', { from: '2026-08-01T00:02:00Z', to: '2026-08-01T00:05:00Z', limit: 1 }).toArray();
    expect(idsOf(window)).toEqual(['pg-5', 'pg-4', 'pg-3', 'pg-2']);
  });

  it('throws SvcApiError 400 naming the bad parameter, and 404 for an unknown party', async () => {
    const bad = await apiError(read.parties.movements('alice', { limit: 0 }).firstPage());
    expect(bad).toMatchObject({ status: 400, code: 'svc:request/invalid_parameter' });
    expect(bad.errors[0]!.path).toBe('limit');
    const forged = await apiError(read.parties.movements('alice', { cursor: 'not-a-cursor' }).toArray());
    expect(forged.errors[0]!.path).toBe('cursor');
    expect(await apiError(read.parties.movements('nobody').toArray())).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
  });
});

describe('posture.retrieve', () => {
  it('answers the band honestly as unknown before detection has looked at the party', async () => {
    const posture = await read.posture.retrieve('alice');
    expect(posture).toEqual({ external_id: 'alice', band: 'unknown', computed_at: null, staleness_seconds: null, coverage: 'none' });
    expect(posture.lastResponse.status).toBe(200);
    expect(await apiError(read.posture.retrieve('nobody'))).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
  });
});

describe('graph', () => {
  it('network answers the party network as nodes and edges, with the query applied', async () => {
    const network = await read.graph.network('alice', { depth: 3 });
    expect(network.lastResponse.status).toBe(200);
    expect(network).toMatchObject({ center: 'party:alice', depth: 3, truncated: false });
    const nodeIds = network.nodes.map((n) => n.id);
    expect(nodeIds).toEqual(expect.arrayContaining(['party:alice', 'account:alice-acct', 'account:bob-acct', 'party:bob']));
    const pair = network.edges.find((e) => e.type === 'transfer' && e.source === 'account:alice-acct')!;
    expect(pair).toMatchObject({ target: 'account:bob-acct', count: 7 });
    // The filters reach the service: holds edges only, one hop.
    const holds = await read.graph.network('alice', { depth: 1, edge_types: 'holds' });
    expect(holds.nodes.map((n) => n.id).sort()).toEqual(['account:alice-acct', 'party:alice']);
    expect(holds.edges.map((e) => e.type)).toEqual(['holds']);
    const cut = await read.graph.network('bob', { depth: 4, limit: 2 });
    expect(cut).toMatchObject({ truncated: true });
    expect(cut.nodes).toHaveLength(2);
    const windowed = await read.graph.network('alice', { depth: 2, since: '2026-08-01T00:05:00Z', until: '2026-08-01T00:10:00Z' });
    expect(windowed.window).toEqual({ since: '2026-08-01T00:05:00.000Z', until: '2026-08-01T00:10:00.000Z' });
  });

  it('paths answers the shortest path between two parties', async () => {
    const paths = await read.graph.paths({ from: 'alice', to: 'carol' });
    expect(paths.lastResponse.status).toBe(200);
    expect(paths).toMatchObject({ from: 'party:alice', to: 'party:carol', truncated: false });
    // alice holds alice-acct, which paid bob-acct, which paid carol-acct, which carol holds.
    // Money went both ways between alice and bob: two transfer edges, so two paths of four hops.
    const route = ['party:alice', 'account:alice-acct', 'account:bob-acct', 'account:carol-acct', 'party:carol'];
    expect(paths.paths.map((p) => [p.length, p.nodes])).toEqual([
      [4, route],
      [4, route],
    ]);
    expect(paths.edges.map((e) => e.id).sort()).toEqual([...new Set(paths.paths.flatMap((p) => p.edges))].sort());
    // The query reaches the service: at most one path.
    expect((await read.graph.paths({ from: 'alice', to: 'carol', limit: 1 })).paths).toHaveLength(1);
    // The query reaches the service: no path within three hops.
    expect((await read.graph.paths({ from: 'alice', to: 'carol', max_depth: 3 })).paths).toEqual([]);
    expect((await read.graph.paths({ from: 'alice', to: 'dave' })).paths).toEqual([]);
  });

  it('throws 404 naming the unknown party and 400 for a bad parameter', async () => {
    const unknown = await apiError(read.graph.paths({ from: 'alice', to: 'nobody' }));
    expect(unknown).toMatchObject({ status: 404, code: 'svc:resource/not_found' });
    expect(unknown.errors.map((e) => e.path)).toEqual(['to']);
    const deep = await apiError(read.graph.network('alice', { depth: 5 }));
    expect(deep).toMatchObject({ status: 400, code: 'svc:request/invalid_parameter' });
    expect(deep.errors[0]!.path).toBe('depth');
    expect(await apiError(read.graph.network('nobody'))).toMatchObject({ status: 404 });
  });
});

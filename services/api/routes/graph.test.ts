import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresGraphStore } from '../../../platform/graph/postgres/store.ts';
import { startGraphPipeline, type GraphPipeline } from '../../../pipelines/graph/pipeline.ts';
import { CANONICAL, GRAPH } from '../../../pipelines/groups.ts';
import { graphNetworkSchema, graphPathsSchema } from '../../../schemas/responses.ts';
import { accountEvent, movementEvent, partyEvent, relationshipEvent } from '../../../test/fixtures/events.ts';
import { startTestApi, type TestApi } from '../../../test/support/test-api.ts';
import { drain, startTestPipeline, type TestPipeline } from '../../../test/support/test-pipeline.ts';
import { systemClock } from '../../../platform/clock.ts';

let api: TestApi;
let run: TestPipeline;
let graph: GraphPipeline;

// alice —holds→ a-acct —transfer→ b-acct ←holds— bob —holds→ b2-acct —transfer→ c-acct ←holds— carol;
// dave is known but linked to nobody; erin is bob's beneficial owner.
beforeAll(async () => {
  api = await startTestApi();
  run = await startTestPipeline(api);
  graph = await startGraphPipeline({ bus: run.bus, store: new PostgresGraphStore(api.db.pool), pool: api.db.pool, clock: systemClock });
  const party = (id: string, email: string) => {
    const event = partyEvent(id);
    event.data.identifiers = [{ type: 'email', value: email, verification_status: 'verified' }];
    return { object: 'party', event };
  };
  const transfer = (id: string, from: string, to: string, value: string, at: string) => {
    const event = movementEvent(id);
    event.occurred_at = at;
    event.data.debit = { account_id: from };
    event.data.credit = { account_id: to };
    event.data.amount = { value, asset: 'USD', scale: 2 };
    // The fixture's ip would link every payer to every other.
    delete event.data.ip;
    return { object: 'movement', event };
  };
  const owner = relationshipEvent('rel-owner');
  Object.assign(owner.data, { type: 'beneficial_owner', from: { kind: 'party', external_id: 'erin' }, to: { kind: 'party', external_id: 'bob' } });
  const events = [
    party('alice', 'alice@example.com'),
    party('bob', 'bob@example.com'),
    party('carol', 'carol@example.com'),
    party('dave', 'dave@example.com'),
    party('erin', 'erin@example.com'),
    { object: 'account', event: accountEvent('a-acct', 'alice') },
    { object: 'account', event: accountEvent('b-acct', 'bob') },
    { object: 'account', event: accountEvent('b2-acct', 'bob') },
    { object: 'account', event: accountEvent('c-acct', 'carol') },
    { object: 'relationship', event: owner },
    transfer('m1', 'a-acct', 'b-acct', '10000', '2026-08-01T10:00:00Z'),
    transfer('m2', 'a-acct', 'b-acct', '5000', '2026-08-10T10:00:00Z'),
    transfer('m3', 'b2-acct', 'c-acct', '7000', '2026-08-11T10:00:00Z'),
  ];
  const res = await api.client.post('/v1/batches', { events }, api.keys.ingest);
  expect(res.json().accepted, res.body).toBe(events.length);
  await drain(run.bus, [], [CANONICAL, GRAPH]);
});
afterAll(async () => {
  await graph?.stop();
  await run?.stop();
  await api?.close();
});

const read = (path: string) => api.client.get(path, api.keys.read);
const ids = (list: Array<{ id: string }>) => list.map((x) => x.id).sort();

describe('GET /v1/graph/parties/{external_id}/network', () => {
  it('returns the party network as nodes and edges a drawing library takes as they are', async () => {
    const res = await read('/v1/graph/parties/alice/network?depth=3');
    expect(res.statusCode, res.body).toBe(200);
    const body = graphNetworkSchema.parse(res.json());
    expect(body.center).toBe('party:alice');
    expect(body.truncated).toBe(false);
    const nodeIds = ids(body.nodes);
    expect(nodeIds).toEqual(expect.arrayContaining(['party:alice', 'account:a-acct', 'account:b-acct', 'party:bob']));
    // Three hops: alice → a-acct → b-acct → bob; bob's other account is a fourth hop away.
    expect(nodeIds).not.toContain('account:b2-acct');
    // Every edge joins two listed nodes.
    for (const edge of body.edges) expect(nodeIds).toEqual(expect.arrayContaining([edge.source, edge.target]));
    const pair = body.edges.find((e) => e.type === 'transfer')!;
    expect(pair).toMatchObject({ source: 'account:a-acct', target: 'account:b-acct', count: 2, amount: { value: '15000', asset: 'USD', scale: 2 } });
    expect(pair.recent_movements!.map((m) => m.movement_id)).toEqual(['m2', 'm1']);
    expect(body.nodes.find((n) => n.id === 'party:alice')).toMatchObject({ external_id: 'alice', attributes: { type: 'person', status: 'active' } });
  });

  it('shows identifiers only as keyed hashes', async () => {
    const res = await read('/v1/graph/parties/alice/network?depth=1&edge_types=shares');
    const body = graphNetworkSchema.parse(res.json());
    const identifier = body.nodes.find((n) => n.kind === 'identifier')!;
    expect(identifier.hash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(identifier.external_id).toBeUndefined();
    expect(res.body).not.toContain('alice@example.com');
    expect(body.edges.map((e) => e.type)).toEqual(['shares']);
  });

  it('applies the event-time window and the minimum amount to transfers', async () => {
    const windowed = graphNetworkSchema.parse((await read('/v1/graph/parties/alice/network?depth=2&since=2026-08-05T00:00:00Z&until=2026-08-31T00:00:00Z')).json());
    expect(windowed.window).toEqual({ since: '2026-08-05T00:00:00.000Z', until: '2026-08-31T00:00:00.000Z' });
    expect(windowed.edges.find((e) => e.type === 'transfer')).toMatchObject({ count: 1, amount: { value: '5000' } });
    const large = graphNetworkSchema.parse((await read('/v1/graph/parties/alice/network?depth=2&min_amount=6000')).json());
    expect(large.edges.find((e) => e.type === 'transfer')).toMatchObject({ count: 1, amount: { value: '10000' } });
    const none = graphNetworkSchema.parse((await read('/v1/graph/parties/alice/network?depth=2&min_amount=20000&edge_types=holds,transfer')).json());
    expect(ids(none.nodes)).toEqual(['account:a-acct', 'party:alice']);
  });

  it('keeps to the node limit and says it was cut', async () => {
    const body = graphNetworkSchema.parse((await read('/v1/graph/parties/bob/network?depth=4&limit=3')).json());
    expect(body.nodes).toHaveLength(3);
    expect(body.truncated).toBe(true);
  });

  it('answers a known party without edges with itself alone', async () => {
    const body = graphNetworkSchema.parse((await read('/v1/graph/parties/dave/network?edge_types=transfer')).json());
    expect(ids(body.nodes)).toEqual(['party:dave']);
    expect(body.edges).toEqual([]);
  });

  it('is a governed 404 for an unknown party', async () => {
    const res = await read('/v1/graph/parties/nobody/network');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe('svc:resource/not_found');
  });

  it.each([
    ['depth=5', 'depth'],
    ['depth=0', 'depth'],
    ['depth=two', 'depth'],
    ['limit=1001', 'limit'],
    ['since=yesterday', 'since'],
    ['since=2026-08-02T00:00:00Z&until=2026-08-01T00:00:00Z', 'since'],
    ['edge_types=transfer,friendship', 'edge_types'],
    ['min_amount=-5', 'min_amount'],
    ['min_amount=1.5', 'min_amount'],
    ['min_amount=9223372036854775808', 'min_amount'],
    ['depth=1&depth=2', 'depth'],
  ])('refuses %s with 400 naming the parameter', async (query, path) => {
    const res = await read(`/v1/graph/parties/alice/network?${query}`);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'svc:request/invalid_parameter', errors: [expect.objectContaining({ path })] });
  });

  it('needs the read scope', async () => {
    const res = await api.client.get('/v1/graph/parties/alice/network', api.keys.ingest);
    expect(res.statusCode).toBe(403);
  });
});

describe('GET /v1/graph/paths', () => {
  it('returns the shortest paths between two parties with the nodes and edges on them', async () => {
    const res = await read('/v1/graph/paths?from=alice&to=carol');
    expect(res.statusCode, res.body).toBe(200);
    const body = graphPathsSchema.parse(res.json());
    expect(body.paths).toEqual([
      {
        length: 6,
        nodes: ['party:alice', 'account:a-acct', 'account:b-acct', 'party:bob', 'account:b2-acct', 'account:c-acct', 'party:carol'],
        edges: [
          'holds:party:alice>account:a-acct',
          'transfer:account:a-acct>account:b-acct',
          'holds:party:bob>account:b-acct',
          'holds:party:bob>account:b2-acct',
          'transfer:account:b2-acct>account:c-acct',
          'holds:party:carol>account:c-acct',
        ],
      },
    ]);
    expect(ids(body.edges)).toEqual([...body.paths[0]!.edges].sort());
    expect(ids(body.nodes)).toEqual([...body.paths[0]!.nodes].sort());
  });

  it('follows relationships, and finds nothing beyond max_depth or between unlinked parties', async () => {
    const owner = graphPathsSchema.parse((await read('/v1/graph/paths?from=erin&to=alice')).json());
    expect(owner.paths[0]!.nodes).toEqual(['party:erin', 'party:bob', 'account:b-acct', 'account:a-acct', 'party:alice']);
    expect(graphPathsSchema.parse((await read('/v1/graph/paths?from=alice&to=carol&max_depth=5')).json()).paths).toEqual([]);
    const apart = graphPathsSchema.parse((await read('/v1/graph/paths?from=alice&to=dave')).json());
    expect(apart).toMatchObject({ paths: [], truncated: false });
  });

  it('is a 404 naming which party is unknown, and a 400 without both parties', async () => {
    const unknown = await read('/v1/graph/paths?from=alice&to=nobody');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'svc:resource/not_found', errors: [{ path: 'to' }] });
    const missing = await read('/v1/graph/paths?from=alice');
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors).toEqual([expect.objectContaining({ path: 'to', code: 'svc:request/invalid_parameter' })]);
  });
});

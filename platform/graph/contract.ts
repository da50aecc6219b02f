// The GraphStore contract: the behaviour port.ts promises, as one vitest suite that every adapter
// runs (PostgreSQL today, Neo4j tomorrow) so detectors never notice which engine answers. Graphs are
// built through apply() alone, each test in a tenant of its own, with hand-computed expectations.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredEdge, type DeclaredEdge, type EdgeType, type EgoOptions, type GraphChange, type GraphEdge, type GraphStore, type NodeRef, type Subgraph } from './port.ts';

// ---- building graphs ----

// Event time: day d of August 2026 (hour h).
export const day = (d: number, h = 0): Date => new Date(Date.UTC(2026, 7, d, h));

export const party = (key: string): NodeRef => ({ kind: 'party', key });
export const account = (key: string): NodeRef => ({ kind: 'account', key });
export const identifier = (key: string): NodeRef => ({ kind: 'identifier', key });
export const device = (key: string): NodeRef => ({ kind: 'device', key });
const instrument = (key: string): NodeRef => ({ kind: 'instrument', key });

const ref = (node: NodeRef) => `${node.kind}:${node.key}`;
// Edge ids as port.ts spells them: `<type>:<from kind>:<from key>><to kind>:<to key>#<qualifier>`,
// `%`, `>` and `#` in keys and qualifier percent-escaped.
const escaped = (text: string) => text.replaceAll('%', '%25').replaceAll('>', '%3E').replaceAll('#', '%23');
const edgeIdOf = (type: EdgeType, from: NodeRef, to: NodeRef, qualifier = '') =>
  `${type}:${from.kind}:${escaped(from.key)}>${to.kind}:${escaped(to.key)}${qualifier ? `#${escaped(qualifier)}` : ''}`;
const transferId = (from: string, to: string) => edgeIdOf('transfer', account(from), account(to));
const holdsId = (holder: string, acct: string) => edgeIdOf('holds', party(holder), account(acct));

const declared = declaredEdge;

// Changes of one tenant, each with an event id of its own. An entity's versions are numbered in
// the order they are made (as canonical would rank them); `sequence` overrides.
export function graphOf(tenantId: string) {
  const change = (occurredAt: Date, rest: Partial<GraphChange>): GraphChange => ({ tenantId, eventId: randomUUID(), occurredAt, ...rest });
  const made = new Map<string, number>();
  const next = (origin: string) => {
    const sequence = (made.get(origin) ?? 0) + 1;
    made.set(origin, sequence);
    return sequence;
  };
  return {
    tenantId,
    party: (key: string, at: Date, attrs: Record<string, unknown> = { type: 'person' }, identifiers: string[] = []) =>
      change(at, {
        entity: {
          origin: `party:${key}`,
          sequence: next(`party:${key}`),
          node: { ref: party(key), attrs },
          edges: identifiers.map((id) => declared('shares', party(key), identifier(id))),
        },
      }),
    account: (key: string, holder: string, at: Date, options: { attrs?: Record<string, unknown>; validFrom?: Date; validTo?: Date; sequence?: number } = {}) =>
      change(at, {
        entity: {
          origin: `account:${key}`,
          sequence: options.sequence ?? next(`account:${key}`),
          node: { ref: account(key), attrs: options.attrs ?? { type: 'wallet' } },
          edges: [declared('holds', party(holder), account(key), { validFrom: options.validFrom ?? null, validTo: options.validTo ?? null })],
        },
      }),
    relationship: (id: string, type: EdgeType, from: NodeRef, to: NodeRef, at: Date, extra: Partial<DeclaredEdge> = {}) =>
      change(at, {
        entity: { origin: `relationship:${id}`, sequence: next(`relationship:${id}`), node: null, edges: [declared(type, from, to, { qualifier: id, ...extra })] },
      }),
    transfer: (movementId: string, from: string, to: string, amount: bigint | null, at: Date) =>
      change(at, { movement: movementId, transfer: { movementId, from, to, amount } }),
    // A correction of `original`: its own transfer (none when it says the payment was reversed).
    correction: (movementId: string, original: string, transfer: { from: string; to: string; amount: bigint | null } | null, at: Date) =>
      change(at, { movement: movementId, retracts: original, ...(transfer ? { transfer: { movementId, ...transfer } } : {}) }),
    // Seen by a control event.
    seen: (from: NodeRef, to: NodeRef, at: Date, type: 'uses' | 'shares' = 'shares') => change(at, { observed: [{ type, from, to }] }),
    // A movement that saw devices, ips or instruments, and made no transfer.
    sightedBy: (movementId: string, seen: Array<{ from: NodeRef; to: NodeRef; type?: 'uses' | 'shares' }>, at: Date) =>
      change(at, { movement: movementId, observed: seen.map((o) => ({ type: o.type ?? 'shares', from: o.from, to: o.to })) }),
  };
}

const newTenant = () => `t-${randomUUID()}`;

// ---- reading answers ----

const nodeIds = (subgraph: Subgraph) => subgraph.nodes.map(ref).sort();
const edgeIds = (subgraph: Subgraph) => subgraph.edges.map((e) => e.id).sort();
function edgeIn(subgraph: Subgraph, id: string): GraphEdge {
  const edge = subgraph.edges.find((e) => e.id === id);
  if (!edge) throw new Error(`no edge ${id} in ${edgeIds(subgraph).join(', ')}`);
  return edge;
}
// A subgraph never names an edge whose ends it does not hold.
function expectClosed(subgraph: Subgraph): void {
  const nodes = new Set(subgraph.nodes.map(ref));
  for (const edge of subgraph.edges) {
    expect(nodes.has(ref(edge.from)) && nodes.has(ref(edge.to)), edge.id).toBe(true);
  }
}

export function describeGraphStoreContract(name: string, setup: () => Promise<{ store: GraphStore; close: () => Promise<void> }>): void {
  describe(`GraphStore contract: ${name}`, () => {
    let store: GraphStore;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ store, close } = await setup());
    });
    afterAll(async () => {
      await close?.();
    });

    describe('apply', () => {
      it('aggregates the transfers of one ordered pair into one edge; the reverse direction is another', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('m1', 'A1', 'A2', 100n, day(1)),
          g.transfer('m2', 'A1', 'A2', 250n, day(3)),
          g.transfer('m3', 'A2', 'A1', 40n, day(4)),
        ]);
        const net = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        expect(edgeIds(net)).toEqual([transferId('A1', 'A2'), transferId('A2', 'A1')]);
        expect(edgeIn(net, transferId('A1', 'A2'))).toMatchObject({ type: 'transfer', count: 2, sum: 350n, unpriced: 0, firstAt: day(1), lastAt: day(3) });
        expect(edgeIn(net, transferId('A2', 'A1'))).toMatchObject({ count: 1, sum: 40n, unpriced: 0, firstAt: day(4), lastAt: day(4) });
      });

      it('counts unpriced transfers apart: in unpriced and count, never in sum', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('m1', 'A1', 'A2', 100n, day(1)), g.transfer('m2', 'A1', 'A2', null, day(2)), g.transfer('m3', 'A1', 'A2', 5n, day(3))]);
        const net = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        expect(edgeIn(net, transferId('A1', 'A2'))).toMatchObject({ count: 3, sum: 105n, unpriced: 1 });
      });

      it('is idempotent on the event id: a batch applied twice changes nothing the second time', async () => {
        const g = graphOf(newTenant());
        const batch = [
          g.transfer('m1', 'A1', 'A2', 100n, day(1)),
          g.transfer('m2', 'A1', 'A2', null, day(2)),
          g.seen(party('P1'), device('D1'), day(1)),
          g.seen(party('P1'), device('D1'), day(5)),
        ];
        await store.apply(batch);
        await store.apply(batch);
        // Overlapping: one change seen before, one new.
        await store.apply([batch[0]!, g.transfer('m3', 'A1', 'A2', 7n, day(3))]);
        const accounts = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        expect(edgeIn(accounts, transferId('A1', 'A2'))).toMatchObject({ count: 3, sum: 107n, unpriced: 1, firstAt: day(1), lastAt: day(3) });
        const parties = await store.egoNetwork(g.tenantId, party('P1'), { depth: 1, nodeCap: 10 });
        expect(edgeIn(parties, edgeIdOf('shares', party('P1'), device('D1')))).toMatchObject({ count: 2, firstAt: day(1), lastAt: day(5) });
      });
    });

    describe('retractions', () => {
      it('take a corrected movement out of its pair, which keeps only what is left, and drop a pair left with nothing', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('m1', 'A1', 'A2', 100n, day(1)), g.transfer('m2', 'A1', 'A2', null, day(3)), g.transfer('m3', 'A1', 'A3', 70n, day(2))]);
        // m2 corrected to 40 between other accounts; m3 corrected as reversed (no transfer of its own).
        await store.apply([g.correction('m2-fix', 'm2', { from: 'A1', to: 'A4', amount: 40n }, day(5)), g.correction('m3-void', 'm3', null, day(6))]);
        const net = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        expect(edgeIds(net)).toEqual([transferId('A1', 'A2'), transferId('A1', 'A4')]);
        expect(edgeIn(net, transferId('A1', 'A2'))).toMatchObject({ count: 1, sum: 100n, unpriced: 0, firstAt: day(1), lastAt: day(1) });
        expect(edgeIn(net, transferId('A1', 'A2')).recent?.map((m) => m.movementId)).toEqual(['m1']);
        expect(edgeIn(net, transferId('A1', 'A4'))).toMatchObject({ count: 1, sum: 40n });
        const windowed = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10, filter: { since: day(1), until: day(10) } });
        expect(edgeIds(windowed)).toEqual([transferId('A1', 'A2'), transferId('A1', 'A4')]);
        const flows = await store.fanOut(g.tenantId, 'A1', { since: day(1), until: day(10), limit: 10 });
        expect(flows.counterparties.map((c) => c.account).sort()).toEqual(['A2', 'A4']);
      });

      it('keep a movement that comes after its correction out, also within one batch, and change nothing applied again', async () => {
        const g = graphOf(newTenant());
        const fix = g.correction('m1-fix', 'm1', { from: 'A1', to: 'A2', amount: 90n }, day(2));
        await store.apply([fix]);
        await store.apply([g.transfer('m1', 'A1', 'A2', 900n, day(1))]);
        await store.apply([fix, g.transfer('m2', 'A1', 'A2', 5n, day(3)), g.correction('m2-fix', 'm2', { from: 'A1', to: 'A2', amount: 6n }, day(4))]);
        const net = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        expect(edgeIn(net, transferId('A1', 'A2'))).toMatchObject({ count: 2, sum: 96n, firstAt: day(2), lastAt: day(4) });
        expect(edgeIn(net, transferId('A1', 'A2')).recent?.map((m) => m.movementId)).toEqual(['m2-fix', 'm1-fix']);
      });

      it("never take back another tenant's movement of the same id", async () => {
        const mine = graphOf(newTenant());
        const theirs = graphOf(newTenant());
        await store.apply([mine.transfer('m1', 'A1', 'A2', 100n, day(1)), theirs.transfer('m1', 'A1', 'A2', 100n, day(1))]);
        await store.apply([theirs.correction('m1-fix', 'm1', null, day(2))]);
        expect(edgeIn(await store.egoNetwork(mine.tenantId, account('A1'), { depth: 1, nodeCap: 10 }), transferId('A1', 'A2'))).toMatchObject({ count: 1, sum: 100n });
        expect(edgeIds(await store.egoNetwork(theirs.tenantId, account('A1'), { depth: 1, nodeCap: 10 }))).toEqual([]);
      });
    });

    describe("retracted movements' sightings", () => {
      const onD1 = edgeIdOf('shares', party('P1'), device('D1'));

      it('leave their edges, which keep the count, first and last of the sightings left; an edge left with none goes', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.sightedBy('m1', [{ from: party('P1'), to: device('D1') }, { type: 'uses', from: account('A1'), to: instrument('I1') }], day(1)),
          g.sightedBy('m2', [{ from: party('P1'), to: device('D1') }], day(5)),
          g.sightedBy('m3', [{ from: party('P1'), to: device('D1') }], day(3)),
          g.sightedBy('m4', [{ from: party('P2'), to: device('D1') }], day(4)),
        ]);
        await store.apply([g.correction('m1-fix', 'm1', null, day(6)), g.correction('m2-fix', 'm2', null, day(7)), g.correction('m4-fix', 'm4', null, day(8))]);
        const net = await store.egoNetwork(g.tenantId, party('P1'), { depth: 2, nodeCap: 10 });
        expect(edgeIds(net)).toEqual([onD1]);
        expect(edgeIn(net, onD1)).toMatchObject({ count: 1, firstAt: day(3), lastAt: day(3) });
        expect(edgeIds(await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 }))).toEqual([]);
        // P2 was linked to P1 only through the device a corrected movement saw.
        expect((await store.shortestPaths(g.tenantId, party('P1'), party('P2'), { maxDepth: 4, limit: 10 })).paths).toEqual([]);
        expect((await store.sharedAttributes(g.tenantId, 'P1', { limit: 10, until: day(10) })).shared).toEqual([]);
      });

      it('never enter when the movement comes after its correction, also within one batch, and change nothing applied again', async () => {
        const g = graphOf(newTenant());
        const fix = g.correction('m1-fix', 'm1', null, day(2));
        await store.apply([fix]);
        await store.apply([g.sightedBy('m1', [{ from: party('P1'), to: device('D1') }], day(1))]);
        const m2 = g.sightedBy('m2', [{ from: party('P1'), to: device('D1') }], day(3));
        await store.apply([fix, g.sightedBy('m3', [{ from: party('P1'), to: device('D1') }], day(4)), m2, g.correction('m2-fix', 'm2', null, day(5))]);
        await store.apply([m2]);
        expect(edgeIn(await store.egoNetwork(g.tenantId, party('P1'), { depth: 1, nodeCap: 10 }), onD1)).toMatchObject({ count: 1, firstAt: day(4), lastAt: day(4) });
      });

      it("keep another tenant's sightings of a movement of the same id, and a control event's", async () => {
        const mine = graphOf(newTenant());
        const theirs = graphOf(newTenant());
        await store.apply([
          mine.sightedBy('m1', [{ from: party('P1'), to: device('D1') }], day(1)),
          theirs.sightedBy('m1', [{ from: party('P1'), to: device('D1') }], day(1)),
          theirs.seen(party('P1'), device('D1'), day(2)),
        ]);
        await store.apply([theirs.correction('m1-fix', 'm1', null, day(3))]);
        expect(edgeIn(await store.egoNetwork(mine.tenantId, party('P1'), { depth: 1, nodeCap: 10 }), onD1)).toMatchObject({ count: 1, firstAt: day(1) });
        expect(edgeIn(await store.egoNetwork(theirs.tenantId, party('P1'), { depth: 1, nodeCap: 10 }), onD1)).toMatchObject({ count: 1, firstAt: day(2), lastAt: day(2) });
      });
    });

    describe('observed edges in a window', () => {
      it('count only the sightings inside it, first and last among them, and leave out an edge seen only outside it', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.seen(party('P1'), device('D1'), day(1)),
          g.sightedBy('m1', [{ from: party('P1'), to: device('D1') }], day(5)),
          g.seen(party('P1'), device('D1'), day(7)),
          g.seen(party('P1'), device('D2'), day(9)),
          g.seen(party('P2'), device('D2'), day(9)),
        ]);
        const d1 = edgeIdOf('shares', party('P1'), device('D1'));
        const d2 = edgeIdOf('shares', party('P1'), device('D2'));
        const within = (since: Date | undefined, until: Date | undefined) =>
          store.egoNetwork(g.tenantId, party('P1'), { depth: 1, nodeCap: 10, filter: { ...(since ? { since } : {}), ...(until ? { until } : {}) } });
        expect(edgeIds(await within(day(2), day(4)))).toEqual([]);
        const middle = await within(day(4), day(8));
        expect(edgeIds(middle)).toEqual([d1]);
        expect(edgeIn(middle, d1)).toMatchObject({ count: 2, firstAt: day(5), lastAt: day(7) });
        expect(edgeIn(await within(undefined, day(5)), d1)).toMatchObject({ count: 2, firstAt: day(1), lastAt: day(5) });
        expect(edgeIn(await within(day(6), undefined), d1)).toMatchObject({ count: 1, firstAt: day(7), lastAt: day(7) });
        expect(edgeIn(await within(undefined, undefined), d1)).toMatchObject({ count: 3, firstAt: day(1), lastAt: day(7) });
        expect(edgeIds(await within(day(8), day(10)))).toEqual([d2]);
        // Reach, many at once, and paths read edges by the same rule.
        const options = { depth: 2, nodeCap: 10, filter: { since: day(2), until: day(8) } };
        expect((await store.reach(g.tenantId, party('P1'), options)).nodes.map(ref)).toEqual(['device:D1', 'party:P1']);
        expect((await store.reachMany(g.tenantId, [{ center: party('P2'), options }, { center: party('P1'), options: { ...options, filter: { since: day(8) } } }])).map((r) => r.nodes.map(ref))).toEqual([
          ['party:P2'],
          ['device:D2', 'party:P1', 'party:P2'],
        ]);
        expect((await store.shortestPaths(g.tenantId, party('P1'), party('P2'), { maxDepth: 4, limit: 10, filter: { until: day(8) } })).paths).toEqual([]);
        expect((await store.shortestPaths(g.tenantId, party('P1'), party('P2'), { maxDepth: 4, limit: 10, filter: { since: day(8) } })).paths).toHaveLength(1);
      });
    });

    describe('node', () => {
      it("gives an entity's current attributes, null attrs for a node only referenced, null for an unknown node", async () => {
        const g = graphOf(newTenant());
        await store.apply([g.party('P1', day(1), { type: 'person', status: 'active' }, ['X1']), g.account('A1', 'P9', day(1))]);
        await store.apply([g.party('P1', day(2), { type: 'person', status: 'closed' }, ['X1'])]);
        expect(await store.node(g.tenantId, party('P1'))).toEqual({ kind: 'party', key: 'P1', attrs: { type: 'person', status: 'closed' } });
        expect(await store.node(g.tenantId, account('A1'))).toEqual({ kind: 'account', key: 'A1', attrs: { type: 'wallet' } });
        expect(await store.node(g.tenantId, identifier('X1'))).toEqual({ kind: 'identifier', key: 'X1', attrs: null });
        // P9 holds A1 but never arrived as an entity itself.
        expect(await store.node(g.tenantId, party('P9'))).toEqual({ kind: 'party', key: 'P9', attrs: null });
        expect(await store.node(g.tenantId, party('nobody'))).toBeNull();
        expect(await store.node(g.tenantId, account('P1'))).toBeNull();
      });
    });

    describe('declared edges', () => {
      // An account whose holder changes from P1 to P2 on day 10.
      const holderChange = (tenantId: string) => {
        const g = graphOf(tenantId);
        return [g.account('A1', 'P1', day(2), { validFrom: day(1) }), g.account('A1', 'P2', day(10), { validFrom: day(10) })] as const;
      };
      const expectHistory = async (tenantId: string) => {
        const all = await store.egoNetwork(tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        expect(nodeIds(all)).toEqual(['account:A1', 'party:P1', 'party:P2']);
        expect(edgeIn(all, holdsId('P1', 'A1'))).toMatchObject({ validFrom: day(1), validTo: day(10) });
        expect(edgeIn(all, holdsId('P2', 'A1'))).toMatchObject({ validFrom: day(10), validTo: null });
        const after = await store.egoNetwork(tenantId, account('A1'), { depth: 1, nodeCap: 10, filter: { since: day(11), until: day(12) } });
        expect(nodeIds(after)).toEqual(['account:A1', 'party:P2']);
        expect(edgeIds(after)).toEqual([holdsId('P2', 'A1')]);
        const before = await store.egoNetwork(tenantId, account('A1'), { depth: 1, nodeCap: 10, filter: { since: day(3), until: day(4) } });
        expect(nodeIds(before)).toEqual(['account:A1', 'party:P1']);
      };

      it("a newer version closes the edges it no longer declares at its occurredAt and keeps them", async () => {
        const tenantId = newTenant();
        const [v1, v2] = holderChange(tenantId);
        await store.apply([v1]);
        await store.apply([v2]);
        // A redelivered older version is a change already applied: it reopens nothing.
        await store.apply([v1]);
        await expectHistory(tenantId);
      });

      it('a lower version that comes after a higher one changes nothing, in another batch or the same', async () => {
        for (const together of [false, true]) {
          const g = graphOf(newTenant());
          const higher = g.account('A1', 'P2', day(10), { validFrom: day(10), sequence: 2, attrs: { type: 'bank' } });
          const lower = g.account('A1', 'P1', day(2), { validFrom: day(1), sequence: 1, attrs: { type: 'wallet' } });
          if (together) await store.apply([higher, lower]);
          else for (const change of [higher, lower]) await store.apply([change]);
          const all = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10 });
          expect(edgeIds(all), `together: ${together}`).toEqual([holdsId('P2', 'A1')]);
          expect(edgeIn(all, holdsId('P2', 'A1'))).toMatchObject({ validFrom: day(10), validTo: null });
          expect((await store.node(g.tenantId, account('A1')))?.attrs).toEqual({ type: 'bank' });
          // A still higher version is taken.
          await store.apply([g.account('A1', 'P3', day(12), { validFrom: day(12), sequence: 3 })]);
          const now = await store.egoNetwork(g.tenantId, account('A1'), { depth: 1, nodeCap: 10, filter: { since: day(13), until: day(14) } });
          expect(edgeIds(now)).toEqual([holdsId('P3', 'A1')]);
        }
      });

      it('versions of one entity applied in one batch leave the same history as applied one by one', async () => {
        const tenantId = newTenant();
        await store.apply([...holderChange(tenantId)]);
        await expectHistory(tenantId);
      });

      it('relationship edges carry their qualifier, validity and attrs; two relationships between the same ends are two edges', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.relationship('R1', 'beneficial_owner', party('P1'), party('P2'), day(1), { validFrom: day(1), attrs: { ownership_pct: 25 } }),
          g.relationship('R2', 'beneficial_owner', party('P1'), party('P2'), day(2), { validFrom: day(2), validTo: day(20) }),
        ]);
        const net = await store.egoNetwork(g.tenantId, party('P2'), { depth: 1, nodeCap: 10 });
        const r1 = edgeIdOf('beneficial_owner', party('P1'), party('P2'), 'R1');
        expect(r1).toBe('beneficial_owner:party:P1>party:P2#R1');
        expect(edgeIds(net)).toEqual([r1, edgeIdOf('beneficial_owner', party('P1'), party('P2'), 'R2')]);
        expect(edgeIn(net, r1)).toMatchObject({ type: 'beneficial_owner', qualifier: 'R1', from: party('P1'), to: party('P2'), validFrom: day(1), validTo: null, attrs: { ownership_pct: 25 } });
        // No relationship node: a relationship is an edge.
        expect(await store.node(g.tenantId, { kind: 'party', key: 'R1' })).toBeNull();
      });
    });

    describe('egoNetwork', () => {
      // P1 holds A1 → A2 held by P2, who shares identifier X with P3.
      const chain = async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.account('A1', 'P1', day(1)),
          g.account('A2', 'P2', day(1)),
          g.party('P2', day(1), { type: 'person' }, ['X']),
          g.party('P3', day(1), { type: 'person' }, ['X']),
          g.transfer('m1', 'A1', 'A2', 100n, day(2)),
        ]);
        return g.tenantId;
      };

      // External ids are free text: unescaped, both holds edges were `holds:party:Q>account:Z>account:W`
      // and the answer, keyed by edge id, kept one of them.
      it('gives edges between ids that hold the id separators ids of their own, and answers both', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.account('Z>account:W', 'Q', day(1)), g.account('W', 'Q>account:Z', day(1)), g.transfer('m#1', 'W', 'Z>account:W', 5n, day(2))]);
        const net = await store.egoNetwork(g.tenantId, party('Q'), { depth: 3, nodeCap: 50 });
        expect(nodeIds(net)).toEqual(['account:W', 'account:Z>account:W', 'party:Q', 'party:Q>account:Z']);
        expect(edgeIds(net)).toEqual([
          'holds:party:Q%3Eaccount:Z>account:W',
          'holds:party:Q>account:Z%3Eaccount:W',
          'transfer:account:W>account:Z%3Eaccount:W',
        ]);
        expect(edgeIds(net)).toEqual([holdsId('Q>account:Z', 'W'), holdsId('Q', 'Z>account:W'), transferId('W', 'Z>account:W')].sort());
      });

      it('reaches one more level per hop, over any edge type in either direction', async () => {
        const tenantId = await chain();
        const at = (depth: number) => store.egoNetwork(tenantId, party('P1'), { depth, nodeCap: 50 });
        const one = await at(1);
        expect(nodeIds(one)).toEqual(['account:A1', 'party:P1']);
        expect(one.truncated).toBe(false);
        const two = await at(2);
        expect(nodeIds(two)).toEqual(['account:A1', 'account:A2', 'party:P1']);
        expect(edgeIds(two)).toEqual([holdsId('P1', 'A1'), transferId('A1', 'A2')]);
        const three = await at(3);
        expect(nodeIds(three)).toEqual(['account:A1', 'account:A2', 'party:P1', 'party:P2']);
        expect(three.truncated).toBe(false);
        expect(nodeIds(await at(4))).toEqual(['account:A1', 'account:A2', 'identifier:X', 'party:P1', 'party:P2']);
        expect(three.nodes.find((n) => n.key === 'A1')?.attrs).toEqual({ type: 'wallet' });
      });

      it('follows only the edge types asked for', async () => {
        const tenantId = await chain();
        const transfers = await store.egoNetwork(tenantId, account('A1'), { depth: 3, nodeCap: 50, filter: { types: ['transfer'] } });
        expect(nodeIds(transfers)).toEqual(['account:A1', 'account:A2']);
        expect(edgeIds(transfers)).toEqual([transferId('A1', 'A2')]);
        const holds = await store.egoNetwork(tenantId, account('A1'), { depth: 3, nodeCap: 50, filter: { types: ['holds'] } });
        expect(nodeIds(holds)).toEqual(['account:A1', 'party:P1']);
        const both = await store.egoNetwork(tenantId, party('P2'), { depth: 2, nodeCap: 50, filter: { types: ['holds', 'shares'] } });
        expect(nodeIds(both)).toEqual(['account:A2', 'identifier:X', 'party:P2', 'party:P3']);
      });

      it('reach answers the nodes of egoNetwork alone, in id order, truncated when they are', async () => {
        const tenantId = await chain();
        const cases: EgoOptions[] = [
          { depth: 1, nodeCap: 50 },
          { depth: 2, nodeCap: 50 },
          { depth: 4, nodeCap: 50 },
          { depth: 4, nodeCap: 3 },
          { depth: 3, nodeCap: 50, filter: { types: ['transfer', 'holds'] } },
          { depth: 3, nodeCap: 50, filter: { since: day(3), until: day(4) } },
        ];
        for (const options of cases) {
          const net = await store.egoNetwork(tenantId, party('P1'), options);
          const reached = await store.reach(tenantId, party('P1'), options);
          expect(reached.nodes.map(ref)).toEqual(nodeIds(net));
          expect(reached.truncated).toBe(net.truncated);
        }
        expect((await store.reach(tenantId, party('P1'), { depth: 4, nodeCap: 3 })).truncated).toBe(true);
      });

      it('reachMany answers each request what egoNetwork and reach answer for it alone, in order', async () => {
        const tenantId = await chain();
        const requests: Array<{ center: NodeRef; options: EgoOptions }> = [
          { center: party('P1'), options: { depth: 4, nodeCap: 50 } },
          { center: party('P1'), options: { depth: 4, nodeCap: 3 } },
          { center: account('A1'), options: { depth: 3, nodeCap: 50, filter: { types: ['transfer'] } } },
          { center: account('A2'), options: { depth: 2, nodeCap: 50, filter: { since: day(3), until: day(4) } } },
          { center: account('A2'), options: { depth: 2, nodeCap: 50, filter: { since: day(1), until: day(2) } } },
          { center: party('P2'), options: { depth: 2, nodeCap: 50, filter: { types: ['holds', 'shares'] } } },
          { center: account('A1'), options: { depth: 2, nodeCap: 50, filter: { minAmount: 101n } } },
          { center: party('NOBODY'), options: { depth: 2, nodeCap: 50 } },
        ];
        const batch = await store.reachMany(tenantId, requests);
        expect(batch).toHaveLength(requests.length);
        for (const [i, { center, options }] of requests.entries()) {
          const net = await store.egoNetwork(tenantId, center, options);
          expect(batch[i]!.nodes.map(ref), `request ${i}`).toEqual(nodeIds(net));
          expect(batch[i]!.truncated, `request ${i}`).toBe(net.truncated);
          expect(batch[i], `request ${i}`).toEqual(await store.reach(tenantId, center, options));
        }
        expect(batch[1]!.truncated).toBe(true);
        expect(batch[0]!.nodes.length).toBeGreaterThan(batch[1]!.nodes.length);
        expect(batch[3]!.nodes.map(ref)).not.toEqual(batch[4]!.nodes.map(ref));
        expect(await store.reachMany(tenantId, [])).toEqual([]);
      });

      // A1 → A2: 100 (day 1), 200 (day 5), unpriced (day 6), 300 (day 9); A1 → A3: 50 (day 2).
      const movements = async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('m1', 'A1', 'A2', 100n, day(1)),
          g.transfer('m2', 'A1', 'A2', 200n, day(5)),
          g.transfer('m5', 'A1', 'A2', null, day(6)),
          g.transfer('m3', 'A1', 'A2', 300n, day(9)),
          g.transfer('m4', 'A1', 'A3', 50n, day(2)),
        ]);
        return g.tenantId;
      };
      const recentIds = (edge: GraphEdge) => edge.recent?.map((m) => m.movementId);

      it('without a filter, transfer edges carry all their movements and the latest ones', async () => {
        const tenantId = await movements();
        const net = await store.egoNetwork(tenantId, account('A1'), { depth: 1, nodeCap: 10 });
        const pair = edgeIn(net, transferId('A1', 'A2'));
        expect(pair).toMatchObject({ count: 4, sum: 600n, unpriced: 1, firstAt: day(1), lastAt: day(9) });
        expect(recentIds(pair)).toEqual(['m3', 'm5', 'm2', 'm1']);
        expect(pair.recent?.[0]).toEqual({ movementId: 'm3', from: 'A1', to: 'A2', occurredAt: day(9), amount: 300n });
        expect(pair.recent?.[1]?.amount).toBeNull();
      });

      it('an event-time window recomputes transfer edges from the movements inside it and drops pairs with none', async () => {
        const tenantId = await movements();
        const net = await store.egoNetwork(tenantId, account('A1'), { depth: 1, nodeCap: 10, filter: { since: day(4), until: day(10) } });
        expect(nodeIds(net)).toEqual(['account:A1', 'account:A2']);
        const pair = edgeIn(net, transferId('A1', 'A2'));
        expect(pair).toMatchObject({ count: 3, sum: 500n, unpriced: 1, firstAt: day(5), lastAt: day(9) });
        expect(recentIds(pair)).toEqual(['m3', 'm5', 'm2']);
      });

      it('minAmount keeps only movements of at least that amount, unpriced ones left out', async () => {
        const tenantId = await movements();
        const net = await store.egoNetwork(tenantId, account('A1'), { depth: 1, nodeCap: 10, filter: { minAmount: 200n } });
        expect(nodeIds(net)).toEqual(['account:A1', 'account:A2']);
        expect(edgeIn(net, transferId('A1', 'A2'))).toMatchObject({ count: 2, sum: 500n, unpriced: 0, firstAt: day(5), lastAt: day(9) });
        expect(recentIds(edgeIn(net, transferId('A1', 'A2')))).toEqual(['m3', 'm2']);
      });

      it('recent holds the 10 latest movements, latest first', async () => {
        const g = graphOf(newTenant());
        await store.apply(Array.from({ length: 12 }, (_, i) => g.transfer(`m${i + 1}`, 'A', 'B', BigInt(i + 1), day(i + 1))));
        const net = await store.egoNetwork(g.tenantId, account('A'), { depth: 1, nodeCap: 10 });
        const pair = edgeIn(net, transferId('A', 'B'));
        expect(pair.count).toBe(12);
        expect(recentIds(pair)).toEqual(['m12', 'm11', 'm10', 'm9', 'm8', 'm7', 'm6', 'm5', 'm4', 'm3']);
      });

      it('keeps at most nodeCap nodes (the center included) and says it was cut', async () => {
        const g = graphOf(newTenant());
        await store.apply(['B1', 'B2', 'B3', 'B4', 'B5'].map((b, i) => g.transfer(`m${i}`, 'A0', b, 10n, day(1))));
        const capped = await store.egoNetwork(g.tenantId, account('A0'), { depth: 2, nodeCap: 3 });
        expect(capped.nodes).toHaveLength(3);
        expect(nodeIds(capped)).toContain('account:A0');
        expect(capped.edges).toHaveLength(2);
        expectClosed(capped);
        expect(capped.truncated).toBe(true);
        const roomy = await store.egoNetwork(g.tenantId, account('A0'), { depth: 2, nodeCap: 6 });
        expect(roomy.nodes).toHaveLength(6);
        expect(roomy.truncated).toBe(false);
      });

      it('is the induced subgraph: an edge between two nodes of the last level is included', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('m1', 'C', 'A', 10n, day(1)), g.transfer('m2', 'C', 'B', 10n, day(2)), g.transfer('m3', 'A', 'B', 10n, day(3))]);
        const expected = [transferId('A', 'B'), transferId('C', 'A'), transferId('C', 'B')];
        expect(edgeIds(await store.egoNetwork(g.tenantId, account('C'), { depth: 1, nodeCap: 10 }))).toEqual(expected);
        const windowed = await store.egoNetwork(g.tenantId, account('C'), { depth: 1, nodeCap: 10, filter: { since: day(1), until: day(4) } });
        expect(edgeIds(windowed)).toEqual(expected);
      });
    });

    describe('holdings', () => {
      it('lists the accounts each party held up to its instant, as a depth-1 holds ego network does', async () => {
        const tenantId = newTenant();
        const g = graphOf(tenantId);
        await store.apply([
          g.account('A2', 'P1', day(2), { validFrom: day(2) }),
          g.account('A1', 'P1', day(1), { validFrom: day(1), validTo: day(3) }),
          g.account('A3', 'P1', day(5), { validFrom: day(5) }),
          g.account('B1', 'P2', day(1)),
          g.relationship('R1', 'beneficial_owner', party('P1'), party('P2'), day(1)),
        ]);
        const requests = [
          { party: 'P1', until: day(4) },
          { party: 'P2', until: day(4) },
          { party: 'P1', until: day(6) },
          { party: 'P9', until: day(6) },
        ];
        const lists = await store.holdings(tenantId, requests, 10);
        expect(lists).toEqual([['A1', 'A2'], ['B1'], ['A1', 'A2', 'A3'], []]);
        for (const [i, request] of requests.entries()) {
          const ego = await store.egoNetwork(tenantId, party(request.party), { depth: 1, nodeCap: 20, filter: { types: ['holds'], until: request.until } });
          expect(ego.nodes.filter((n) => n.kind === 'account').map((n) => n.key).sort()).toEqual(lists[i]);
        }
        expect(await store.holdings(tenantId, [{ party: 'P1', until: day(6) }], 2)).toEqual([['A1', 'A2']]);
        expect(await store.holdings(`${tenantId}-other`, [{ party: 'P1', until: day(6) }], 10)).toEqual([[]]);
      });
    });

    describe('shortestPaths', () => {
      it('finds the single path party → account → account → party, nodes and edges in order', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.account('A1', 'P1', day(1)), g.account('A9', 'P1', day(1)), g.account('A2', 'P2', day(1)), g.transfer('m1', 'A1', 'A2', 10n, day(2))]);
        const found = await store.shortestPaths(g.tenantId, party('P1'), party('P2'), { maxDepth: 4, limit: 5 });
        expect(found.paths).toEqual([
          { nodes: [party('P1'), account('A1'), account('A2'), party('P2')], edges: [holdsId('P1', 'A1'), transferId('A1', 'A2'), holdsId('P2', 'A2')] },
        ]);
        expect(edgeIds(found.subgraph)).toEqual([holdsId('P1', 'A1'), holdsId('P2', 'A2'), transferId('A1', 'A2')]);
        expect(nodeIds(found.subgraph)).toEqual(['account:A1', 'account:A2', 'party:P1', 'party:P2']);
        expect(edgeIn(found.subgraph, transferId('A1', 'A2'))).toMatchObject({ count: 1, sum: 10n });

        expect((await store.shortestPaths(g.tenantId, party('P1'), party('P2'), { maxDepth: 2, limit: 5 })).paths).toEqual([]);
        expect((await store.shortestPaths(g.tenantId, party('P1'), party('P1'), { maxDepth: 4, limit: 5 })).paths).toEqual([{ nodes: [party('P1')], edges: [] }]);
      });

      it('finds no path between two components', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.account('A1', 'P1', day(1)), g.account('A3', 'P3', day(1))]);
        const found = await store.shortestPaths(g.tenantId, party('P1'), party('P3'), { maxDepth: 4, limit: 5 });
        expect(found.paths).toEqual([]);
      });

      it('returns every equally short path, never a longer one, at most limit', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('m1', 'S', 'M1', 10n, day(1)),
          g.transfer('m2', 'M1', 'T', 10n, day(2)),
          g.transfer('m3', 'S', 'M2', 10n, day(1)),
          g.transfer('m4', 'M2', 'T', 10n, day(2)),
          g.transfer('m5', 'S', 'L1', 10n, day(1)),
          g.transfer('m6', 'L1', 'L2', 10n, day(2)),
          g.transfer('m7', 'L2', 'T', 10n, day(3)),
        ]);
        const found = await store.shortestPaths(g.tenantId, account('S'), account('T'), { maxDepth: 4, limit: 5 });
        const routes = found.paths.map((p) => p.nodes.map((n) => n.key).join('>')).sort();
        expect(routes).toEqual(['S>M1>T', 'S>M2>T']);
        const subgraphEdges = new Set(edgeIds(found.subgraph));
        for (const path of found.paths) for (const id of path.edges) expect(subgraphEdges.has(id), id).toBe(true);
        expect(found.subgraph.truncated).toBe(false);
        const one = await store.shortestPaths(g.tenantId, account('S'), account('T'), { maxDepth: 4, limit: 1 });
        expect(one.paths).toHaveLength(1);
        // The limit left a path out: the answer says so.
        expect(one.subgraph.truncated).toBe(true);
      });

      // Engines return rows in orders of their own: PostgreSQL and Neo4j listed the two paths
      // over a pair paid both ways in opposite orders before the order was fixed.
      it('lists equally short paths by their edges, one order whichever engine answers', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('m1', 'S', 'B', 10n, day(1)),
          g.transfer('m2', 'B', 'S', 10n, day(2)),
          g.transfer('m3', 'S', 'A', 10n, day(1)),
          g.transfer('m4', 'A', 'T', 10n, day(2)),
          g.transfer('m5', 'B', 'T', 10n, day(2)),
        ]);
        const all = [
          [transferId('B', 'S'), transferId('B', 'T')],
          [transferId('S', 'A'), transferId('A', 'T')],
          [transferId('S', 'B'), transferId('B', 'T')],
        ];
        for (const [from, to] of [
          ['S', 'T'],
          ['T', 'S'],
        ] as const) {
          const found = await store.shortestPaths(g.tenantId, account(from), account(to), { maxDepth: 4, limit: 5 });
          const expected = from === 'S' ? all : all.map((edges) => [...edges].reverse()).sort((x, y) => (x.join() < y.join() ? -1 : 1));
          expect(found.paths.map((p) => p.edges)).toEqual(expected);
        }
        const two = await store.shortestPaths(g.tenantId, account('S'), account('T'), { maxDepth: 4, limit: 2 });
        expect(two.paths.map((p) => p.edges)).toEqual(all.slice(0, 2));
      });
    });

    describe('component', () => {
      it('is every node connected to the start, and nothing else', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('m1', 'A', 'B', 1n, day(1)),
          g.transfer('m2', 'B', 'C', 1n, day(1)),
          g.account('C', 'P', day(1)),
          g.transfer('m3', 'E', 'F', 1n, day(1)),
        ]);
        const component = await store.component(g.tenantId, account('A'), { nodeCap: 50 });
        expect(nodeIds(component)).toEqual(['account:A', 'account:B', 'account:C', 'party:P']);
        expect(component.edges).toHaveLength(3);
        expect(component.truncated).toBe(false);
      });

      it('stops at nodeCap and says so', async () => {
        const g = graphOf(newTenant());
        await store.apply(Array.from({ length: 20 }, (_, i) => g.transfer(`m${i}`, `A${i}`, `A${i + 1}`, 1n, day(1))));
        const component = await store.component(g.tenantId, account('A0'), { nodeCap: 5 });
        expect(component.nodes).toHaveLength(5);
        expect(component.truncated).toBe(true);
        expectClosed(component);
      });
    });

    describe('cycles', () => {
      const window = { since: day(1), until: day(30), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10 };
      const cycleIds = (found: { cycles: Array<{ movements: Array<{ movementId: string }> }> }) => found.cycles.map((c) => c.movements.map((m) => m.movementId));

      it('finds a time-ordered cycle within tolerance, its movements in order', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('c1', 'A', 'B', 1000n, day(2)), g.transfer('c2', 'B', 'C', 980n, day(3)), g.transfer('c3', 'C', 'A', 1050n, day(4))]);
        const found = await store.cycles(g.tenantId, 'A', window);
        expect(found).toEqual({
          cycles: [
            {
              movements: [
                { movementId: 'c1', from: 'A', to: 'B', occurredAt: day(2), amount: 1000n },
                { movementId: 'c2', from: 'B', to: 'C', occurredAt: day(3), amount: 980n },
                { movementId: 'c3', from: 'C', to: 'A', occurredAt: day(4), amount: 1050n },
              ],
            },
          ],
          truncated: false,
        });
        expect((await store.cycles(g.tenantId, 'A', { ...window, maxLength: 2 })).cycles).toEqual([]);
      });

      it('given the start\'s own payments out, answers as it does reading them', async () => {
        const g = graphOf(newTenant());
        // Two cycles from A (one of three hops, one of two), a payment out before the window, an
        // unpriced one, one to itself, and someone else's payment the caller passed by mistake.
        await store.apply([
          g.transfer('c1', 'A', 'B', 1000n, day(2)),
          g.transfer('c2', 'B', 'C', 980n, day(3)),
          g.transfer('c3', 'C', 'A', 1050n, day(4)),
          g.transfer('d1', 'A', 'D', 500n, day(5)),
          g.transfer('d2', 'D', 'A', 500n, day(6)),
          g.transfer('e1', 'A', 'E', 700n, day(0)),
          g.transfer('u1', 'A', 'B', null, day(7)),
          g.transfer('s1', 'A', 'A', 10n, day(8)),
        ]);
        const given = [
          { movementId: 'c1', from: 'A', to: 'B', occurredAt: day(2), amount: 1000n },
          { movementId: 'd1', from: 'A', to: 'D', occurredAt: day(5), amount: 500n },
          { movementId: 'e1', from: 'A', to: 'E', occurredAt: day(0), amount: 700n },
          { movementId: 'u1', from: 'A', to: 'B', occurredAt: day(7), amount: null },
          { movementId: 's1', from: 'A', to: 'A', occurredAt: day(8), amount: 10n },
          { movementId: 'c2', from: 'B', to: 'C', occurredAt: day(3), amount: 980n },
        ];
        const read = await store.cycles(g.tenantId, 'A', window);
        expect(cycleIds(read)).toEqual([['c1', 'c2', 'c3'], ['d1', 'd2']]);
        expect(await store.cycles(g.tenantId, 'A', { ...window, firstHops: given })).toEqual(read);
        // The search takes the first hops it is given: without c1, no cycle through B.
        expect(cycleIds(await store.cycles(g.tenantId, 'A', { ...window, firstHops: given.filter((m) => m.movementId !== 'c1') }))).toEqual([['d1', 'd2']]);
      });

      it('ignores a cycle with a hop earlier than the one before it', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('c1', 'A', 'B', 1000n, day(2)), g.transfer('c2', 'B', 'C', 1000n, day(5)), g.transfer('c3', 'C', 'A', 1000n, day(4))]);
        expect((await store.cycles(g.tenantId, 'A', window)).cycles).toEqual([]);
      });

      it('ignores a cycle with a hop outside the amount tolerance', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('c1', 'A', 'B', 1000n, day(2)), g.transfer('c2', 'B', 'C', 1200n, day(3)), g.transfer('c3', 'C', 'A', 1000n, day(4))]);
        expect((await store.cycles(g.tenantId, 'A', window)).cycles).toEqual([]);
      });

      it('finds a cycle of two with minLength 2, not with minLength 3', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('c1', 'A', 'B', 500n, day(2)), g.transfer('c2', 'B', 'A', 510n, day(3))]);
        expect(cycleIds(await store.cycles(g.tenantId, 'A', window))).toEqual([['c1', 'c2']]);
        expect(cycleIds(await store.cycles(g.tenantId, 'A', { ...window, minLength: 3 }))).toEqual([]);
      });

      it('ignores a cycle partly outside [since, until]', async () => {
        const g = graphOf(newTenant());
        await store.apply([g.transfer('c1', 'A', 'B', 1000n, day(2)), g.transfer('c2', 'B', 'C', 1000n, day(3)), g.transfer('c3', 'C', 'A', 1000n, day(4))]);
        expect(cycleIds(await store.cycles(g.tenantId, 'A', { ...window, since: day(1), until: day(5) }))).toEqual([['c1', 'c2', 'c3']]);
        expect(cycleIds(await store.cycles(g.tenantId, 'A', { ...window, since: day(3) }))).toEqual([]);
        expect(cycleIds(await store.cycles(g.tenantId, 'A', { ...window, until: day(3, 12) }))).toEqual([]);
      });

      it('returns at most limit cycles and says there were more', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('c1', 'A', 'B', 100n, day(2)),
          g.transfer('c2', 'B', 'A', 100n, day(3)),
          g.transfer('c3', 'A', 'C', 100n, day(5)),
          g.transfer('c4', 'C', 'A', 100n, day(6)),
        ]);
        const all = await store.cycles(g.tenantId, 'A', window);
        expect(cycleIds(all).sort()).toEqual([
          ['c1', 'c2'],
          ['c3', 'c4'],
        ]);
        expect(all.truncated).toBe(false);
        const one = await store.cycles(g.tenantId, 'A', { ...window, limit: 1 });
        expect(one.cycles).toHaveLength(1);
        expect(one.truncated).toBe(true);
      });
    });

    describe('many searches at once (cyclesMany, scatterGatherMany, sharedAttributesMany)', () => {
      it('cyclesMany answers each search, in order, as cycles does alone', async () => {
        const g = graphOf(newTenant());
        // A: a cycle of three and one of two; B: the cycle of three seen from B, ending later;
        // E: none. C's search ends before C pays A back.
        await store.apply([
          g.transfer('c1', 'A', 'B', 1000n, day(2)),
          g.transfer('c2', 'B', 'C', 980n, day(3)),
          g.transfer('c3', 'C', 'A', 1050n, day(4)),
          g.transfer('c4', 'A', 'B', 1000n, day(6)),
          g.transfer('d1', 'A', 'D', 500n, day(5)),
          g.transfer('d2', 'D', 'A', 500n, day(6)),
          g.transfer('e1', 'E', 'F', 500n, day(5)),
        ]);
        const window = { since: day(1), until: day(30), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10 };
        const requests = [
          { account: 'A', options: window },
          { account: 'B', options: { ...window, maxLength: 3 } },
          { account: 'E', options: window },
          { account: 'C', options: { ...window, until: day(3, 12) } },
          { account: 'A', options: { ...window, limit: 1 } },
          { account: 'A', options: { ...window, firstHops: [{ movementId: 'd1', from: 'A', to: 'D', occurredAt: day(5), amount: 500n }] } },
        ];
        const many = await store.cyclesMany(g.tenantId, requests);
        const alone = await Promise.all(requests.map((r) => store.cycles(g.tenantId, r.account, r.options)));
        expect(many).toEqual(alone);
        expect(many.map((found) => found.cycles.map((c) => c.movements.map((m) => m.movementId)))).toEqual([
          [['c1', 'c2', 'c3'], ['d1', 'd2']],
          [['c2', 'c3', 'c4']],
          [],
          [],
          // The search stops at the first length that reaches the limit: the cycle of two.
          [['d1', 'd2']],
          [['d1', 'd2']],
        ]);
        expect(many.map((found) => found.truncated)).toEqual([false, false, false, false, true, false]);
        expect(await store.cyclesMany(g.tenantId, [])).toEqual([]);
      });

      it('scatterGatherMany answers each source, in order, as scatterGather does alone', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          ...['I1', 'I2', 'I3'].map((i) => g.transfer(`s-${i}`, 'S', i, 100n, day(2))),
          ...['I1', 'I2', 'I3'].map((i) => g.transfer(`g-${i}`, i, 'T', 90n, day(3))),
          ...['J1', 'J2'].map((j) => g.transfer(`r-${j}`, 'R', j, 50n, day(4))),
          ...['J1', 'J2'].map((j) => g.transfer(`h-${j}`, j, 'U', 40n, day(5))),
          ...['J1', 'J2'].map((j) => g.transfer(`k-${j}`, j, 'V', 10n, day(5))),
        ]);
        const options = { since: day(1), until: day(10), minIntermediaries: 2, limit: 10 };
        const requests = [
          { source: 'S', options },
          { source: 'R', options: { ...options, limit: 1 } },
          { source: 'T', options },
          { source: 'S', options: { ...options, until: day(2, 12) } },
          { source: 'R', options },
        ];
        const many = await store.scatterGatherMany(g.tenantId, requests);
        expect(many).toEqual(await Promise.all(requests.map((r) => store.scatterGather(g.tenantId, r.source, r.options))));
        expect(many[0]).toEqual({ source: 'S', gathers: [{ account: 'T', intermediaries: ['I1', 'I2', 'I3'], sum: 270n }], truncated: false });
        expect(many[1]).toEqual({ source: 'R', gathers: [{ account: 'U', intermediaries: ['J1', 'J2'], sum: 80n }], truncated: true });
        expect(many[2]).toEqual({ source: 'T', gathers: [], truncated: false });
        expect(many[3]).toEqual({ source: 'S', gathers: [], truncated: false });
        expect(many[4]!.gathers.map((x) => x.account)).toEqual(['U', 'V']);
        expect(await store.scatterGatherMany(g.tenantId, [])).toEqual([]);
      });

      it('sharedAttributesMany answers each party, in order, as sharedAttributes does alone', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.party('P1', day(1), { type: 'person' }, ['X']),
          g.party('P2', day(1), { type: 'person' }, ['X']),
          g.seen(party('P1'), device('D'), day(2)),
          g.seen(party('P2'), device('D'), day(3)),
          g.seen(party('P4'), device('D'), day(3)),
          g.seen(party('P3'), device('D3'), day(3)),
        ]);
        const requests = [
          { party: 'P1', limit: 10, until: day(30) },
          { party: 'P3', limit: 10, until: day(30) },
          { party: 'P1', limit: 1, until: day(30) },
          { party: 'P4', limit: 10, until: day(30) },
          { party: 'P9', limit: 10, until: day(30) },
          { party: 'P1', limit: 10, until: day(2) },
        ];
        const many = await store.sharedAttributesMany(g.tenantId, requests);
        expect(many).toEqual(await Promise.all(requests.map((r) => store.sharedAttributes(g.tenantId, r.party, { limit: r.limit, until: r.until }))));
        expect(many.map((found) => [found.shared.map((s) => `${s.via.kind}:${s.via.key}=${[...s.parties].sort().join('+')}`), found.truncated])).toEqual([
          [['device:D=P2+P4', 'identifier:X=P2'], false],
          [[], false],
          [['device:D=P2+P4'], true],
          [['device:D=P1+P2'], false],
          [[], false],
          [['identifier:X=P2'], false],
        ]);
        expect(await store.sharedAttributesMany(g.tenantId, [])).toEqual([]);
      });
    });

    describe('fanIn / fanOut', () => {
      // Into X: S1 100 + 200, S2 500, S3 50 + unpriced, S4 1000 after the window. Out of X: T1 70, T2 30.
      const flows = async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('i1', 'S1', 'X', 100n, day(2)),
          g.transfer('i2', 'S1', 'X', 200n, day(3)),
          g.transfer('i3', 'S2', 'X', 500n, day(4)),
          g.transfer('i4', 'S3', 'X', 50n, day(5)),
          g.transfer('i5', 'S3', 'X', null, day(6)),
          g.transfer('i6', 'S4', 'X', 1000n, day(20)),
          g.transfer('o1', 'X', 'T1', 70n, day(2)),
          g.transfer('o2', 'X', 'T2', 30n, day(3)),
        ]);
        return g.tenantId;
      };
      const window = { since: day(1), until: day(10), limit: 10 };

      it('lists counterparties by sum, largest first, with totals, inside the window', async () => {
        const tenantId = await flows();
        const fanIn = await store.fanIn(tenantId, 'X', window);
        expect(fanIn).toEqual({
          account: 'X',
          counterparties: [
            { account: 'S2', count: 1, sum: 500n, unpriced: 0, firstAt: day(4), lastAt: day(4) },
            { account: 'S1', count: 2, sum: 300n, unpriced: 0, firstAt: day(2), lastAt: day(3) },
            { account: 'S3', count: 2, sum: 50n, unpriced: 1, firstAt: day(5), lastAt: day(6) },
          ],
          count: 5,
          sum: 850n,
          truncated: false,
        });
        const fanOut = await store.fanOut(tenantId, 'X', window);
        expect(fanOut.counterparties.map((c) => [c.account, c.sum])).toEqual([
          ['T1', 70n],
          ['T2', 30n],
        ]);
        expect(fanOut).toMatchObject({ count: 2, sum: 100n, truncated: false });
        expect((await store.fanIn(tenantId, 'X', { ...window, until: day(30) })).sum).toBe(1850n);
      });

      it('limit lists fewer, keeps the totals over all, and says so', async () => {
        const tenantId = await flows();
        const fanIn = await store.fanIn(tenantId, 'X', { ...window, limit: 2 });
        expect(fanIn.counterparties.map((c) => c.account)).toEqual(['S2', 'S1']);
        expect(fanIn).toMatchObject({ count: 5, sum: 850n, truncated: true });
      });

      it('counterpartyCounts counts the distinct others in each window, no further than one past its bound', async () => {
        const tenantId = await flows();
        const { since, until } = window;
        const g = graphOf(tenantId);
        // X paying itself deals with nobody.
        await store.apply([g.transfer('self', 'X', 'X', 10n, day(4))]);
        const ask = (account: string, direction: 'in' | 'out', atMost = 10, from = since, to = until) => ({ account, direction, since: from, until: to, atMost });
        expect(
          await store.counterpartyCounts(tenantId, [
            ask('X', 'in'),
            ask('X', 'in', 10, since, day(30)),
            ask('X', 'in', 1),
            ask('X', 'out'),
            ask('X', 'out', 10, day(3)),
            ask('T1', 'out'),
            ask('nobody', 'in'),
            ask('S1', 'out'),
          ]),
        ).toEqual([3, 4, 2, 2, 1, 0, 0, 1]);
        expect(await store.counterpartyCounts(tenantId, [])).toEqual([]);
      });
    });

    describe('scatterGather / gatherScatter', () => {
      it('finds a source scattering to intermediaries that gather into one account', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          ...['I1', 'I2', 'I3'].map((i) => g.transfer(`s-${i}`, 'S', i, 100n, day(2))),
          g.transfer('g-I1', 'I1', 'T', 90n, day(3)),
          g.transfer('g-I2', 'I2', 'T', 90n, day(3)),
          g.transfer('g-I3', 'I3', 'T', 90n, day(4)),
          // I4 paid T before the source paid it: not a relay.
          g.transfer('g-I4', 'I4', 'T', 90n, day(3)),
          g.transfer('s-I4', 'S', 'I4', 100n, day(5)),
        ]);
        const options = { since: day(1), until: day(10), minIntermediaries: 3, limit: 10 };
        expect(await store.scatterGather(g.tenantId, 'S', options)).toEqual({
          source: 'S',
          gathers: [{ account: 'T', intermediaries: ['I1', 'I2', 'I3'], sum: 270n }],
          truncated: false,
        });
        expect((await store.scatterGather(g.tenantId, 'S', { ...options, minIntermediaries: 4 })).gathers).toEqual([]);
      });

      it('lists the sources and targets of a hub with their sums', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.transfer('a', 'S1', 'H', 100n, day(2)),
          g.transfer('b', 'S2', 'H', 300n, day(2)),
          g.transfer('c', 'H', 'T1', 50n, day(3)),
          g.transfer('d', 'H', 'T2', 250n, day(3)),
        ]);
        const hub = await store.gatherScatter(g.tenantId, 'H', { since: day(1), until: day(10), limit: 10 });
        expect(hub.sources.map((c) => [c.account, c.sum])).toEqual([
          ['S2', 300n],
          ['S1', 100n],
        ]);
        expect(hub.targets.map((c) => [c.account, c.sum])).toEqual([
          ['T2', 250n],
          ['T1', 50n],
        ]);
        expect(hub).toMatchObject({ hub: 'H', inSum: 400n, outSum: 300n, truncated: false });
      });
    });

    describe('sharedAttributes', () => {
      it('lists the other parties linked through each identifier, device or ip', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.party('P1', day(1), { type: 'person' }, ['X']),
          g.party('P2', day(1), { type: 'person' }, ['X']),
          g.seen(party('P1'), device('D'), day(2)),
          g.seen(party('P2'), device('D'), day(3)),
          g.seen(party('P4'), device('D'), day(3)),
          g.seen(party('P3'), device('D3'), day(3)),
        ]);
        const shared = await store.sharedAttributes(g.tenantId, 'P1', { limit: 10, until: day(30) });
        const normalised = shared.shared.map((s) => ({ via: s.via, parties: [...s.parties].sort() })).sort((a, b) => (ref(a.via) < ref(b.via) ? -1 : 1));
        expect(normalised).toEqual([
          { via: device('D'), parties: ['P2', 'P4'] },
          { via: identifier('X'), parties: ['P2'] },
        ]);
        expect(shared.truncated).toBe(false);
        expect(await store.sharedAttributes(g.tenantId, 'P3', { limit: 10, until: day(30) })).toEqual({ shared: [], truncated: false });
        const one = await store.sharedAttributes(g.tenantId, 'P1', { limit: 1, until: day(30) });
        expect(one.shared).toHaveLength(1);
        expect(one.truncated).toBe(true);
      });

      it('counts only links first seen (or valid) by the instant asked: nothing after it', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.party('P1', day(1), { type: 'person' }, ['X']),
          g.party('P2', day(5), { type: 'person' }, ['X']),
          g.seen(party('P1'), device('D'), day(2)),
          g.seen(party('P2'), device('D'), day(3)),
        ]);
        const at = async (until: Date) => (await store.sharedAttributes(g.tenantId, 'P1', { limit: 10, until })).shared.map((s) => `${ref(s.via)}=${s.parties.join('+')}`).sort();
        // Day 2: P2 had neither the device nor the identifier yet.
        expect(await at(day(2))).toEqual([]);
        expect(await at(day(3))).toEqual(['device:D=P2']);
        expect(await at(day(5))).toEqual(['device:D=P2', 'identifier:X=P2']);
      });
    });

    describe('tenancy', () => {
      it("never shows one tenant's graph to another, even under the same keys", async () => {
        const a = graphOf(newTenant());
        const b = graphOf(newTenant());
        await store.apply([a.account('A1', 'P1', day(1), { attrs: { type: 'wallet' } }), a.transfer('m1', 'A1', 'A2', 100n, day(2))]);
        await store.apply([
          b.account('A1', 'P1', day(1), { attrs: { type: 'merchant' } }),
          b.transfer('m1', 'A1', 'A2', 999n, day(2)),
          b.transfer('m2', 'A2', 'A1', 999n, day(3)),
          b.transfer('m3', 'A2', 'A3', 999n, day(3)),
          b.transfer('m4', 'A1', 'A4', 10n, day(2)),
          b.transfer('m5', 'A4', 'A3', 10n, day(3)),
          b.transfer('m6', 'A5', 'A3', 10n, day(3)),
          b.transfer('m7', 'A5', 'A1', 10n, day(3)),
          b.seen(party('P1'), device('D'), day(2)),
          b.seen(party('P2'), device('D'), day(2)),
        ]);
        const t = a.tenantId;
        expect(await store.node(t, account('A1'))).toEqual({ kind: 'account', key: 'A1', attrs: { type: 'wallet' } });
        expect(await store.node(t, account('A3'))).toBeNull();
        const net = await store.egoNetwork(t, account('A1'), { depth: 3, nodeCap: 50 });
        expect(nodeIds(net)).toEqual(['account:A1', 'account:A2', 'party:P1']);
        expect(edgeIn(net, transferId('A1', 'A2'))).toMatchObject({ count: 1, sum: 100n });
        expect(nodeIds(await store.component(t, party('P1'), { nodeCap: 50 }))).toEqual(['account:A1', 'account:A2', 'party:P1']);
        expect((await store.shortestPaths(t, account('A1'), account('A3'), { maxDepth: 4, limit: 5 })).paths).toEqual([]);
        expect((await store.cycles(t, 'A1', { since: day(1), until: day(30), minLength: 2, maxLength: 4, tolerance: 0.1, limit: 10 })).cycles).toEqual([]);
        expect(await store.fanOut(t, 'A1', { since: day(1), until: day(30), limit: 10 })).toMatchObject({ count: 1, sum: 100n });
        expect((await store.fanIn(t, 'A1', { since: day(1), until: day(30), limit: 10 })).counterparties).toEqual([]);
        expect((await store.scatterGather(t, 'A1', { since: day(1), until: day(30), minIntermediaries: 1, limit: 10 })).gathers).toEqual([]);
        expect(await store.gatherScatter(t, 'A2', { since: day(1), until: day(30), limit: 10 })).toMatchObject({ inSum: 100n, outSum: 0n, targets: [] });
        expect((await store.sharedAttributes(t, 'P1', { limit: 10, until: day(30) })).shared).toEqual([]);
      });
    });

    describe('dense graphs', () => {
      it('a hub with 3,000 counterparties stays bounded by nodeCap', async () => {
        const g = graphOf(newTenant());
        await store.apply([
          g.account('HUB', 'OWNER', day(1)),
          ...Array.from({ length: 3000 }, (_, i) => g.transfer(`m${i}`, `C${String(i).padStart(4, '0')}`, 'HUB', 100n, day(2))),
        ]);
        const ego = await store.egoNetwork(g.tenantId, account('HUB'), { depth: 2, nodeCap: 100 });
        expect(ego.nodes.length).toBeLessThanOrEqual(100);
        expect(ego.nodes.length).toBeGreaterThan(1);
        expect(nodeIds(ego)).toContain('account:HUB');
        expect(ego.truncated).toBe(true);
        expectClosed(ego);
        // Capped in a batch as alone, through stored edges and through rebuilt transfers.
        const capped: Array<{ center: NodeRef; options: EgoOptions }> = [
          { center: account('HUB'), options: { depth: 2, nodeCap: 100 } },
          { center: party('OWNER'), options: { depth: 2, nodeCap: 50, filter: { since: day(1), until: day(3) } } },
        ];
        const reached = await store.reachMany(g.tenantId, capped);
        for (const [i, { center, options }] of capped.entries()) {
          const net = await store.egoNetwork(g.tenantId, center, options);
          expect(reached[i]!.nodes.map(ref)).toEqual(nodeIds(net));
          expect(reached[i]!.truncated).toBe(true);
        }
        const component = await store.component(g.tenantId, party('OWNER'), { nodeCap: 100 });
        expect(component.nodes.length).toBeLessThanOrEqual(100);
        expect(component.truncated).toBe(true);
        const fanIn = await store.fanIn(g.tenantId, 'HUB', { since: day(1), until: day(10), limit: 10 });
        expect(fanIn).toMatchObject({ count: 3000, sum: 300_000n, truncated: true });
        expect(fanIn.counterparties).toHaveLength(10);
      });
    });
  });
}

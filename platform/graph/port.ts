// The relationship network of the canonical model. A port (detectors and the API never know which
// engine answers): the embedded adapter is PostgreSQL; a Neo4j adapter fits behind the same
// interface and passes the same contract suite (contract.ts). Every query is bounded (node caps,
// path caps, a statement timeout) and says when it stopped short (`truncated`).

import type { EdgeType, NodeKind } from '../../schemas/graph.ts';

export { EDGE_TYPES,   type EdgeType, type NodeKind,  } from '../../schemas/graph.ts';

// Parties, accounts and instruments are keyed by the customer's external id; identifiers, devices
// and ips by their keyed hash (the graph never holds the raw value).
export interface NodeRef {
  kind: NodeKind;
  key: string;
}


export function nodeId(node: NodeRef): string {
  return `${node.kind}:${node.key}`;
}

// External ids are free text: `>` and `#` inside a key or qualifier are percent-escaped (and `%`
// itself), so no two edges share an id (answers key edges by id; a drawing library refuses
// duplicates). Ids of keys without those characters read as they always did.
const idPart = (text: string) => text.replace(/[%>#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function edgeId(type: string, from: NodeRef, to: NodeRef, qualifier: string): string {
  return `${type}:${from.kind}:${idPart(from.key)}>${to.kind}:${idPart(to.key)}${qualifier ? `#${idPart(qualifier)}` : ''}`;
}

// ---- writes (from pipelines/graph) ----

// Edges an entity version declares: the holder of an account, a party's identifiers, a
// relationship's ends. A newer current version replaces the set its entity declared before:
// edges it no longer declares are closed (valid_to = the version's occurred_at), never deleted.
export interface DeclaredEdge {
  type: EdgeType;
  from: NodeRef;
  to: NodeRef;
  // Tells apart two edges of one type between the same nodes (a relationship's external id).
  qualifier: string;
  validFrom: Date | null;
  validTo: Date | null;
  attrs: Record<string, unknown>;
}

// A declared edge with no qualifier, no validity bounds and no attributes unless given.
export function declaredEdge(type: EdgeType, from: NodeRef, to: NodeRef, extra: Partial<DeclaredEdge> = {}): DeclaredEdge {
  return { type, from, to, qualifier: '', validFrom: null, validTo: null, attrs: {}, ...extra };
}

export interface TransferFact {
  movementId: string;
  from: string;
  to: string;
  // In the tenant's base asset (minor units); null when no FX rate was available.
  amount: bigint | null;
}

// What one canonical change does to the network. Applying is idempotent on the event id: a change
// applied twice changes nothing the second time.
export interface GraphChange {
  tenantId: string;
  eventId: string;
  occurredAt: Date;
  // The current version of an entity: its node's attributes (relationships are edges, not nodes)
  // and the edges it declares. origin names the entity (`account:A1`); sequence is the version's
  // (null: none). A store applies a version only above the one it holds, as canonical ranks them.
  entity?: { origin: string; sequence: number | null; node: { ref: NodeRef; attrs: Record<string, unknown> } | null; edges: DeclaredEdge[] };
  // A movement between two accounts.
  transfer?: TransferFact;
  // The movement this change records (its external id), when it records one.
  movement?: string;
  // The movement this change's movement corrects: its transfers and sightings leave the network,
  // and one that arrives later never enters it (decision 0064).
  retracts?: string;
  // Edges observed in facts (an instrument used, a device or ip seen): each sighting kept, so the
  // edge's count, first and last seen are those of its sightings (in a window, of those inside it).
  observed?: Array<{ type: 'uses' | 'shares'; from: NodeRef; to: NodeRef }>;
}

// ---- reads ----

export interface EdgeFilter {
  // Event-time window: transfers and sightings inside it, declared edges valid at some time in it.
  since?: Date;
  until?: Date;
  types?: EdgeType[];
  // Transfers only: movements of at least this amount (base minor units); unpriced ones are left out.
  minAmount?: bigint;
}

export interface GraphNode extends NodeRef {
  // The entity's current attributes (type, status, ...); null for identifiers, devices, ips and
  // for entities the graph has only seen referenced.
  attrs: Record<string, unknown> | null;
}

export interface TransferMovement {
  movementId: string;
  from: string;
  to: string;
  occurredAt: Date;
  amount: bigint | null;
}

export interface GraphEdge extends DeclaredEdge {
  // Stable: `<type>:<from kind>:<from key>><to kind>:<to key>` plus `#<qualifier>` when there is
  // one, `%`, `>` and `#` in keys and qualifier percent-escaped (edgeId).
  id: string;
  // Transfers: movements (in the filter's window) and their priced sum; observed edges: sightings
  // (in the filter's window).
  count: number;
  sum: bigint | null;
  unpriced: number;
  firstAt: Date | null;
  lastAt: Date | null;
  // Transfers: the latest movements (at most 10) in the filter's window.
  recent?: TransferMovement[];
}

export interface Subgraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  // Some nodes or edges within reach were left out by a cap.
  truncated: boolean;
}

export interface EgoOptions {
  // 1 to 4 hops, over edges of any direction.
  depth: number;
  filter?: EdgeFilter;
  // At most this many nodes (the center included).
  nodeCap: number;
}

export interface PathOptions {
  maxDepth: number;
  filter?: EdgeFilter;
  // At most this many shortest paths are returned.
  limit: number;
}

export interface Path {
  nodes: NodeRef[];
  // edges[i] joins nodes[i] and nodes[i + 1] (in either direction); ids into the subgraph's edges.
  edges: string[];
}

export interface CycleOptions {
  since: Date;
  until: Date;
  minLength: number;
  maxLength: number;
  // Every hop's amount within this fraction of the first hop's (0.1 = ±10 %).
  tolerance: number;
  limit: number;
  // Every payment the start account made to an account in [since, until] (a superset will do: the
  // search keeps those it would have read), when the caller already holds them: the search starts
  // from them instead of reading them (detection has them in the account's activity snapshot).
  firstHops?: readonly TransferMovement[];
}

export interface Cycle {
  // Time-ordered: each movement no earlier than the one before it; the last returns to the start.
  movements: TransferMovement[];
}

export interface FlowSet {
  account: string;
  // Counterparty accounts, largest sum first.
  counterparties: Array<{ account: string; count: number; sum: bigint; unpriced: number; firstAt: Date; lastAt: Date }>;
  count: number;
  sum: bigint;
  truncated: boolean;
}

export interface TwoHopOptions {
  since: Date;
  until: Date;
  // Only ends reached through at least this many distinct intermediaries.
  minIntermediaries: number;
  limit: number;
}

// scatter-gather from a source: source → intermediaries → one gathering account.
// gather-scatter through a hub: many sources → hub → many targets.
export interface ScatterGather {
  source: string;
  gathers: Array<{ account: string; intermediaries: string[]; sum: bigint }>;
  truncated: boolean;
}

export interface GatherScatter {
  hub: string;
  sources: FlowSet['counterparties'];
  targets: FlowSet['counterparties'];
  inSum: bigint;
  outSum: bigint;
  truncated: boolean;
}

export interface SharedAttribute {
  via: NodeRef;
  // Other parties linked to the same identifier, device or ip, now or before (an identifier a
  // party's newer version dropped still links it: shared history is evidence), counting only links
  // valid or first seen by the `until` asked (nothing after an evaluation's instant).
  parties: string[];
}

export interface CounterpartyCountRequest {
  account: string;
  direction: 'in' | 'out';
  since: Date;
  until: Date;
  atMost: number;
}

export interface GraphStore {
  apply(changes: GraphChange[]): Promise<void>;
  node(tenantId: string, node: NodeRef): Promise<GraphNode | null>;
  egoNetwork(tenantId: string, center: NodeRef, options: EgoOptions): Promise<Subgraph>;
  // The nodes of egoNetwork's answer alone, in id order (no edges, attributes or movements), for
  // a caller that only asks who is connected; truncated as egoNetwork's nodes would be.
  reach(tenantId: string, center: NodeRef, options: EgoOptions): Promise<{ nodes: NodeRef[]; truncated: boolean }>;
  // reach for many centers at once, each with its own options: one answer per request, in order,
  // each what reach answers for it (unless the one read budget all of them share runs out: then
  // those not finished say `truncated`). Two statements per level for all of them.
  reachMany(tenantId: string, requests: Array<{ center: NodeRef; options: EgoOptions }>): Promise<Array<{ nodes: NodeRef[]; truncated: boolean }>>;
  shortestPaths(tenantId: string, from: NodeRef, to: NodeRef, options: PathOptions): Promise<{ paths: Path[]; subgraph: Subgraph }>;
  component(tenantId: string, start: NodeRef, options: { filter?: EdgeFilter; nodeCap: number }): Promise<Subgraph>;
  cycles(tenantId: string, account: string, options: CycleOptions): Promise<{ cycles: Cycle[]; truncated: boolean }>;
  // cycles for many accounts at once, each with its own options: one answer per request, in order,
  // each what cycles answers for it (unless the one read budget all of them share runs out: then
  // those not finished say `truncated`). One statement per length for all of them.
  cyclesMany(tenantId: string, requests: Array<{ account: string; options: CycleOptions }>): Promise<Array<{ cycles: Cycle[]; truncated: boolean }>>;
  fanIn(tenantId: string, account: string, window: { since: Date; until: Date; limit: number }): Promise<FlowSet>;
  fanOut(tenantId: string, account: string, window: { since: Date; until: Date; limit: number }): Promise<FlowSet>;
  // For each request, in order: how many distinct other accounts paid its account ('in') or were
  // paid by it ('out') in [since, until], counted no further than atMost + 1. Enough to tell an
  // account that deals with everyone without adding up a hub's flows (fanIn and fanOut total
  // every counterparty). null when the one read budget they share ran out first.
  counterpartyCounts(tenantId: string, requests: CounterpartyCountRequest[]): Promise<Array<number | null>>;
  scatterGather(tenantId: string, source: string, options: TwoHopOptions): Promise<ScatterGather>;
  // scatterGather for many sources at once (one statement), one answer per request, in order.
  scatterGatherMany(tenantId: string, requests: Array<{ source: string; options: TwoHopOptions }>): Promise<ScatterGather[]>;
  gatherScatter(tenantId: string, hub: string, window: { since: Date; until: Date; limit: number }): Promise<GatherScatter>;
  sharedAttributes(tenantId: string, party: string, options: { limit: number; until: Date }): Promise<{ shared: SharedAttribute[]; truncated: boolean }>;
  // sharedAttributes for many parties at once (one statement), one answer per request, in order.
  sharedAttributesMany(tenantId: string, requests: Array<{ party: string; limit: number; until: Date }>): Promise<Array<{ shared: SharedAttribute[]; truncated: boolean }>>;
  // For many parties at once, the accounts each holds or held at any time up to its `until` (the
  // accounts a depth-1 ego network over holds edges with that `until` reaches), sorted, at most
  // `limit` per party; one list per request, in order.
  holdings(tenantId: string, requests: Array<{ party: string; until: Date }>, limit: number): Promise<string[][]>;
}

// What the engine-neutral graph code (platform/graph/shared) needs of an engine: a handful of
// set-based reads and writes, each one statement in the engine's own language (SQL for
// PostgreSQL, Cypher for Neo4j). The searches, caps, ranking, path assembly, cycle extension and
// the planning of writes are shared; an adapter only runs its statements and decodes their rows.

import type {
  DeclaredEdge,
  EdgeFilter,
  EdgeType,
  FlowSet,
  GraphChange,
  GraphEdge,
  NodeRef,
  ScatterGather,
  SharedAttribute,
  TransferFact,
  TransferMovement,
  TwoHopOptions,
} from '../port.ts';

// ---- reads ----

// The stored edges touching any node of the frontier, either direction.
interface EdgeQuery {
  frontier: NodeRef[];
  // Only these types; null: every type.
  types: EdgeType[] | null;
  // Leave stored transfer edges out: they are rebuilt from movements (rebuiltTransfers).
  rebuilt: boolean;
  // Declared edges valid, observed edges seen, at some time in [since, until].
  since: Date | null;
  until: Date | null;
  // Only edges whose other end is one of these.
  within: NodeRef[] | null;
  // At most this many rows.
  limit: number;
}

// Transfer edges rebuilt from the movements into or out of any of the accounts that pass a window
// and a minimum amount (unpriced movements never pass a minimum), one per ordered pair.
interface MovementQuery {
  accounts: string[];
  since: Date | null;
  until: Date | null;
  minAmount: bigint | null;
  // Only pairs whose other account is one of these.
  within: string[] | null;
  limit: number;
}

// One hop more for a partial cycle: priced movements out of `node`, no earlier than `after` and
// no later than `until` (its search's end), their amount in [low, high] (no bounds on the first hop).
interface CycleStep {
  node: string;
  after: Date;
  until: Date;
  low: bigint | null;
  high: bigint | null;
}

// One scatter-gather search (GraphReads.scatterGathers).
interface TwoHopRequest {
  source: string;
  options: TwoHopOptions;
}

// A movement of the pair transfers[pair] (see GraphReads.recentMovements).
interface RecentMovement {
  pair: number;
  movementId: string;
  occurredAt: Date;
  amount: bigint | null;
}

// The counterparties of an account in a window (largest sum first, at most the window's limit)
// and totals over all of them: `accounts` counterparties, `count` movements, `sum` priced.
interface FlowTotals {
  counterparties: FlowSet['counterparties'];
  accounts: number;
  count: number;
  sum: bigint;
}

// The reads of one answer, bound to one tenant and one read budget. Every method answers
// undefined (or nothing) once the budget is spent, and `exhausted` says so: the shared code then
// stops where it is and answers what it has, `truncated`.
export interface GraphReads {
  readonly exhausted: boolean;
  // One edge per row (an edge between two frontier nodes may come twice), at most query.limit.
  storedEdges(query: EdgeQuery): Promise<GraphEdge[] | undefined>;
  // One transfer edge per row, at most query.limit.
  rebuiltTransfers(query: MovementQuery): Promise<GraphEdge[] | undefined>;
  // storedEdges for many frontiers at once (one statement), each with its own filter and limit:
  // one list per query, in order. No `within` (only the searches that gather levels use these).
  storedEdgesMany(queries: Array<Omit<EdgeQuery, 'within'>>): Promise<GraphEdge[][] | undefined>;
  // rebuiltTransfers for many sets of accounts at once (one statement), one list per query, in order.
  rebuiltTransfersMany(queries: Array<Omit<MovementQuery, 'within'>>): Promise<GraphEdge[][] | undefined>;
  // The attributes of those of the entities the graph holds any for, by nodeId.
  nodeAttrs(entities: NodeRef[]): Promise<Map<string, Record<string, unknown>>>;
  // The latest movements (in the filter's window, at most `limit` per pair, latest first) of each
  // transfer edge, the rows of one pair in that order.
  recentMovements(transfers: GraphEdge[], filter: EdgeFilter | undefined, limit: number): Promise<RecentMovement[] | undefined>;
  // The next hop of every partial cycle at once (of one search or of many), at most `limit` rows.
  cycleStep(steps: CycleStep[], limit: number): Promise<Array<{ step: number; movement: TransferMovement }> | undefined>;
  flows(account: string, direction: 'in' | 'out', window: { since: Date; until: Date; limit: number }): Promise<FlowTotals | undefined>;
  // For each window, in order: the distinct other accounts on the `direction` side of its account
  // in it, counted up to `atMost` (GraphStore.counterpartyCounts asks for one more than its bound).
  // One statement for them all.
  counterpartyCounts(direction: 'in' | 'out', atMost: number, windows: Array<{ account: string; since: Date; until: Date }>): Promise<number[] | undefined>;
  // For each request, in order: the gathering accounts (most intermediaries first, at most its
  // options.limit) and how many there are.
  scatterGathers(requests: TwoHopRequest[]): Promise<Array<{ gathers: ScatterGather['gathers']; found: number }> | undefined>;
  // For each request, in order: the identifiers, devices and ips the party shares (most parties
  // first), at most its `limit`, through links valid or first seen by its `until`.
  sharedAttributes(requests: Array<{ party: string; limit: number; until: Date }>): Promise<SharedAttribute[][] | undefined>;
}

// ---- writes ----

interface NodeWrite {
  tenantId: string;
  ref: NodeRef;
  attrs: Record<string, unknown>;
  at: Date;
}

// An entity's new version: the edges of its origin not in `keep` (identities) are closed at `at`.
interface OriginWrite {
  tenantId: string;
  origin: string;
  at: Date;
  keep: string[];
}

// One declared edge per identity and tenant (the latest declaration of the batch).
export interface DeclaredWrite {
  tenantId: string;
  identity: string;
  edge: DeclaredEdge;
  origin: string;
  at: Date;
}

// One sighting: what event saw the edge, and the movement it records (null for a control event).
export interface ObservedWrite {
  tenantId: string;
  eventId: string;
  movementId: string | null;
  type: 'uses' | 'shares';
  from: NodeRef;
  to: NodeRef;
  at: Date;
}

export type TransferChange = GraphChange & { transfer: TransferFact };

interface VersionWrite {
  tenantId: string;
  origin: string;
  sequence: number | null;
}

export interface RetractionWrite {
  tenantId: string;
  movementId: string;
}

// The statements of one apply, all in the caller's write transaction (see shared/apply.ts).
export interface GraphWrites {
  // For an engine whose reads do not wait for writes in flight: locks the batch's tenants before
  // anything else, exclusively for those in `retracting` and shared for the others, so that a
  // retraction and a recording of the same movement never both miss the other.
  lockTenants?(tenants: string[], retracting: Set<string>): Promise<void>;
  // Records the retractions (once each) and takes the retracted movements' transfers and sightings
  // out of the network: each edge gives back what they added, and one left with nothing goes.
  retractMovements(retractions: RetractionWrite[]): Promise<void>;
  // Marks the events of the changes as applied; answers those marked now (not before).
  claim(changes: GraphChange[]): Promise<Array<{ tenantId: string; eventId: string }>>;
  // Records each entity's version (one per origin) where it ranks above the one held (a sequence
  // above it; a first version whatever its sequence) and answers those recorded now.
  claimVersions(versions: VersionWrite[]): Promise<VersionWrite[]>;
  upsertNodes(nodes: NodeWrite[]): Promise<void>;
  closeUndeclared(origins: OriginWrite[]): Promise<void>;
  upsertDeclared(edges: DeclaredWrite[]): Promise<void>;
  // Each movement once, none retracted; the pair's transfer edge adds up exactly the movements
  // added now.
  addTransfers(changes: TransferChange[]): Promise<void>;
  // Each sighting once, none of a retracted movement; the edge adds up exactly the sightings added now.
  addObserved(sightings: ObservedWrite[]): Promise<void>;
}

// Code-point order: tie-breaks every engine makes alike.
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

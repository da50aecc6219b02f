// The traversals of every engine: breadth-first level by level in TypeScript, each level one
// set-based statement of the engine (GraphReads.storedEdges, rebuiltTransfers), so every engine
// answers alike: the same caps, ranking, induced subgraph and shortest paths.

import { nodeId, type EdgeFilter, type GraphEdge, type GraphNode, type NodeRef, type Path, type PathOptions, type Subgraph } from '../port.ts';
import { compare, type GraphReads } from './access.ts';
import { attachRecentMovements, incidentEdges, incidentEdgesMany } from './edges.ts';

// Edges read per expansion step, at least; a step that finds more stops there and says so.
const MIN_EDGE_BUDGET = 5_000;
// Nodes a shortest-path search may visit before it gives up (and says so).
const PATH_VISIT_CAP = 20_000;

function otherEnd(edge: GraphEdge, node: string): NodeRef {
  return nodeId(edge.from) === node ? edge.to : edge.from;
}

// Breadth-first from `start`, level by level, over edges of either direction, up to `depth`
// levels and `nodeCap` nodes. When a level brings more new nodes than there is room for, the ones
// linked by more edges are kept (ties by id, so answers are stable). The result is the subgraph
// the kept nodes induce: every edge among them, also between two nodes of the last level.
export async function expand(
  reads: GraphReads,
  start: NodeRef,
  options: { depth: number; filter?: EdgeFilter; nodeCap: number },
): Promise<Subgraph> {
  const { nodes, edges, frontier, edgeBudget, truncated: cut } = await levels(reads, start, options);
  let truncated = cut;
  // Edges among the nodes of the last level (their own expansion was never read).
  if (frontier.length > 0 && !reads.exhausted) {
    const found = await incidentEdges(reads, frontier, options.filter, edgeBudget + 1, [...nodes.values()]);
    if (!found.complete) truncated = true;
    for (const edge of found.edges) edges.set(edge.id, edge);
  }
  return finish(reads, [...nodes.values()], [...edges.values()], options.filter, truncated || reads.exhausted);
}

// For each request, the nodes expand() keeps from its center, in id order, without the edges
// among them, their attributes or their movements (for a caller that only asks who is
// connected). The searches advance level by level together, each level one incidentEdgesMany for
// all of them (its two statements, not two per search): one answer per request, in order, each
// what the search of that request alone answers.
export async function reachMany(
  reads: GraphReads,
  requests: Array<{ center: NodeRef; options: { depth: number; filter?: EdgeFilter; nodeCap: number } }>,
): Promise<Array<{ nodes: NodeRef[]; truncated: boolean }>> {
  const searches = requests.map((r) => ({ state: levelsFrom(r.center, r.options), options: r.options }));
  for (let level = 1; !reads.exhausted; level++) {
    const active = searches.filter((s) => level <= s.options.depth && s.state.frontier.length > 0);
    if (active.length === 0) break;
    const found = await incidentEdgesMany(
      reads,
      active.map((s) => ({ frontier: s.state.frontier, filter: s.options.filter, limit: s.state.edgeBudget + 1 })),
    );
    active.forEach((s, i) => advance(s.state, found[i]!, s.options.nodeCap));
  }
  return searches.map(({ state }) => ({
    nodes: [...state.nodes.values()].sort((a, b) => compare(nodeId(a), nodeId(b))),
    truncated: state.truncated || reads.exhausted,
  }));
}

interface Levels {
  nodes: Map<string, NodeRef>;
  // The edges among the kept nodes read so far.
  edges: Map<string, GraphEdge>;
  // The last level (whose own edges were not read).
  frontier: NodeRef[];
  edgeBudget: number;
  truncated: boolean;
}

function levelsFrom(start: NodeRef, options: { nodeCap: number }): Levels {
  const edgeBudget = Math.max(MIN_EDGE_BUDGET, options.nodeCap * 20);
  return { nodes: new Map([[nodeId(start), start]]), edges: new Map(), frontier: [start], edgeBudget, truncated: false };
}

// expand()'s levels: the nodes kept, the edges among them read so far, and the last level.
async function levels(reads: GraphReads, start: NodeRef, options: { depth: number; filter?: EdgeFilter; nodeCap: number }) {
  const state = levelsFrom(start, options);
  for (let level = 1; level <= options.depth && state.frontier.length > 0; level++) {
    advance(state, await incidentEdges(reads, state.frontier, options.filter, state.edgeBudget + 1), options.nodeCap);
    if (reads.exhausted) break;
  }
  return state;
}

// One level more from the edges incident to the frontier.
function advance(state: Levels, found: { edges: GraphEdge[]; complete: boolean }, nodeCap: number): void {
  const { nodes, edges, frontier } = state;
  if (!found.complete) state.truncated = true;
  const links = new Map<string, { node: NodeRef; edges: number }>();
  const frontierIds = new Set(frontier.map(nodeId));
  for (const edge of found.edges) {
    for (const [near, far] of [
      [edge.from, edge.to],
      [edge.to, edge.from],
    ] as const) {
      const farId = nodeId(far);
      if (!frontierIds.has(nodeId(near)) || nodes.has(farId)) continue;
      const seen = links.get(farId);
      if (seen) seen.edges++;
      else links.set(farId, { node: far, edges: 1 });
    }
  }
  const room = nodeCap - nodes.size;
  const ranked = [...links.entries()].sort((a, b) => b[1].edges - a[1].edges || (a[0] < b[0] ? -1 : 1));
  if (ranked.length > room) state.truncated = true;
  state.frontier = ranked.slice(0, Math.max(0, room)).map(([id, { node }]) => {
    nodes.set(id, node);
    return node;
  });
  for (const edge of found.edges) {
    if (nodes.has(nodeId(edge.from)) && nodes.has(nodeId(edge.to))) edges.set(edge.id, edge);
  }
}

// Attributes of the nodes, the latest movements of the transfer edges, and a stable order.
async function finish(
  reads: GraphReads,
  refs: NodeRef[],
  edges: GraphEdge[],
  filter: EdgeFilter | undefined,
  truncated: boolean,
): Promise<Subgraph> {
  const entities = refs.filter((n) => n.kind === 'party' || n.kind === 'account' || n.kind === 'instrument');
  const attrs = entities.length > 0 ? await reads.nodeAttrs(entities) : undefined;
  await attachRecentMovements(reads, edges, filter);
  const nodes: GraphNode[] = refs.map((ref) => ({ ...ref, attrs: attrs?.get(nodeId(ref)) ?? null }));
  nodes.sort((a, b) => compare(nodeId(a), nodeId(b)));
  edges.sort((a, b) => compare(a.id, b.id));
  return { nodes, edges, truncated: truncated || reads.exhausted };
}

interface Side {
  depth: Map<string, number>;
  // Every way a node was reached at its depth: the node before it and the edge between them.
  parents: Map<string, Array<{ node: string; edge: string }>>;
  frontier: NodeRef[];
}

// Every shortest path (up to `limit`) between two nodes, by breadth-first search from both ends at
// once, always widening the smaller frontier. Stops at maxDepth hops, when the visit cap is hit, or
// when the budget is spent (the last two say so: a path may exist that was not found).
export async function shortestPaths(
  reads: GraphReads,
  from: NodeRef,
  to: NodeRef,
  options: PathOptions,
): Promise<{ paths: Path[]; subgraph: Subgraph }> {
  const edgesById = new Map<string, GraphEdge>();
  const refs = new Map<string, NodeRef>([
    [nodeId(from), from],
    [nodeId(to), to],
  ]);
  if (nodeId(from) === nodeId(to)) {
    return { paths: [{ nodes: [from], edges: [] }], subgraph: await finish(reads, [from], [], options.filter, false) };
  }
  const a: Side = { depth: new Map([[nodeId(from), 0]]), parents: new Map(), frontier: [from] };
  const b: Side = { depth: new Map([[nodeId(to), 0]]), parents: new Map(), frontier: [to] };
  let truncated = false;
  let meeting: string[] = [];
  let hops = 0;
  while (meeting.length === 0 && hops < options.maxDepth && a.frontier.length > 0 && b.frontier.length > 0) {
    if (a.depth.size + b.depth.size > PATH_VISIT_CAP) {
      truncated = true;
      break;
    }
    const side = a.frontier.length <= b.frontier.length ? a : b;
    const other = side === a ? b : a;
    const found = await incidentEdges(reads, side.frontier, options.filter, PATH_VISIT_CAP + 1);
    if (!found.complete) truncated = true;
    if (reads.exhausted) break;
    const frontierIds = new Set(side.frontier.map(nodeId));
    const level = side.depth.get(nodeId(side.frontier[0]!))! + 1;
    const next: NodeRef[] = [];
    // In id order: the parents recorded, and so which paths are assembled and in what order, must
    // not depend on the order an engine returns rows in (PostgreSQL and Neo4j differ).
    for (const edge of [...found.edges].sort((x, y) => compare(x.id, y.id))) {
      for (const near of [edge.from, edge.to]) {
        const nearId = nodeId(near);
        if (!frontierIds.has(nearId)) continue;
        const far = otherEnd(edge, nearId);
        const farId = nodeId(far);
        if (farId === nearId) continue;
        const known = side.depth.get(farId);
        if (known === undefined) {
          side.depth.set(farId, level);
          next.push(far);
          refs.set(farId, far);
        }
        if (known === undefined || known === level) {
          const list = side.parents.get(farId) ?? [];
          if (!list.some((p) => p.edge === edge.id && p.node === nearId)) list.push({ node: nearId, edge: edge.id });
          side.parents.set(farId, list);
          edgesById.set(edge.id, edge);
        }
      }
    }
    side.frontier = next;
    hops++;
    meeting = next.map(nodeId).filter((id) => other.depth.has(id));
    if (meeting.length > 0) {
      const best = Math.min(...meeting.map((id) => side.depth.get(id)! + other.depth.get(id)!));
      meeting = meeting.filter((id) => side.depth.get(id)! + other.depth.get(id)! === best);
    }
  }

  // One path more than the limit is assembled, to know whether the limit cut any off.
  const paths: Path[] = [];
  const wanted = options.limit + 1;
  for (const middle of meeting.sort()) {
    for (const head of walk(a, middle, wanted - paths.length)) {
      for (const tail of walk(b, middle, wanted - paths.length)) {
        if (paths.length >= wanted) break;
        // head runs from `from` to the middle; tail from `to` to the middle.
        const nodes = [...head.nodes, ...tail.nodes.slice(0, -1).reverse()].map((id) => refs.get(id)!);
        paths.push({ nodes, edges: [...head.edges, ...[...tail.edges].reverse()] });
      }
    }
  }
  // Listed by their edges (ids compared one by one): one order whichever engine answers.
  paths.sort((x, y) => comparePaths(x.edges, y.edges));
  if (paths.length > options.limit) {
    truncated = true;
    paths.length = options.limit;
  }
  const onPaths = new Set(paths.flatMap((p) => p.edges));
  const nodeIds = new Set(paths.flatMap((p) => p.nodes.map(nodeId)));
  const subgraph = await finish(
    reads,
    [...nodeIds].map((id) => refs.get(id)!),
    [...onPaths].map((id) => edgesById.get(id)!),
    options.filter,
    truncated,
  );
  return { paths, subgraph };
}

function comparePaths(x: string[], y: string[]): number {
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = compare(x[i]!, y[i]!);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

// Routes from a side's start to `node` through the parents recorded at each depth, up to `limit`.
function walk(side: Side, node: string, limit: number): Array<{ nodes: string[]; edges: string[] }> {
  if (limit <= 0) return [];
  const parents = side.parents.get(node);
  if (!parents) return [{ nodes: [node], edges: [] }];
  const routes: Array<{ nodes: string[]; edges: string[] }> = [];
  for (const parent of parents) {
    for (const route of walk(side, parent.node, limit - routes.length)) {
      routes.push({ nodes: [...route.nodes, node], edges: [...route.edges, parent.edge] });
      if (routes.length >= limit) return routes;
    }
  }
  return routes;
}

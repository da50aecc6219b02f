import { nodeId, type GraphEdge, type GraphNode, type Path, type Subgraph, type TransferMovement } from '../../platform/graph/port.ts';

// The graph as JSON a drawing library takes as it is: `nodes` with an `id` and a `label`, `edges`
// with an `id`, a `source` and a `target` naming node ids (the shape of Cytoscape's element data,
// G6, d3-force links, vis-network after renaming source/target). Parties, accounts and
// instruments appear by the customer's external ids; identifiers, devices and ips only by their
// keyed hashes. Money is integer minor units of the tenant's base asset.

export interface BaseAsset {
  asset: string;
  scale: number;
}

const HASHED = new Set(['identifier', 'device', 'ip']);

function renderNode(node: GraphNode) {
  const hashed = HASHED.has(node.kind);
  return {
    id: nodeId(node),
    kind: node.kind,
    label: hashed ? `${node.kind} ${node.key.slice(node.key.indexOf(':') + 1, node.key.indexOf(':') + 9)}` : node.key,
    ...(hashed ? { hash: node.key } : { external_id: node.key }),
    attributes: node.attrs ?? {},
  };
}

const money = (value: bigint, base: BaseAsset) => ({ value: value.toString(), asset: base.asset, scale: base.scale });
const instant = (value: Date | null) => (value ? value.toISOString() : null);

function renderMovement(movement: TransferMovement, base: BaseAsset) {
  return {
    movement_id: movement.movementId,
    occurred_at: movement.occurredAt.toISOString(),
    amount: movement.amount === null ? null : money(movement.amount, base),
  };
}

function renderEdge(edge: GraphEdge, base: BaseAsset) {
  return {
    id: edge.id,
    source: nodeId(edge.from),
    target: nodeId(edge.to),
    type: edge.type,
    label: edge.type,
    directed: true,
    valid_from: instant(edge.validFrom),
    valid_to: instant(edge.validTo),
    count: edge.count,
    // Transfers only: the priced movements' sum; unpriced ones (no FX rate) are counted apart.
    // With none priced there is no sum: a 0 would tell the analyst that nothing moved.
    amount: edge.type === 'transfer' && edge.sum !== null && edge.count > edge.unpriced ? money(edge.sum, base) : null,
    unpriced: edge.unpriced,
    first_at: instant(edge.firstAt),
    last_at: instant(edge.lastAt),
    attributes: edge.attrs,
    ...(edge.recent ? { recent_movements: edge.recent.map((m) => renderMovement(m, base)) } : {}),
  };
}

export function renderSubgraph(subgraph: Subgraph, base: BaseAsset) {
  return {
    truncated: subgraph.truncated,
    nodes: subgraph.nodes.map(renderNode),
    edges: subgraph.edges.map((edge) => renderEdge(edge, base)),
  };
}

export function renderPath(path: Path) {
  return { length: path.edges.length, nodes: path.nodes.map(nodeId), edges: path.edges };
}

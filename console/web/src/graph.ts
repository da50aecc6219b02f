import cytoscape from 'cytoscape';
import { facts, h, money, replace, when, type Child } from './dom.ts';
import { formatMinor } from './format/money.ts';
import type { GraphEdge, GraphNode, Money } from './payloads.ts';

// The drawing shared by the network and paths screens: the graph shape of schemas/responses.ts
// (graphNetworkSchema, graphPathsSchema) to Cytoscape elements, one stylesheet, the ring layout
// and the details of a tapped edge. Edge labels show on hover or selection only: on a hub they
// would pile up.
export interface Graph {
  truncated: boolean;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

// What a screen tells a test (or a curious analyst's devtools) about its drawing: counts and
// labels only, never the Cytoscape instance. `parts`: the API edges a drawn edge stands for.
export interface GraphSummary {
  nodes: Array<{ id: string; kind: string; label: string; open_alerts: number; degree: number }>;
  edges: Array<{ id: string; source: string; target: string; type: string; label: string; parts: string[]; count: number; total: string }>;
}

export const nodeId = (n: GraphNode): string => n.id;
export const edgeEnds = (e: Pick<GraphEdge, 'source' | 'target'>): [string, string] => [e.source, e.target];
const day = (at: string | null | undefined) => (typeof at === 'string' ? at.slice(0, 10) : '');
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

// "12× 301.50 USD" for a transfer, '' when the edge carries no amount.
export function edgeAmount(e: Pick<GraphEdge, 'amount' | 'count'>): string {
  const amount = e.amount ? money(e.amount) : '';
  const count = e.count > 0 ? `${e.count}× ` : '';
  return amount ? `${count}${amount}` : '';
}

// "2026-08-10 → 2026-08-12", one date when first and last are the same day.
export function edgeDates(e: Pick<GraphEdge, 'first_at' | 'last_at'>): string {
  const first = day(e.first_at);
  const last = day(e.last_at);
  return first && last && first !== last ? `${first} → ${last}` : first || last;
}

// Money objects added per asset, exactly (BigInt on the minor units).
function sumMoney(amounts: Array<Money | null>): Money[] {
  const by = new Map<string, { value: bigint; scale: number }>();
  for (const a of amounts) {
    if (!a) continue;
    const prev = by.get(a.asset);
    by.set(a.asset, { value: (prev?.value ?? 0n) + BigInt(a.value), scale: a.scale });
  }
  return [...by].map(([asset, { value, scale }]) => ({ value: value.toString(), asset, scale }));
}

// The API edges between one pair of nodes, either way and of any type, drawn as one.
interface Bundle {
  id: string;
  source: string;
  target: string;
  parts: GraphEdge[];
}

// One drawn edge per unordered pair of nodes: transfers both ways and any relationship between the
// same two nodes become one line with the count and total of its transfers.
function bundleEdges(edges: GraphEdge[]): Bundle[] {
  const bundles = new Map<string, Bundle>();
  for (const e of edges) {
    const [a, b] = e.source < e.target ? [e.source, e.target] : [e.target, e.source];
    const key = `${a}|${b}`;
    const bundle = bundles.get(key);
    if (bundle) bundle.parts.push(e);
    else bundles.set(key, { id: `pair:${key}`, source: e.source, target: e.target, parts: [e] });
  }
  // A bundle points the way most of its transfers go.
  for (const bundle of bundles.values()) {
    const along = bundle.parts.filter((p) => p.source === bundle.source).reduce((n, p) => n + p.count, 0);
    const against = bundle.parts.filter((p) => p.source !== bundle.source).reduce((n, p) => n + p.count, 0);
    if (against > along) [bundle.source, bundle.target] = [bundle.target, bundle.source];
  }
  return [...bundles.values()];
}

interface Facts {
  type: string;
  label: string;
  count: number;
  total: string;
  twoWay: boolean;
}

function factsOf(parts: GraphEdge[]): Facts {
  const transfers = parts.filter((p) => p.type === 'transfer');
  const others = [...new Set(parts.filter((p) => p.type !== 'transfer').map((p) => p.type))];
  const count = transfers.reduce((n, p) => n + p.count, 0);
  const total = sumMoney(transfers.map((p) => p.amount))
    .map((m) => formatMinor(m.value, m.scale, m.asset))
    .join(' + ');
  const firsts = transfers.map((p) => p.first_at).filter((x): x is string => Boolean(x)).sort();
  const lasts = transfers.map((p) => p.last_at).filter((x): x is string => Boolean(x)).sort();
  const twoWay = new Set(transfers.map((p) => p.source)).size > 1;
  const lines = [
    transfers.length ? `${twoWay ? '⇄ ' : ''}${count}× ${total || 'transfer'}` : '',
    transfers.length ? edgeDates({ first_at: firsts[0] ?? null, last_at: lasts.at(-1) ?? null }) : '',
    others.filter((t) => t !== 'holds').map((t) => t.replaceAll('_', ' ')).join(', '),
  ];
  return { type: transfers.length ? 'transfer' : (others[0] ?? 'edge'), label: lines.filter(Boolean).join('\n'), count, total, twoWay };
}

// `marked` node ids get the `center` class (bigger, bold). `bundle`: one drawn edge per pair of
// nodes (the network); without it every API edge is drawn (the paths name edges by id).
export function toElements(graph: Graph, marked: string[] = [], options: { bundle?: boolean } = {}): cytoscape.ElementDefinition[] {
  const ids = new Set(graph.nodes.map(nodeId));
  const nodes = graph.nodes.map((n) => {
    const openAlerts = Number(n.open_alerts ?? 0);
    return {
      group: 'nodes' as const,
      data: { id: nodeId(n), kind: n.kind, label: n.label ?? n.external_id ?? nodeId(n), external_id: n.external_id ?? null, open_alerts: openAlerts, raw: n },
      classes: [n.kind, openAlerts > 0 ? 'alerted' : '', marked.includes(nodeId(n)) ? 'center' : ''].filter(Boolean).join(' '),
    };
  });
  const drawn = graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target));
  const bundles = options.bundle ? bundleEdges(drawn) : drawn.map((e) => ({ id: e.id, source: e.source, target: e.target, parts: [e] }));
  const edges = bundles.map((b) => {
    const f = factsOf(b.parts);
    const types = [...new Set(b.parts.map((p) => p.type))];
    return {
      group: 'edges' as const,
      data: { id: b.id, source: b.source, target: b.target, type: f.type, label: f.label, count: f.count, total: f.total, weight: Math.min(8, Math.log2(1 + f.count)), parts: b.parts },
      classes: [...types, f.twoWay ? 'two-way' : ''].filter(Boolean).join(' '),
    };
  });
  return [...nodes, ...edges];
}

const STYLE: cytoscape.StylesheetJson = [
  { selector: 'node', style: { 'background-color': '#6b7a8f', label: 'data(label)', 'font-size': 9, color: '#1d2430', 'text-valign': 'bottom', 'text-margin-y': 3, width: 18, height: 18 } },
  { selector: 'node.party', style: { shape: 'round-rectangle', 'background-color': '#3d6fb6' } },
  { selector: 'node.account', style: { shape: 'ellipse', 'background-color': '#4c9a7a' } },
  { selector: 'node.identifier, node.device, node.ip, node.instrument', style: { shape: 'diamond', 'background-color': '#a08a3c' } },
  { selector: 'node.alerted', style: { 'border-width': 3, 'border-color': '#c62828', 'background-color': '#e57373' } },
  { selector: 'node.center', style: { width: 30, height: 30, 'font-weight': 'bold', 'font-size': 11 } },
  { selector: 'node:selected', style: { 'overlay-opacity': 0.2, 'overlay-color': '#1565c0' } },
  {
    selector: 'edge',
    style: {
      width: 'mapData(weight, 0, 8, 1.5, 6)',
      'line-color': '#9aa5b1',
      'target-arrow-color': '#9aa5b1',
      'source-arrow-color': '#9aa5b1',
      'target-arrow-shape': 'triangle',
      'curve-style': 'bezier',
      'font-size': 8,
      'text-wrap': 'wrap',
      'text-rotation': 'autorotate',
      'text-background-color': '#ffffff',
      'text-background-opacity': 0.9,
      'text-background-padding': '2',
    },
  },
  { selector: 'edge.holds', style: { 'line-style': 'dashed', 'target-arrow-shape': 'none' } },
  { selector: 'edge.transfer', style: { 'line-style': 'solid', 'target-arrow-shape': 'triangle' } },
  { selector: 'edge.two-way', style: { 'source-arrow-shape': 'triangle' } },
  // Labels on hover (of the edge or one of its nodes), selection, or where a screen asks for all.
  { selector: 'edge.hover, edge:selected, edge.labelled, edge.highlighted', style: { label: 'data(label)', 'z-index': 10 } },
  { selector: 'edge.highlighted', style: { 'line-color': '#ef6c00', 'target-arrow-color': '#ef6c00', 'source-arrow-color': '#ef6c00', width: 3.5 } },
  { selector: 'node.highlighted', style: { 'overlay-opacity': 0.25, 'overlay-color': '#ef6c00' } },
  { selector: 'edge.cited', style: { 'line-color': '#c62828', 'target-arrow-color': '#c62828', 'source-arrow-color': '#c62828', width: 4, 'z-index': 5 } },
  { selector: 'edge:selected', style: { 'line-color': '#1565c0', 'target-arrow-color': '#1565c0', 'source-arrow-color': '#1565c0' } },
];

// Rings around the centre by hops from it: fast and stable for a few hundred nodes.
export function concentric(cy: cytoscape.Core, center: string): cytoscape.LayoutOptions {
  const hops = new Map<string, number>();
  const root = cy.getElementById(center);
  if (root.nonempty()) cy.elements().bfs({ roots: root, directed: false, visit: (v, _e, _u, _i, depth) => void hops.set(v.id(), depth) });
  const max = Math.max(1, ...hops.values());
  return { name: 'concentric', concentric: (n: cytoscape.NodeSingular) => max + 1 - (hops.get(n.id()) ?? max + 1), levelWidth: () => 1, minNodeSpacing: 12, animate: false, fit: true, padding: 24 };
}

export const forceLayout = (options: { randomize?: boolean } = {}) => ({ name: 'cose', animate: false, fit: true, padding: 24, ...options }) as cytoscape.LayoutOptions;

// A Cytoscape drawing in `canvas` (laid out by `layout`, or not at all); `onFirstRender` runs on
// the first frame, after which the canvas carries data-ready="true" (what the tests wait for).
export function drawGraph(canvas: HTMLElement, elements: cytoscape.ElementDefinition[], layout: (cy: cytoscape.Core) => cytoscape.LayoutOptions, onFirstRender: () => void = () => {}): cytoscape.Core {
  const cy = cytoscape({ container: canvas, elements, style: STYLE, minZoom: 0.1, maxZoom: 4, wheelSensitivity: 0.3, layout: { name: 'preset' } });
  cy.one('render', () => {
    onFirstRender();
    canvas.dataset.ready = 'true';
  });
  cy.on('mouseover', 'edge', (event) => event.target.addClass('hover'));
  cy.on('mouseout', 'edge', (event) => event.target.removeClass('hover'));
  cy.on('mouseover', 'node', (event) => event.target.connectedEdges().addClass('hover'));
  cy.on('mouseout', 'node', (event) => event.target.connectedEdges().removeClass('hover'));
  cy.layout(layout(cy)).run();
  return cy;
}

export function summarise(cy: cytoscape.Core): GraphSummary {
  return {
    nodes: cy.nodes().map((n) => ({ id: n.id(), kind: n.data('kind'), label: n.data('label'), open_alerts: n.data('open_alerts'), degree: n.degree(false) })),
    edges: cy.edges().map((e) => ({
      id: e.id(),
      source: e.data('source'),
      target: e.data('target'),
      type: e.data('type'),
      label: e.data('label'),
      parts: (e.data('parts') as GraphEdge[]).map((p) => p.id),
      count: e.data('count'),
      total: e.data('total'),
    })),
  };
}

// The details panel of a tapped edge: per direction and type its count, amount, dates and recent
// movements. `movementLink` turns a movement id into a link where the screen can place one.
export function showEdge(panel: HTMLElement, e: cytoscape.EdgeSingular, movementLink: (id: string, part: GraphEdge) => Child = (id) => h('code', null, id)): void {
  const parts = e.data('parts') as GraphEdge[];
  const label = (id: string) => String(e.cy().getElementById(id).data('label') ?? id);
  const transfers = parts.filter((p) => p.type === 'transfer');
  replace(
    panel,
    h('h2', null, `${label(e.data('source'))} — ${label(e.data('target'))}`),
    transfers.length > 1 ? facts([['Transfers', plural(e.data('count'), 'movement')], ['Total', e.data('total') || '—']]) : null,
    parts.map((p) =>
      h(
        'section',
        { class: 'edge-part', 'data-edge': p.id },
        h('h3', null, `${p.type.replaceAll('_', ' ')}: ${label(p.source)} → ${label(p.target)}`),
        facts([
          ['Count', String(p.count)],
          ['Amount', p.amount ? money(p.amount) : '—'],
          ...(p.unpriced > 0 ? [['Unpriced', String(p.unpriced)] as [string, Child]] : []),
          ['First', when(p.first_at ?? p.valid_from)],
          ['Last', when(p.last_at ?? p.valid_to)],
        ]),
        p.recent_movements?.length
          ? [h('h4', null, 'Recent movements'), h('ul', { class: 'id-list' }, p.recent_movements.map((m) => h('li', null, when(m.occurred_at), ' ', movementLink(m.movement_id, p), ' ', m.amount ? money(m.amount) : '')))]
          : null,
      ),
    ),
  );
}

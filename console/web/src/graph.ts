import cytoscape from 'cytoscape';
import { facts, h, money, replace, when } from './dom.ts';

// The drawing shared by the network and paths screens: the /v1 graph shape (schemas/responses.ts
// GraphNetwork and GraphPaths) to Cytoscape elements, one stylesheet, the ring layout and the
// details of a tapped edge. Read defensively: the console may add open_alerts per node, and older
// names (key/from/to/attrs/firstAt) are accepted too.
export interface Graph {
  truncated: boolean;
  nodes: any[];
  edges: any[];
}

// What a screen tells a test (or a curious analyst's devtools) about its drawing: counts and
// labels only, never the Cytoscape instance.
export interface GraphSummary {
  nodes: Array<{ id: string; kind: string; label: string; open_alerts: number; degree: number }>;
  edges: Array<{ id: string; source: string; target: string; type: string; label: string }>;
}

export const nodeId = (n: any): string => String(n.id ?? n.key);
export const edgeEnds = (e: any): [string, string] => [String(e.source ?? e.from), String(e.target ?? e.to)];
const day = (at: unknown) => (typeof at === 'string' ? at.slice(0, 10) : '');

// "12× 301.50 USD" for a transfer, '' when the edge carries no amount.
export function edgeAmount(e: any): string {
  const amount = e.amount ? money(e.amount) : e.sum !== undefined ? String(e.sum) : '';
  const count = typeof e.count === 'number' && e.count > 0 ? `${e.count}× ` : '';
  return amount ? `${count}${amount}` : '';
}

// "2026-08-10 → 2026-08-12", one date when first and last are the same day.
export function edgeDates(e: any): string {
  const first = day(e.first_at ?? e.firstAt);
  const last = day(e.last_at ?? e.lastAt);
  return first && last && first !== last ? `${first} → ${last}` : first || last;
}

function edgeLabel(e: any): string {
  const count = typeof e.count === 'number' && e.count > 0 ? `${e.count}× ` : '';
  return [edgeAmount(e) || (e.type === 'holds' ? '' : `${count}${e.type ?? ''}`), edgeDates(e)].filter(Boolean).join('\n');
}

// `marked` node ids get the `center` class (bigger, bold).
export function toElements(graph: Graph, marked: string[] = []): cytoscape.ElementDefinition[] {
  const ids = new Set(graph.nodes.map(nodeId));
  const nodes = graph.nodes.map((n) => {
    const openAlerts = Number(n.open_alerts ?? n.attributes?.open_alerts ?? n.attrs?.open_alerts ?? 0);
    return {
      group: 'nodes' as const,
      data: { id: nodeId(n), kind: n.kind, label: n.label ?? n.external_id ?? nodeId(n), external_id: n.external_id ?? null, open_alerts: openAlerts, raw: n },
      classes: [n.kind, openAlerts > 0 ? 'alerted' : '', marked.includes(nodeId(n)) ? 'center' : ''].filter(Boolean).join(' '),
    };
  });
  const edges = graph.edges
    .map((e) => {
      const [source, target] = edgeEnds(e);
      return { group: 'edges' as const, data: { id: String(e.id), source, target, type: e.type, label: edgeLabel(e), raw: e }, classes: e.type };
    })
    .filter((e) => ids.has(e.data.source) && ids.has(e.data.target));
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
      width: 1.5,
      'line-color': '#9aa5b1',
      'target-arrow-color': '#9aa5b1',
      'target-arrow-shape': 'triangle',
      'curve-style': 'bezier',
      label: 'data(label)',
      'font-size': 7,
      'text-wrap': 'wrap',
      'text-rotation': 'autorotate',
      'text-background-color': '#ffffff',
      'text-background-opacity': 0.8,
      'text-background-padding': '1',
    },
  },
  { selector: 'edge.holds', style: { 'line-style': 'dashed', 'target-arrow-shape': 'none' } },
  { selector: 'edge.highlighted', style: { 'line-color': '#ef6c00', 'target-arrow-color': '#ef6c00', width: 3.5 } },
  { selector: 'node.highlighted', style: { 'overlay-opacity': 0.25, 'overlay-color': '#ef6c00' } },
  { selector: 'edge:selected', style: { 'line-color': '#1565c0', 'target-arrow-color': '#1565c0', width: 3 } },
];

// Rings around the centre by hops from it: fast and stable for a few hundred nodes.
export function concentric(cy: cytoscape.Core, center: string): cytoscape.LayoutOptions {
  const hops = new Map<string, number>();
  const root = cy.getElementById(center);
  if (root.nonempty()) cy.elements().bfs({ roots: root, directed: false, visit: (v, _e, _u, _i, depth) => void hops.set(v.id(), depth) });
  const max = Math.max(1, ...hops.values());
  return { name: 'concentric', concentric: (n: any) => max + 1 - (hops.get(n.id()) ?? max + 1), levelWidth: () => 1, minNodeSpacing: 12, animate: false, fit: true, padding: 24 } as cytoscape.LayoutOptions;
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
  cy.layout(layout(cy)).run();
  return cy;
}

export function summarise(cy: cytoscape.Core): GraphSummary {
  return {
    nodes: cy.nodes().map((n) => ({ id: n.id(), kind: n.data('kind'), label: n.data('label'), open_alerts: n.data('open_alerts'), degree: n.degree(false) })),
    edges: cy.edges().map((e) => ({ id: e.id(), source: e.data('source'), target: e.data('target'), type: e.data('type'), label: e.data('label') })),
  };
}

// The details panel of a tapped edge: count, amount, dates and its recent movements.
export function showEdge(panel: HTMLElement, e: cytoscape.EdgeSingular): void {
  const raw = e.data('raw');
  const recent: any[] = Array.isArray(raw?.recent_movements) ? raw.recent_movements : [];
  replace(
    panel,
    h('h2', null, `${raw?.type ?? 'edge'}: ${e.source().data('label')} → ${e.target().data('label')}`),
    facts([
      ['Count', String(raw?.count ?? '—')],
      ['Amount', raw?.amount ? money(raw.amount) : String(raw?.sum ?? '—')],
      ['Unpriced', String(raw?.unpriced ?? 0)],
      ['First', when(raw?.first_at ?? raw?.firstAt)],
      ['Last', when(raw?.last_at ?? raw?.lastAt)],
    ]),
    recent.length ? [h('h3', null, 'Recent movements'), h('ul', null, recent.map((m) => h('li', null, when(m.occurred_at), ' ', h('code', null, m.movement_id), ' ', money(m.amount))))] : null,
  );
}

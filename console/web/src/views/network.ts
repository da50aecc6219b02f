import cytoscape from 'cytoscape';
import { enc, get } from '../api.ts';
import { empty, facts, failure, h, json, loading, money, replace, when } from '../dom.ts';
import { currentGeneration, isCurrent, navigate, type Cleanup } from '../router.ts';

// The /v1 GraphNetwork shape (schemas/responses.ts), read defensively: the console may add
// open_alerts per node, and older names (key/from/to/attrs/firstAt) are accepted too.
interface Net {
  center: string;
  truncated: boolean;
  nodes: any[];
  edges: any[];
}

// What the page tells a test (or a curious analyst's devtools) about the drawing: counts and
// labels only, never the Cytoscape instance.
interface NetworkState {
  ready: boolean;
  center: string;
  nodes: Array<{ id: string; kind: string; label: string; open_alerts: number; degree: number }>;
  edges: Array<{ id: string; source: string; target: string; type: string; label: string }>;
  renderedAtMs: number | null;
}
declare global {
  interface Window {
    __svcNetwork?: NetworkState;
  }
}

const nodeId = (n: any): string => String(n.id ?? n.key);
const day = (at: unknown) => (typeof at === 'string' ? at.slice(0, 10) : '');

function edgeLabel(e: any): string {
  const amount = e.amount ? money(e.amount) : e.sum !== undefined ? String(e.sum) : '';
  const first = day(e.first_at ?? e.firstAt);
  const last = day(e.last_at ?? e.lastAt);
  const dates = first && last && first !== last ? `${first} → ${last}` : first || last;
  const count = typeof e.count === 'number' && e.count > 0 ? `${e.count}× ` : '';
  return [amount ? `${count}${amount}` : e.type === 'holds' ? '' : `${count}${e.type ?? ''}`, dates].filter(Boolean).join('\n');
}

function toElements(net: Net): cytoscape.ElementDefinition[] {
  const ids = new Set(net.nodes.map(nodeId));
  const nodes = net.nodes.map((n) => {
    const openAlerts = Number(n.open_alerts ?? n.attributes?.open_alerts ?? n.attrs?.open_alerts ?? 0);
    return {
      group: 'nodes' as const,
      data: { id: nodeId(n), kind: n.kind, label: n.label ?? n.external_id ?? nodeId(n), external_id: n.external_id ?? null, open_alerts: openAlerts, raw: n },
      classes: [n.kind, openAlerts > 0 ? 'alerted' : '', nodeId(n) === net.center ? 'center' : ''].filter(Boolean).join(' '),
    };
  });
  const edges = net.edges
    .map((e) => ({ group: 'edges' as const, data: { id: String(e.id), source: String(e.source ?? e.from), target: String(e.target ?? e.to), type: e.type, label: edgeLabel(e), raw: e }, classes: e.type }))
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
  { selector: 'edge:selected', style: { 'line-color': '#1565c0', 'target-arrow-color': '#1565c0', width: 3 } },
];

// Rings around the centre by hops from it: fast and stable for a few hundred nodes.
function concentric(cy: cytoscape.Core, center: string): cytoscape.LayoutOptions {
  const hops = new Map<string, number>();
  const root = cy.getElementById(center);
  if (root.nonempty()) cy.elements().bfs({ roots: root, directed: false, visit: (v, _e, _u, _i, depth) => void hops.set(v.id(), depth) });
  const max = Math.max(1, ...hops.values());
  return { name: 'concentric', concentric: (n: any) => max + 1 - (hops.get(n.id()) ?? max + 1), levelWidth: () => 1, minNodeSpacing: 12, animate: false, fit: true, padding: 24 } as cytoscape.LayoutOptions;
}

export async function networkView([party]: string[], query: URLSearchParams): Promise<Cleanup | void> {
  const gen = currentGeneration();
  performance.mark('svc:network:start');
  const root = document.getElementById('view')!;
  const depth = query.get('depth') ?? '2';
  const limit = query.get('limit') ?? '200';
  const controls = h(
    'form',
    { class: 'filters', 'aria-label': 'network options' },
    h('label', null, 'Depth', h('select', { name: 'depth' }, ['1', '2', '3', '4'].map((d) => h('option', { value: d, selected: d === depth }, d)))),
    h('label', null, 'Node limit', h('input', { name: 'limit', type: 'number', min: '10', max: '1000', value: limit })),
    h('button', { type: 'submit' }, 'Redraw'),
  );
  controls.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(controls);
    navigate(`/console/network/${enc(party!)}?depth=${enc(String(data.get('depth')))}&limit=${enc(String(data.get('limit')))}`);
  });
  const canvas = h('div', { id: 'cy', class: 'network', role: 'img', 'aria-label': `network around ${party}` });
  const panel = h('aside', { class: 'details', 'aria-label': 'details', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Tap a node or an edge for its details.'));
  const status = h('div', { class: 'net-status' }, loading('Loading the network'));
  const layoutButtons = h(
    'div',
    { class: 'layout-buttons' },
    h('button', { type: 'button', 'data-layout': 'concentric' }, 'Rings'),
    h('button', { type: 'button', 'data-layout': 'cose' }, 'Force'),
    h('button', { type: 'button', 'data-layout': 'fit' }, 'Fit'),
  );
  replace(
    root,
    h('p', null, h('a', { href: `/console/parties/${enc(party!)}` }, `← Party ${party}`)),
    h('h1', null, `Network around ${party}`),
    h('div', { class: 'net-bar' }, controls, layoutButtons),
    status,
    h('div', { class: 'net-wrap' }, canvas, panel),
    h('p', { class: 'hint' }, 'Scroll to zoom, drag to pan. Red nodes have open alerts. Expand a party to draw its neighbourhood into this view.'),
  );
  window.__svcNetwork = { ready: false, center: '', nodes: [], edges: [], renderedAtMs: null };

  let net: Net;
  try {
    net = await get<Net>(`/network/${enc(party!)}?depth=${enc(depth)}&limit=${enc(limit)}`);
  } catch (error) {
    if (isCurrent(gen)) replace(status, failure(error));
    return;
  }
  if (!isCurrent(gen)) return;
  if (net.nodes.length === 0) {
    replace(status, empty('Nothing is connected to this party.'));
    return;
  }
  replace(status, net.truncated ? h('p', { class: 'state warn', role: 'status' }, `The network was cut at ${net.nodes.length} nodes: raise the limit or lower the depth to see all of it.`) : null);

  const cy = cytoscape({ container: canvas, elements: toElements(net), style: STYLE, minZoom: 0.1, maxZoom: 4, wheelSensitivity: 0.3, layout: { name: 'preset' } });
  const publish = () => {
    window.__svcNetwork = {
      ready: true,
      center: net.center,
      renderedAtMs: window.__svcNetwork?.renderedAtMs ?? null,
      nodes: cy.nodes().map((n) => ({ id: n.id(), kind: n.data('kind'), label: n.data('label'), open_alerts: n.data('open_alerts'), degree: n.degree(false) })),
      edges: cy.edges().map((e) => ({ id: e.id(), source: e.data('source'), target: e.data('target'), type: e.data('type'), label: e.data('label') })),
    };
  };
  cy.one('render', () => {
    performance.mark('svc:network:render');
    const m = performance.measure('svc:network:first-render', { start: 0, end: 'svc:network:render' });
    if (window.__svcNetwork) window.__svcNetwork.renderedAtMs = m.duration;
    publish();
    canvas.dataset.ready = 'true';
  });
  cy.layout(concentric(cy, net.center)).run();
  publish();

  const showNode = (n: cytoscape.NodeSingular) => {
    const raw = n.data('raw');
    const external = n.data('external_id') as string | null;
    replace(
      panel,
      h('h2', null, `${n.data('kind')} ${n.data('label')}`),
      facts([
        ['Id', n.id()],
        ['Open alerts', h('span', { class: n.data('open_alerts') > 0 ? 'alerting' : '' }, String(n.data('open_alerts')))],
        ['Connections', String(n.degree(false))],
      ]),
      h(
        'div',
        { class: 'actions' },
        n.data('kind') === 'party' && external
          ? [
              h('button', { type: 'button', onclick: () => void expand(external) }, 'Expand here'),
              h('a', { href: `/console/parties/${enc(external)}`, class: 'button' }, 'Open party'),
              h('a', { href: `/console/network/${enc(external)}`, class: 'button' }, 'Centre here'),
            ]
          : null,
      ),
      h('h3', null, 'Attributes'),
      json(raw?.attributes ?? raw?.attrs ?? {}),
    );
  };
  const showEdge = (e: cytoscape.EdgeSingular) => {
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
  };
  const expand = async (external: string) => {
    try {
      const more = await get<Net>(`/network/${enc(external)}?depth=1&limit=${enc(limit)}`);
      if (!isCurrent(gen)) return;
      const fresh = toElements(more).filter((el) => cy.getElementById(String(el.data.id)).empty());
      cy.add(fresh);
      cy.layout({ name: 'cose', animate: false, fit: true, padding: 24, randomize: false } as cytoscape.LayoutOptions).run();
      publish();
    } catch (error) {
      panel.append(failure(error));
    }
  };
  cy.on('tap', 'node', (event) => showNode(event.target));
  cy.on('tap', 'edge', (event) => showEdge(event.target));
  layoutButtons.addEventListener('click', (event) => {
    const which = (event.target as HTMLElement).dataset.layout;
    if (which === 'fit') cy.fit(undefined, 24);
    else if (which === 'cose') cy.layout({ name: 'cose', animate: false, fit: true, padding: 24 } as cytoscape.LayoutOptions).run();
    else if (which === 'concentric') cy.layout(concentric(cy, net.center)).run();
  });
  return () => {
    cy.destroy();
    window.__svcNetwork = undefined;
  };
}

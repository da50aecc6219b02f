import type cytoscape from 'cytoscape';
import { ApiError, enc, get } from '../api.ts';
import { empty, facts, failure, h, json, loading, replace } from '../dom.ts';
import { drawGraph, edgeAmount, edgeDates, edgeEnds, nodeId, showEdge, summarise, toElements, type GraphSummary } from '../graph.ts';
import type { GraphPaths } from '../payloads.ts';
import { currentGeneration, isCurrent, navigate, type Cleanup } from '../router.ts';

// The graph paths (schemas/responses.ts graphPathsSchema): the shortest paths between two
// parties, each as node ids and edge ids into one subgraph.
type Paths = GraphPaths;

// One hop of a path as the page lists it (and publishes it for the tests).
interface Hop {
  from: string;
  to: string;
  type: string;
  forward: boolean;
  amount: string;
  dates: string;
}
interface PathsState extends GraphSummary {
  ready: boolean;
  from: string;
  to: string;
  paths: Array<{ length: number; hops: Hop[] }>;
}
declare global {
  interface Window {
    __svcPaths?: PathsState;
  }
}

// The governed 404 names which party is unknown (errors[].path is `from` or `to`).
function problem(error: unknown): HTMLElement {
  const errors = error instanceof ApiError && Array.isArray(error.problem.errors) ? (error.problem.errors as Array<{ path?: string; message?: string }>) : [];
  if (errors.length === 0) return failure(error);
  return h('div', { class: 'state error', role: 'alert' }, h('p', null, (error as Error).message), h('ul', null, errors.map((e) => h('li', null, `${e.path ?? ''}: ${e.message ?? ''}`))));
}

function hopsOf(result: Paths, path: Paths['paths'][number]): Hop[] {
  const nodes = new Map(result.nodes.map((n) => [nodeId(n), n]));
  const edges = new Map(result.edges.map((e) => [String(e.id), e]));
  const label = (id: string | undefined) => String(nodes.get(id ?? '')?.label ?? id ?? '?');
  return path.edges.map((edgeId, i) => {
    const e = edges.get(edgeId);
    if (!e) return { from: label(path.nodes[i]), to: label(path.nodes[i + 1]), type: 'edge', forward: true, amount: '', dates: '' };
    return { from: label(path.nodes[i]), to: label(path.nodes[i + 1]), type: e.type, forward: edgeEnds(e)[0] === path.nodes[i], amount: edgeAmount(e), dates: edgeDates(e) };
  });
}

// Left to right from `from`: each node in the column of its place on the first path that has it,
// the paths one under the other.
const columns = (paths: Paths['paths']) => () => {
  const at = new Map<string, { x: number; y: number }>();
  const rows = new Map<number, number>();
  for (const path of paths) {
    path.nodes.forEach((id, i) => {
      if (at.has(id)) return;
      const row = rows.get(i) ?? 0;
      rows.set(i, row + 1);
      at.set(id, { x: i * 200, y: row * 110 });
    });
  }
  return { name: 'preset', positions: (n: cytoscape.NodeSingular) => at.get(n.id()) ?? { x: 0, y: 0 }, fit: true, padding: 40, animate: false } as cytoscape.LayoutOptions;
};

export async function pathsView(_params: string[], query: URLSearchParams): Promise<Cleanup | void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const from = (query.get('from') ?? '').trim();
  const to = (query.get('to') ?? '').trim();
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'paths between two parties' },
    h('label', null, 'From party', h('input', { name: 'from', required: true, value: from, placeholder: 'external id' })),
    h('label', null, 'To party', h('input', { name: 'to', required: true, value: to, placeholder: 'external id' })),
    h('button', { type: 'submit' }, 'Find paths'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    navigate(`/console/paths?from=${enc(String(data.get('from') ?? '').trim())}&to=${enc(String(data.get('to') ?? '').trim())}`);
  });
  const status = h('div', { class: 'net-status' });
  const list = h('section', { 'aria-label': 'paths' });
  const canvas = h('div', { id: 'cy', class: 'network paths', role: 'img', 'aria-label': from && to ? `paths from ${from} to ${to}` : 'paths' });
  const panel = h('aside', { class: 'details', 'aria-label': 'details', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Tap a node or an edge for its details.'));
  window.__svcPaths = undefined;
  if (!from || !to) {
    replace(root, h('h1', null, 'Paths between two parties'), form, empty('Give two parties’ external ids to find the shortest paths between them.'));
    return;
  }
  replace(
    root,
    h('h1', null, `Paths from ${from} to ${to}`),
    form,
    h('p', { class: 'actions' }, h('a', { href: `/console/network/${enc(from)}`, class: 'button' }, `Network of ${from}`), h('a', { href: `/console/network/${enc(to)}`, class: 'button' }, `Network of ${to}`)),
    status,
    list,
  );
  replace(status, loading('Looking for paths'));

  let result: Paths;
  try {
    result = await get<Paths>(`/paths?from=${enc(from)}&to=${enc(to)}`);
  } catch (error) {
    if (isCurrent(gen)) replace(status, problem(error));
    return;
  }
  if (!isCurrent(gen)) return;
  if (result.paths.length === 0) {
    replace(status, empty(`No path between ${from} and ${to} within ${result.max_depth} hops.`));
    window.__svcPaths = { ready: true, from: result.from, to: result.to, paths: [], nodes: [], edges: [] };
    return;
  }
  replace(status, result.truncated ? h('p', { class: 'state warn', role: 'status' }, 'The search stopped short: there may be more paths than these.') : null);

  const paths = result.paths.map((p) => ({ length: p.length, nodes: p.nodes, edges: p.edges, hops: hopsOf(result, p) }));
  const items = paths.map((p, i) =>
    h(
      'li',
      { 'data-path': String(i) },
      h('button', { type: 'button', class: 'link', title: 'Highlight this path in the drawing', onclick: () => highlight(i) }, `Path ${i + 1} · ${p.length} hop${p.length === 1 ? '' : 's'}`),
      h(
        'ol',
        { class: 'hops' },
        p.hops.map((hop) => h('li', { class: 'hop' }, h('strong', null, hop.from), ` ${hop.forward ? '—' : '←'} `, h('span', { class: 'edge-type' }, hop.type), hop.amount ? ` · ${hop.amount}` : '', hop.dates ? ` · ${hop.dates}` : '', ` ${hop.forward ? '→' : '—'} `, h('strong', null, hop.to))),
      ),
    ),
  );
  replace(list, h('div', { class: 'net-wrap' }, canvas, panel), h('h2', null, `${paths.length} shortest path${paths.length === 1 ? '' : 's'}`), h('ol', { class: 'paths', 'data-testid': 'paths' }, items));

  const cy = drawGraph(canvas, toElements(result, [result.from, result.to]), columns(result.paths));
  // A few hops: their labels fit, unlike a whole network's.
  cy.edges().addClass('labelled');
  // A few nodes would be fitted at a giant's zoom.
  if (cy.zoom() > 1.5) {
    cy.zoom(1.5);
    cy.center();
  }
  const highlight = (i: number) => {
    cy.elements().removeClass('highlighted');
    for (const id of [...paths[i]!.nodes, ...paths[i]!.edges]) cy.getElementById(id).addClass('highlighted');
    items.forEach((item, j) => item.setAttribute('aria-current', String(i === j)));
  };
  window.__svcPaths = { ready: true, from: result.from, to: result.to, paths: paths.map((p) => ({ length: p.length, hops: p.hops })), ...summarise(cy) };
  cy.on('tap', 'node', (event) => {
    const n = event.target as cytoscape.NodeSingular;
    const external = n.data('external_id') as string | null;
    replace(
      panel,
      h('h2', null, `${n.data('kind')} ${n.data('label')}`),
      facts([['Id', n.id()]]),
      n.data('kind') === 'party' && external ? h('div', { class: 'actions' }, h('a', { href: `/console/parties/${enc(external)}`, class: 'button' }, 'Open party'), h('a', { href: `/console/network/${enc(external)}`, class: 'button' }, 'Network')) : null,
      h('h3', null, 'Attributes'),
      json(n.data('raw')?.attributes ?? {}),
    );
  });
  cy.on('tap', 'edge', (event) => showEdge(panel, event.target));
  return () => {
    cy.destroy();
    window.__svcPaths = undefined;
  };
}

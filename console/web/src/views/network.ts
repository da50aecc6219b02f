import type cytoscape from 'cytoscape';
import { enc, get } from '../api.ts';
import { empty, facts, failure, h, json, loading, replace } from '../dom.ts';
import { concentric, drawGraph, forceLayout, showEdge, summarise, toElements, type Graph, type GraphSummary } from '../graph.ts';
import { currentGeneration, isCurrent, navigate, type Cleanup } from '../router.ts';

// The /v1 GraphNetwork (schemas/responses.ts), each node with the console's open_alerts.
interface Net extends Graph {
  center: string;
}

// What the page publishes for the tests and the render benchmark (see graph.ts GraphSummary).
interface NetworkState extends GraphSummary {
  ready: boolean;
  center: string;
  renderedAtMs: number | null;
}
declare global {
  interface Window {
    __svcNetwork?: NetworkState;
  }
}

// The party an account node can be expanded around: its holders drawn beside it (`holds` edges).
const holdersOf = (n: cytoscape.NodeSingular) =>
  n
    .connectedEdges('.holds')
    .connectedNodes('.party')
    .filter((p) => p.id() !== n.id() && Boolean(p.data('external_id')))
    .map((p) => ({ external: String(p.data('external_id')), label: String(p.data('label')) }));

export async function networkView([party]: string[], query: URLSearchParams): Promise<Cleanup | void> {
  const gen = currentGeneration();
  performance.mark('svc:network:start');
  const root = document.getElementById('view')!;
  const depth = query.get('depth') ?? '2';
  const limit = query.get('limit') ?? '200';
  const controls = h(
    'form',
    { class: 'filters', 'aria-label': 'network options' },
    h('label', null, 'Depth', h('select', { name: 'depth' }, ['1', '2', '3'].map((d) => h('option', { value: d, selected: d === depth }, d)))),
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
    h('p', { class: 'hint' }, 'Scroll to zoom, drag to pan. Red nodes have open alerts. Expand a party (or an account, around its holder) to draw its neighbourhood into this view.'),
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

  const cy = drawGraph(canvas, toElements(net, [net.center]), (c) => concentric(c, net.center), () => {
    performance.mark('svc:network:render');
    const m = performance.measure('svc:network:first-render', { start: 0, end: 'svc:network:render' });
    if (window.__svcNetwork) window.__svcNetwork.renderedAtMs = m.duration;
    publish();
  });
  function publish() {
    window.__svcNetwork = { ready: true, center: net.center, renderedAtMs: window.__svcNetwork?.renderedAtMs ?? null, ...summarise(cy) };
  }
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
              external !== party ? h('a', { href: `/console/paths?from=${enc(party!)}&to=${enc(external)}`, class: 'button', title: `Paths from ${party} to ${external}` }, 'Paths to…') : null,
            ]
          : n.data('kind') === 'account'
            ? accountExpand(n)
            : null,
      ),
      h('h3', null, 'Attributes'),
      json(raw?.attributes ?? raw?.attrs ?? {}),
    );
  };
  // The network is centred on parties: an account expands around its holder party.
  const accountExpand = (n: cytoscape.NodeSingular) => {
    const holders = holdersOf(n);
    if (holders.length === 0) {
      const why = 'No holder party of this account is drawn: the network is centred on parties. Expand or centre on a party that holds it.';
      return h('span', { title: why }, h('button', { type: 'button', disabled: true, title: why }, 'Expand here'));
    }
    return holders.map((p) => h('button', { type: 'button', title: `Expands around the holder party ${p.label}`, onclick: () => void expand(p.external) }, holders.length > 1 ? `Expand here (${p.label})` : 'Expand here'));
  };
  const expand = async (external: string) => {
    // Not ready until the expansion is drawn: what waits on `ready` must not see the old drawing's.
    if (window.__svcNetwork) window.__svcNetwork.ready = false;
    try {
      const more = await get<Net>(`/network/${enc(external)}?depth=1&limit=${enc(limit)}`);
      if (!isCurrent(gen)) return;
      const fresh = toElements(more).filter((el) => cy.getElementById(String(el.data.id)).empty());
      cy.add(fresh);
      cy.layout(forceLayout({ randomize: false })).run();
      publish();
    } catch (error) {
      panel.append(failure(error));
      publish();
    }
  };
  cy.on('tap', 'node', (event) => showNode(event.target));
  cy.on('tap', 'edge', (event) => showEdge(panel, event.target));
  layoutButtons.addEventListener('click', (event) => {
    const which = (event.target as HTMLElement).dataset.layout;
    if (which === 'fit') cy.fit(undefined, 24);
    else if (which === 'cose') cy.layout(forceLayout()).run();
    else if (which === 'concentric') cy.layout(concentric(cy, net.center)).run();
  });
  return () => {
    cy.destroy();
    window.__svcNetwork = undefined;
  };
}

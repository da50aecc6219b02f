import type cytoscape from 'cytoscape';
import { enc, get } from '../api.ts';
import { empty, facts, failure, h, json, loading, replace, when } from '../dom.ts';
import { movementLink } from '../format/links.ts';
import { formatMinor } from '../format/money.ts';
import { concentric, drawGraph, forceLayout, showEdge, summarise, toElements, type GraphSummary } from '../graph.ts';
import type { GraphEdge, GraphNetwork } from '../payloads.ts';
import { currentGeneration, isCurrent, navigate, type Cleanup } from '../router.ts';
import { baseAsset } from '../format/assets.ts';
import { filterForm, filterQuery, filtersFrom, legend, type NetworkFilters } from './network-filters.ts';

// What the page publishes for the tests and the render benchmark (see graph.ts GraphSummary).
// `focus`: the node selected and centred; `cited`: the drawn edges marked as carrying movements a
// case's alerts cite.
interface NetworkState extends GraphSummary {
  ready: boolean;
  center: string;
  focus: string | null;
  cited?: string[];
  query: string;
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

// The filters in words, for the status line.
function describe(f: NetworkFilters, net: GraphNetwork): string {
  const base = baseAsset();
  const parts = [
    net.window.since || net.window.until ? `from ${when(net.window.since)} to ${when(net.window.until)}` : 'all time',
    f.edgeTypes.length ? `edges: ${f.edgeTypes.join(', ').replaceAll('_', ' ')}` : 'all edge types',
    f.minAmount ? `movements of at least ${base ? formatMinor(f.minAmount, base.scale, base.asset) : `${f.minAmount} (minor units)`}` : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

// ?focus=<node id> selects and centres that node (how an account is opened from elsewhere).
export async function networkView([party]: string[], query: URLSearchParams): Promise<Cleanup | void> {
  const gen = currentGeneration();
  performance.mark('svc:network:start');
  const root = document.getElementById('view')!;
  const filters = filtersFrom(query);
  const focus = query.get('focus');
  // ?cited=account:A>account:B,…: the node pairs of the movements a case's alerts cite (the case
  // page links here with them); the lines carrying them are marked, across redraws.
  const citedParam = query.get('cited');
  const cited = new Set((citedParam ?? '').split(',').filter(Boolean));
  const here = (external: string, extra: Record<string, string> = {}) => {
    const q = filterQuery(filters);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return `/console/network/${enc(external)}?${q}`;
  };
  const controls = filterForm(filters, (next) => {
    const q = filterQuery(next);
    if (citedParam) q.set('cited', citedParam);
    navigate(`/console/network/${enc(party!)}?${q}`);
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
    legend(cited.size > 0),
    h('p', { class: 'hint' }, 'Scroll to zoom, drag to pan. Double-tap a party to centre the network on it, an account to centre the view on it. Expand a party (or an account, around its holder) to draw its neighbourhood into this view.'),
  );
  const apiQuery = filterQuery(filters).toString();
  window.__svcNetwork = { ready: false, center: '', focus: null, query: apiQuery, nodes: [], edges: [], renderedAtMs: null };

  let net: GraphNetwork;
  try {
    net = await get<GraphNetwork>(`/network/${enc(party!)}?${apiQuery}`);
  } catch (error) {
    if (isCurrent(gen)) replace(status, failure(error));
    return;
  }
  if (!isCurrent(gen)) return;
  // The network starts at a party, which reaches its accounts only through `holds` edges.
  const noHolds = filters.edgeTypes.length > 0 && !filters.edgeTypes.includes('holds');
  if (net.nodes.length === 0 || (noHolds && net.edges.length === 0)) {
    const filtered = filters.edgeTypes.length > 0 || filters.minAmount || filters.since || filters.until;
    replace(status, empty(`Nothing is connected to this party${filtered ? ' with these filters' : ''}.${noHolds ? ' A party reaches its accounts through holds edges: tick holds too.' : ''}`));
    window.__svcNetwork = { ready: true, center: net.center, focus: null, query: apiQuery, nodes: [], edges: [], renderedAtMs: null };
    return;
  }
  const counts = h('p', { class: 'muted', 'data-testid': 'net-summary' });
  replace(
    status,
    counts,
    net.truncated ? h('p', { class: 'state warn', role: 'status' }, `The network was cut at ${net.nodes.length} nodes: raise the limit, lower the depth or narrow the filters to see all of it.`) : null,
  );

  let focused: string | null = null;
  const cy = drawGraph(canvas, toElements(net, [net.center], { bundle: true }), (c) => concentric(c, net.center), () => {
    performance.mark('svc:network:render');
    const m = performance.measure('svc:network:first-render', { start: 0, end: 'svc:network:render' });
    if (window.__svcNetwork) window.__svcNetwork.renderedAtMs = m.duration;
    publish();
  });
  function publish() {
    counts.textContent = `${cy.nodes().length} nodes, ${cy.edges().length} connections (${net.edges.length} edges) · ${describe(filters, net)}`;
    markCited();
    const marked = cy.edges('.cited').map((e) => e.id());
    window.__svcNetwork = { ready: true, center: net.center, focus: focused, query: apiQuery, renderedAtMs: window.__svcNetwork?.renderedAtMs ?? null, ...summarise(cy), cited: marked };
  }
  // A drawn line is marked when one of its transfers runs between a cited pair, either way round
  // the line is drawn (it stands for both directions).
  function markCited() {
    if (cited.size === 0) return;
    cy.edges().forEach((e) => {
      const parts = e.data('parts') as GraphEdge[];
      if (parts.some((p) => p.type === 'transfer' && cited.has(`${p.source}>${p.target}`))) e.addClass('cited');
    });
  }
  publish();

  // The party a movement of this edge can be shown under: a party end, else an account end's holder.
  const partyOfEdge = (part: GraphEdge): string | null => {
    for (const id of [part.source, part.target]) {
      const n = cy.getElementById(id);
      if (n.empty()) continue;
      if (n.data('kind') === 'party' && n.data('external_id')) return String(n.data('external_id'));
      const holder = n.data('kind') === 'account' ? holdersOf(n)[0] : undefined;
      if (holder) return holder.external;
    }
    return null;
  };

  // Centre the view on a node without asking the API again (an account, or a party already drawn).
  const centreOn = (n: cytoscape.NodeSingular) => {
    cy.elements().unselect();
    n.select();
    cy.center(n);
    focused = n.id();
    const url = new URL(location.href);
    url.searchParams.set('focus', n.id());
    history.replaceState(null, '', url.pathname + url.search);
    showNode(n);
    publish();
  };

  const showNode = (n: cytoscape.NodeSingular) => {
    const raw = n.data('raw');
    const external = n.data('external_id') as string | null;
    const kind = n.data('kind') as string;
    replace(
      panel,
      h('h2', null, `${kind} ${n.data('label')}`),
      facts([
        ['Id', n.id()],
        ['Open alerts', h('span', { class: n.data('open_alerts') > 0 ? 'alerting' : '' }, String(n.data('open_alerts')))],
        ['Connections', String(n.degree(false))],
      ]),
      h(
        'div',
        { class: 'actions' },
        kind === 'party' && external
          ? [
              h('a', { href: `/console/parties/${enc(external)}`, class: 'button' }, 'Open party'),
              external !== party ? h('a', { href: here(external), class: 'button', title: `Draw the network around ${external}` }, 'Centre here') : h('button', { type: 'button', onclick: () => centreOn(n) }, 'Centre here'),
              h('button', { type: 'button', onclick: () => void expand(external) }, 'Expand here'),
              external !== party ? h('a', { href: `/console/paths?from=${enc(party!)}&to=${enc(external)}`, class: 'button', title: `Paths from ${party} to ${external}` }, 'Paths to…') : null,
            ]
          : kind === 'account'
            ? [
                h('button', { type: 'button', onclick: () => centreOn(n) }, 'Centre here'),
                holdersOf(n).map((p) => h('a', { href: `/console/parties/${enc(p.external)}`, class: 'button', title: `Open the holder party ${p.label}` }, holdersOf(n).length > 1 ? `Open holder ${p.label}` : 'Open holder')),
                accountExpand(n),
              ]
            : h('button', { type: 'button', onclick: () => centreOn(n) }, 'Centre here'),
      ),
      h('h3', null, 'Attributes'),
      json(raw?.attributes ?? {}),
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
      const more = await get<GraphNetwork>(`/network/${enc(external)}?${filterQuery(filters, { depth: '1' })}`);
      if (!isCurrent(gen)) return;
      // Edges already drawn stay as they are; the new ones are bundled again with the old ones
      // between the same two nodes, so a pair is still one line.
      const known = new Set(net.edges.map((e) => e.id));
      net = { ...net, nodes: [...net.nodes, ...more.nodes.filter((n) => cy.getElementById(n.id).empty())], edges: [...net.edges, ...more.edges.filter((e) => !known.has(e.id))] };
      const fresh = toElements(net, [net.center], { bundle: true });
      cy.batch(() => {
        cy.edges().remove();
        cy.add(fresh.filter((el) => cy.getElementById(String(el.data.id)).empty()));
      });
      cy.layout(forceLayout({ randomize: false })).run();
      publish();
    } catch (error) {
      panel.append(failure(error));
      publish();
    }
  };
  cy.on('tap', 'node', (event) => showNode(event.target));
  cy.on('tap', 'edge', (event) => showEdge(panel, event.target, (id, part) => movementLink(id, partyOfEdge(part))));
  // Cytoscape calls any two taps within its debounce time a double tap, wherever they land: two
  // quick taps on different nodes must each just show their node, so only a second tap on the
  // node tapped just before centres (or opens) it.
  let lastTapped: string | null = null;
  let tappedBefore: string | null = null;
  cy.on('tap', (event) => {
    tappedBefore = lastTapped;
    lastTapped = event.target === cy ? null : (event.target as cytoscape.SingularElementArgument).id();
  });
  cy.on('dbltap', 'node', (event) => {
    const n = event.target as cytoscape.NodeSingular;
    if (tappedBefore !== n.id()) return;
    const external = n.data('external_id') as string | null;
    if (n.data('kind') === 'party' && external && external !== party) navigate(here(external));
    else centreOn(n);
  });
  layoutButtons.addEventListener('click', (event) => {
    const which = (event.target as HTMLElement).dataset.layout;
    if (which === 'fit') cy.fit(undefined, 24);
    else if (which === 'cose') cy.layout(forceLayout()).run();
    else if (which === 'concentric') cy.layout(concentric(cy, net.center)).run();
  });
  // A few nodes would be fitted at a giant's zoom.
  if (cy.zoom() > 1.5) cy.zoom(1.5);
  // The subject in the middle: the ring layout puts the centre there; a focus moves the view to it.
  const target = focus ? cy.getElementById(focus) : cy.getElementById(net.center);
  if (focus && target.nonempty()) centreOn(target);
  else if (target.nonempty()) cy.center(target);
  if (focus && target.empty()) status.append(h('p', { class: 'state warn', role: 'status' }, `${focus} is not in this drawing: raise the depth or the node limit, or widen the filters.`));
  return () => {
    cy.destroy();
    window.__svcNetwork = undefined;
  };
}

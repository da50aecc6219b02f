import type { EdgeType } from '../../../../schemas/graph.ts';
import { h } from '../dom.ts';
import { baseAsset } from '../format/assets.ts';
import { formatMinor, parseAmount } from '../format/money.ts';

// The network screen's filters: the page URL carries them in the API's own terms (since/until
// instants, edge_types, min_amount in base-asset minor units), so a filtered view can be shared
// and is passed to GET /console/v1/network/:party as it is.

// Every edge type the API filters on (schemas/graph.ts EDGE_TYPES); a type added there fails the
// type check below until it is offered here.
const EDGE_TYPE_CHOICES = [
  'transfer', 'holds', 'uses', 'shares', 'beneficial_owner', 'authorized_signer', 'joint_holder', 'employer', 'household_member',
  'parent_org', 'merchant_owner', 'agent', 'referral', 'onboarding', 'owns_instrument', 'funds_account', 'same_as', 'other',
] as const satisfies readonly EdgeType[];
const everyTypeOffered: [Exclude<EdgeType, (typeof EDGE_TYPE_CHOICES)[number]>] extends [never] ? true : never = true;
void everyTypeOffered;

export interface NetworkFilters {
  depth: string;
  limit: string;
  since?: string;
  until?: string;
  edgeTypes: string[];
  minAmount?: string;
}

export function filtersFrom(query: URLSearchParams): NetworkFilters {
  const types = (query.get('edge_types') ?? '').split(',').filter(Boolean);
  return {
    depth: query.get('depth') ?? '2',
    limit: query.get('limit') ?? '200',
    since: query.get('since') ?? undefined,
    until: query.get('until') ?? undefined,
    edgeTypes: types,
    minAmount: query.get('min_amount') ?? undefined,
  };
}

// The API's query (and the page's), without the defaults' noise.
export function filterQuery(f: NetworkFilters, overrides: Partial<NetworkFilters> = {}): URLSearchParams {
  const all = { ...f, ...overrides };
  const q = new URLSearchParams({ depth: all.depth, limit: all.limit });
  if (all.since) q.set('since', all.since);
  if (all.until) q.set('until', all.until);
  if (all.edgeTypes.length) q.set('edge_types', all.edgeTypes.join(','));
  if (all.minAmount) q.set('min_amount', all.minAmount);
  return q;
}

// Dates are whole UTC days: from the start of `since` to the end of `until`.
const dayOf = (instant?: string) => (instant ? instant.slice(0, 10) : '');
const startOf = (day: string) => (day ? `${day}T00:00:00.000Z` : undefined);
const endOf = (day: string) => (day ? `${day}T23:59:59.999Z` : undefined);

// The form; `submit` gets the new filters, or the form shows why it cannot.
export function filterForm(f: NetworkFilters, submit: (next: NetworkFilters) => void): HTMLFormElement {
  const base = baseAsset();
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  const form = h(
    'form',
    { class: 'filters network-filters', 'aria-label': 'network options', novalidate: true },
    h('label', null, 'Depth', h('select', { name: 'depth' }, ['1', '2', '3'].map((d) => h('option', { value: d, selected: d === f.depth }, d)))),
    h('label', null, 'Node limit', h('input', { name: 'limit', type: 'number', min: '10', max: '1000', value: f.limit })),
    h('label', null, 'From (UTC)', h('input', { name: 'since', type: 'date', value: dayOf(f.since) })),
    h('label', null, 'To (UTC)', h('input', { name: 'until', type: 'date', value: dayOf(f.until) })),
    h(
      'label',
      null,
      `Min. movement${base ? ` (${base.asset})` : ''}`,
      h('input', {
        name: 'min_amount',
        inputmode: 'decimal',
        placeholder: 'any',
        disabled: !base,
        title: base ? `Only movements of at least this much (in ${base.asset}) are counted and drawn` : 'The base asset is unknown: reload the page',
        value: f.minAmount && base ? formatMinor(f.minAmount, base.scale, '') : '',
      }),
    ),
    h(
      'fieldset',
      { class: 'edge-types' },
      h('legend', null, 'Edge types (none ticked: all; a party reaches its accounts through holds)'),
      EDGE_TYPE_CHOICES.map((t) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'edge_types', value: t, checked: f.edgeTypes.includes(t) }), t.replaceAll('_', ' '))),
    ),
    message,
    h('button', { type: 'submit' }, 'Redraw'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const text = String(data.get('min_amount') ?? '').trim();
    const minAmount = text && base ? parseAmount(text, base.scale) : undefined;
    const since = String(data.get('since') ?? '');
    const until = String(data.get('until') ?? '');
    const problem =
      text && base && minAmount === undefined
        ? `the minimum must be an amount of ${base.asset} with at most ${base.scale} decimals`
        : since && until && since > until
          ? 'the start date must not be after the end date'
          : undefined;
    message.hidden = !problem;
    message.textContent = problem ?? '';
    if (problem) return;
    submit({
      depth: String(data.get('depth')),
      limit: String(data.get('limit')),
      since: startOf(since),
      until: endOf(until),
      edgeTypes: data.getAll('edge_types').map(String),
      minAmount: minAmount && minAmount !== '0' ? minAmount : undefined,
    });
  });
  return form;
}

// The key to the drawing: node kinds and marks, and what an edge line says.
export const legend = (cited = false) =>
  h(
    'ul',
    { class: 'legend', 'aria-label': 'legend', 'data-testid': 'legend' },
    h('li', null, h('span', { class: 'swatch party' }), 'party'),
    h('li', null, h('span', { class: 'swatch account' }), 'account'),
    h('li', null, h('span', { class: 'swatch other' }), 'instrument, identifier, device, ip'),
    h('li', null, h('span', { class: 'swatch alerted' }), 'has open alerts'),
    h('li', null, h('span', { class: 'swatch center' }), 'centre'),
    h('li', null, h('span', { class: 'line transfer' }), 'transfers: one line per pair, thicker for more, arrows both ways (⇄) when money went both ways'),
    h('li', null, h('span', { class: 'line holds' }), 'holds an account'),
    cited ? h('li', null, h('span', { class: 'line cited' }), "carries movements the case's alerts cite") : null,
    h('li', null, 'Hover or select a line for its count and total; tap a node to open or centre it.'),
  );

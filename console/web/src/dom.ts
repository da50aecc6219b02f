// A small DOM helper: h('a', { href, class, onclick }, ...children). Text is always set as text,
// never parsed as HTML; there is no `style` attribute (the CSP forbids inline styles).
import { scaleOf } from './format/assets.ts';
import { formatMinor } from './format/money.ts';

export type Child = Node | string | number | null | undefined | false | Child[];
// Each `on…` handler takes its own event type (a KeyboardEvent for onkeydown...): method syntax
// keeps the parameter bivariant, as the DOM's own handler types do.
type Handler = { handle(event: Event): void }['handle'];
export type Props = Record<string, string | number | boolean | Handler | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'style') throw new Error('inline styles are refused by the CSP: use a class');
    else if (typeof value === 'boolean') el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export const loading = (what = 'Loading') => h('p', { class: 'state loading', role: 'status', 'aria-busy': 'true' }, `${what}…`);
export const empty = (what: string) => h('p', { class: 'state empty', role: 'status' }, what);
export const failure = (error: unknown) => h('p', { class: 'state error', role: 'alert' }, error instanceof Error ? error.message : String(error));

export const when = (at: unknown) => {
  if (typeof at !== 'string' || at === '') return '—';
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$|:\d\dZ$/, 'Z');
};

// A money object of the API ({ value, asset, scale }) as text, through the console's formatter.
export function money(amount: unknown): string {
  if (!amount || typeof amount !== 'object') return '—';
  const { value, asset, scale } = amount as { value?: string; asset?: string; scale?: number };
  if (value === undefined) return '—';
  return formatMinor(value, scale ?? (asset ? scaleOf(asset) : undefined), asset ?? '');
}

// A definition list from label/value pairs; values may be nodes.
export const facts = (pairs: Array<[string, Child]>) => h('dl', { class: 'facts' }, pairs.map(([k, v]) => [h('dt', null, k), h('dd', null, v ?? '—')]));

// Any JSON value as a readable, text-only tree (evidence, attributes).
export function json(value: unknown): HTMLElement {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, '—');
  if (Array.isArray(value)) {
    if (value.length === 0) return h('span', { class: 'muted' }, 'none');
    if (value.every((v) => typeof v !== 'object' || v === null)) return h('span', null, value.map(String).join(', '));
    return h('ul', { class: 'json' }, value.map((v) => h('li', null, json(v))));
  }
  if (typeof value === 'object') {
    return facts(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, json(v)]));
  }
  return h('span', null, String(value));
}

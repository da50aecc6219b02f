import { enc, get, post } from '../api.ts';
import { empty, facts, failure, h, loading, money, replace, when } from '../dom.ts';
import { currentGeneration, isCurrent, render } from '../router.ts';

// Reconciliation breaks: the queue (by state) and one break with its reconciliation, every
// difference item (paged, and the CSV), its comments, and the actions: acknowledge, comment,
// resolve. Who did what and when is shown as recorded by the service.

interface Break {
  break_id: string;
  reconciliation_id: string;
  state: string;
  opened_at: string;
  opened_difference: { count: number; sum: Money };
  acknowledged: { by: string; at: string } | null;
  resolved: { by: string; at: string; resolution: string } | null;
  comments: Array<{ by: string; at: string; body: string }>;
}
interface Money {
  value: string;
  asset: string;
  scale: number;
}
interface Reconciliation {
  reconciliation_id: string;
  scope: { kind: string; external_id?: string };
  direction: string;
  asset: string;
  period: { from: string; to: string };
  declared: { count: number; sum: Money };
  counted_statuses?: string[];
  basis?: string;
  status: string;
  result: { observed: { count: number; sum: Money }; explanation: { count_difference: number; sum_difference: Money; within_tolerance?: boolean } };
}
interface Item {
  source: string;
  reason: string;
  external_id: string;
  occurred_at: string;
  status: string;
  type: string;
  amount: Money;
  related: string | null;
}
interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string;
}

const STATES = ['open', 'acknowledged', 'resolved'];

export async function breakQueueView(_params: string[], query: URLSearchParams): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const state = query.get('state') ?? 'open';
  const tabs = h(
    'nav',
    { class: 'filters', 'aria-label': 'break states' },
    [...STATES, 'all'].map((s) => h('a', { href: `/console/breaks?state=${s === 'all' ? '' : s}`, 'aria-current': s === (state || 'all') ? 'page' : null }, s)),
  );
  const list = h('section', { 'aria-label': 'breaks', class: 'queue' }, loading('Loading breaks'));
  replace(root, h('h1', null, 'Reconciliation breaks'), tabs, list);
  const api = new URLSearchParams({ limit: '25' });
  if (state) api.set('state', state);
  const cursor = query.get('cursor');
  if (cursor) api.set('cursor', cursor);
  try {
    const page = await get<Page<Break>>(`/reconciliation-breaks?${api}`);
    if (!isCurrent(gen)) return;
    if (page.data.length === 0) return replace(list, empty('No break in this state.'));
    replace(
      list,
      h(
        'table',
        { class: 'grid', 'aria-label': 'breaks' },
        h('thead', null, h('tr', null, ['Opened', 'State', 'Count diff.', 'Sum diff. (minor units)', 'Acknowledged', 'Resolved'].map((c) => h('th', { scope: 'col' }, c)))),
        h(
          'tbody',
          null,
          page.data.map((b) =>
            h(
              'tr',
              { 'data-break-id': b.break_id },
              h('td', null, h('a', { href: `/console/breaks/${enc(b.break_id)}` }, when(b.opened_at))),
              h('td', null, h('span', { class: `badge state-${b.state}` }, b.state)),
              h('td', { class: 'num' }, String(b.opened_difference.count)),
              h('td', { class: 'num' }, money(b.opened_difference.sum)),
              h('td', null, b.acknowledged ? `${b.acknowledged.by} · ${when(b.acknowledged.at)}` : '—'),
              h('td', null, b.resolved ? `${b.resolved.by} · ${when(b.resolved.at)}` : '—'),
            ),
          ),
        ),
      ),
    );
    if (page.has_more && page.next_cursor) {
      const next = new URLSearchParams(query);
      next.set('cursor', page.next_cursor);
      list.append(h('nav', { class: 'pager', 'aria-label': 'pages' }, h('a', { href: `/console/breaks?${next}`, rel: 'next' }, 'Next page →')));
    }
  } catch (error) {
    if (isCurrent(gen)) replace(list, failure(error));
  }
}

function textAction(label: string, field: string, required: boolean, submit: (text: string) => Promise<void>) {
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  const form = h(
    'form',
    { class: 'case-action', 'aria-label': label, novalidate: true },
    h('h3', null, label),
    h('label', null, required ? `${field} (required)` : `${field} (optional)`, h('textarea', { name: 'text', rows: 2, required })),
    message,
    h('button', { type: 'submit' }, label),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = String(new FormData(form).get('text') ?? '').trim();
    message.hidden = true;
    if (required && text.length === 0) {
      message.hidden = false;
      message.textContent = `give a ${field.toLowerCase()}`;
      return;
    }
    form.querySelector('button')!.disabled = true;
    try {
      await submit(text);
      await render();
    } catch (error) {
      message.hidden = false;
      message.textContent = error instanceof Error ? error.message : String(error);
      form.querySelector('button')!.disabled = false;
    }
  });
  return form;
}

export async function breakView([id]: string[], query: URLSearchParams): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  replace(root, loading('Loading the break'));
  try {
    const found = await get<Break & { reconciliation: Reconciliation }>(`/reconciliation-breaks/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    const r = found.reconciliation;
    const itemsQuery = new URLSearchParams({ limit: '50' });
    const cursor = query.get('cursor');
    if (cursor) itemsQuery.set('cursor', cursor);
    const items = await get<Page<Item>>(`/reconciliations/${enc(r.reconciliation_id)}/items?${itemsQuery}`);
    if (!isCurrent(gen)) return;
    const actions = h('section', { class: 'forms', 'aria-label': 'actions' });
    if (found.state === 'open') actions.append(textAction('Acknowledge', 'Note', false, async (note) => void (await post(`/reconciliation-breaks/${enc(found.break_id)}/acknowledge`, note ? { note } : {}))));
    if (found.state !== 'resolved') actions.append(textAction('Resolve', 'Resolution', true, async (resolution) => void (await post(`/reconciliation-breaks/${enc(found.break_id)}/resolve`, { resolution }))));
    actions.append(textAction('Comment', 'Comment', true, async (body) => void (await post(`/reconciliation-breaks/${enc(found.break_id)}/comments`, { body }))));
    const next = items.has_more && items.next_cursor ? `/console/breaks/${enc(found.break_id)}?cursor=${encodeURIComponent(items.next_cursor)}` : null;
    replace(
      root,
      h('h1', null, `Break ${found.break_id}`, ' ', h('span', { class: `badge state-${found.state}` }, found.state)),
      facts([
        ['Reconciliation', r.reconciliation_id],
        ['Scope', `${r.scope.kind}${r.scope.external_id ? ` ${r.scope.external_id}` : ''} · ${r.direction}`],
        ['Period', `${when(r.period.from)} → ${when(r.period.to)}${r.basis === 'recorded' ? ' (recorded time)' : ''}`],
        ['Statuses counted', (r.counted_statuses ?? []).join(', ')],
        ['Declared', `${r.declared.count} · ${money(r.declared.sum)}`],
        ['Observed', `${r.result.observed.count} · ${money(r.result.observed.sum)}`],
        ['Difference now', `${r.result.explanation.count_difference} · ${money(r.result.explanation.sum_difference)}${r.status === 'matched' ? ' (matched)' : ''}`],
        ['Opened', `${when(found.opened_at)} with ${found.opened_difference.count} · ${money(found.opened_difference.sum)}`],
        ['Acknowledged', found.acknowledged ? `${found.acknowledged.by} · ${when(found.acknowledged.at)}` : null],
        ['Resolved', found.resolved ? `${found.resolved.by} · ${when(found.resolved.at)} · ${found.resolved.resolution}` : null],
      ]),
      h('h2', null, 'Difference items'),
      h('p', null, h('a', { href: `/console/v1/reconciliations/${enc(r.reconciliation_id)}/items?format=csv`, download: 'items.csv' }, 'Download every item as CSV')),
      items.data.length === 0
        ? empty('Nothing the totals leave out, and no event waiting.')
        : h(
            'table',
            { class: 'grid', 'aria-label': 'difference items' },
            h('thead', null, h('tr', null, ['Reason', 'Movement', 'Occurred', 'Status', 'Type', 'Amount', 'Related'].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              null,
              items.data.map((i) =>
                h('tr', null, h('td', null, i.reason.replaceAll('_', ' ')), h('td', null, i.external_id), h('td', null, when(i.occurred_at)), h('td', null, i.status), h('td', null, i.type), h('td', { class: 'num' }, money(i.amount)), h('td', null, i.related ?? '—')),
              ),
            ),
          ),
      next ? h('nav', { class: 'pager', 'aria-label': 'item pages' }, h('a', { href: next, rel: 'next' }, 'More items →')) : null,
      h('h2', null, 'Comments'),
      found.comments.length === 0 ? empty('No comment yet.') : h('ol', { class: 'comments' }, found.comments.map((c) => h('li', null, h('strong', null, c.by), ` · ${when(c.at)}: `, c.body))),
      actions,
    );
  } catch (error) {
    if (isCurrent(gen)) replace(root, failure(error));
  }
}

import { enc, get } from '../api.ts';
import { empty, failure, h, loading, replace, when } from '../dom.ts';
import { currentGeneration, isCurrent, navigate, type Cleanup } from '../router.ts';

interface AlertRow {
  alert_id: string;
  detector: string;
  typology: string;
  severity: string;
  score: number;
  status: string;
  subject: { kind: string; external_id: string };
  created_at: string;
  updated_at: string;
  episode_id: string | null;
}
interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string;
}

const FILTERS = ['status', 'severity', 'detector', 'subject', 'subject_kind', 'max_age_h', 'sort'] as const;
const select = (name: string, label: string, options: string[], value: string | null) =>
  h('label', null, label, h('select', { name }, options.map((o) => h('option', { value: o, selected: o === (value ?? '') }, o === '' ? 'any' : o))));
const input = (name: string, label: string, value: string | null, extra: Record<string, string> = {}) => h('label', null, label, h('input', { name, value: value ?? '', ...extra }));

const subjectLink = (subject: { kind: string; external_id: string }) =>
  subject.kind === 'party' ? h('a', { href: `/console/parties/${enc(subject.external_id)}` }, `party ${subject.external_id}`) : `${subject.kind} ${subject.external_id}`;

// Keyboard: j / ↓ next row, k / ↑ previous row, Enter or o opens, n next page, p previous page,
// / the filters. Keys typed into a form field are the field's.
export async function alertQueueView(_params: string[], query: URLSearchParams): Promise<Cleanup> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'filter alerts' },
    select('status', 'Status', ['', 'open', 'closed'], query.get('status') ?? 'open'),
    select('severity', 'Severity', ['', 'low', 'medium', 'high', 'critical'], query.get('severity')),
    input('detector', 'Detector', query.get('detector')),
    input('subject', 'Subject', query.get('subject')),
    select('subject_kind', 'Kind', ['', 'party', 'account'], query.get('subject_kind')),
    input('max_age_h', 'Max age (h)', query.get('max_age_h'), { type: 'number', min: '1' }),
    select('sort', 'Sort', ['newest', 'oldest', 'severity'], query.get('sort') ?? 'newest'),
    h('button', { type: 'submit' }, 'Apply'),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(filters)) if (typeof v === 'string' && v !== '') next.set(k, v);
    // "any" status is an explicit empty value, so the default (open) does not come back.
    if (!next.has('status')) next.set('status', '');
    navigate(`/console/alerts?${next}`);
  });
  const list = h('section', { 'aria-label': 'alerts', class: 'queue' }, loading('Loading alerts'));
  replace(root, h('h1', null, 'Alert queue'), filters, list, h('p', { class: 'hint' }, 'Keys: j/k or ↓/↑ move · Enter opens · n/p next/previous page · / filters'));

  const api = new URLSearchParams();
  for (const f of FILTERS) {
    const v = query.get(f) ?? (f === 'status' ? 'open' : null);
    if (v) api.set(f, v);
  }
  const cursor = query.get('cursor');
  if (cursor) api.set('cursor', cursor);
  api.set('limit', query.get('limit') ?? '25');

  let rows: HTMLTableRowElement[] = [];
  let selected = 0;
  let nextHref: string | null = null;
  const choose = (i: number) => {
    if (rows.length === 0) return;
    selected = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach((r, j) => r.setAttribute('aria-selected', String(j === selected)));
    rows[selected]!.focus();
  };
  const onKey = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement | null;
    if (event.ctrlKey || event.metaKey || event.altKey || (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName))) return;
    if (event.key === 'j' || event.key === 'ArrowDown') choose(selected + 1);
    else if (event.key === 'k' || event.key === 'ArrowUp') choose(selected - 1);
    else if ((event.key === 'Enter' || event.key === 'o') && rows[selected]) navigate(rows[selected]!.dataset.href!);
    else if (event.key === 'n' && nextHref) navigate(nextHref);
    else if (event.key === 'p' && cursor) history.back();
    else if (event.key === '/') filters.querySelector('select')!.focus();
    else return;
    event.preventDefault();
  };
  document.addEventListener('keydown', onKey);
  const cleanup = () => document.removeEventListener('keydown', onKey);

  try {
    const page = await get<Page<AlertRow>>(`/alerts?${api}`);
    if (!isCurrent(gen)) return cleanup;
    if (page.data.length === 0) {
      replace(list, empty(cursor ? 'No more alerts.' : 'No alert matches these filters.'));
    } else {
      rows = page.data.map((a) => {
        const href = `/console/alerts/${enc(a.alert_id)}`;
        const tr = h(
          'tr',
          { tabindex: '-1', 'data-href': href, 'data-alert-id': a.alert_id, 'aria-selected': 'false', class: `sev-${a.severity}` },
          h('td', null, h('span', { class: `badge sev-${a.severity}` }, a.severity)),
          h('td', null, h('a', { href }, a.detector)),
          h('td', null, a.typology),
          h('td', null, subjectLink(a.subject)),
          h('td', { class: 'num' }, a.score.toFixed(2)),
          h('td', null, a.status),
          h('td', null, when(a.created_at)),
          h('td', null, a.episode_id ? h('a', { href: `/console/episodes/${enc(a.episode_id)}` }, 'episode') : '—'),
        );
        tr.addEventListener('click', (event) => {
          if ((event.target as Element).closest('a')) return;
          navigate(href);
        });
        return tr;
      });
      replace(
        list,
        h(
          'table',
          { class: 'grid', 'aria-label': 'alerts' },
          h('thead', null, h('tr', null, ['Severity', 'Detector', 'Typology', 'Subject', 'Score', 'Status', 'Raised', 'Episode'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', null, rows),
        ),
      );
      choose(0);
    }
    const pager = h('nav', { class: 'pager', 'aria-label': 'pages' });
    if (cursor) {
      const first = new URLSearchParams(query);
      first.delete('cursor');
      pager.append(h('a', { href: `/console/alerts?${first}` }, '⇤ First page'));
    }
    if (page.has_more && page.next_cursor) {
      const next = new URLSearchParams(query);
      next.set('cursor', page.next_cursor);
      nextHref = `/console/alerts?${next}`;
      pager.append(h('a', { href: nextHref, rel: 'next' }, 'Next page →'));
    }
    list.append(pager);
  } catch (error) {
    if (isCurrent(gen)) replace(list, failure(error));
  }
  return cleanup;
}

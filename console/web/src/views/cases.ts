import type { CaseInboxQuery, CasePage, CaseSummary } from '../../../../schemas/console/cases.ts';
import { currentSession, get } from '../api.ts';
import { empty, failure, h, loading, replace } from '../dom.ts';
import { subjectLinkOf } from '../format/links.ts';
import { currentGeneration, isCurrent, navigate, render, type Cleanup } from '../router.ts';
import { assignCases, knownUsers, outcomeText, userPicker } from './case-assign.ts';
import { listKeys } from './case-keys.ts';
import { ageText, amountText, assigneeText, caseHref, dueCell, priorityBadge, shortCaseId, statusText } from './case-parts.ts';

// The case inbox, the analysts' landing page (/console/cases). Filters, sort and cursor live in
// the URL, as in the alert queue; every value goes to GET /console/v1/cases unchanged.
type Filter = Exclude<keyof CaseInboxQuery, 'limit' | 'cursor'>;
const FILTERS: readonly Filter[] = ['status', 'assignee', 'typology', 'priority', 'overdue', 'awaiting_approval', 'sort'];
const STATUSES: Array<[string, string]> = [['', 'open work'], ['open', 'open'], ['investigating', 'investigating'], ['escalated', 'escalated'], ['closed', 'closed']];
const PRIORITIES: Array<[string, string]> = [['', 'any'], ['critical', 'critical'], ['high', 'high'], ['medium', 'medium'], ['low', 'low']];
const SORTS: Array<[string, string]> = [['age', 'oldest first'], ['due', 'due soonest'], ['amount', 'largest amount'], ['priority', 'highest priority']];
const SUBJECTS_SHOWN = 3;

// What the last assignment did, shown once by the next drawing of the inbox (which re-reads the list).
let flash: string | null = null;

// The quick views: each is a set of filters; the one matching the URL is marked current.
const QUICK: Array<{ label: string; testid: string; query: Partial<Record<Filter, string>> }> = [
  { label: 'All open', testid: 'quick-all', query: {} },
  { label: 'My cases', testid: 'quick-mine', query: { assignee: 'me' } },
  { label: 'Unassigned', testid: 'quick-unassigned', query: { assignee: 'unassigned' } },
  { label: 'Awaiting approval', testid: 'quick-approval', query: { awaiting_approval: 'true' } },
];

const choice = (name: string, label: string, options: Array<[string, string]>, value: string | null) =>
  h('label', null, label, h('select', { name }, options.map(([v, text]) => h('option', { value: v, selected: v === (value ?? '') }, text))));

function quickViews(query: URLSearchParams): HTMLElement {
  const active = FILTERS.filter((f) => query.get(f));
  return h(
    'nav',
    { class: 'quick-views', 'aria-label': 'quick views' },
    QUICK.map((q) => {
      const params = new URLSearchParams(q.query);
      const current = active.length === Object.keys(q.query).length && active.every((f) => q.query[f] === query.get(f));
      return h('a', { href: `/console/cases${params.size ? `?${params}` : ''}`, 'data-testid': q.testid, 'aria-current': current ? 'page' : null }, q.label);
    }),
  );
}

function filterForm(query: URLSearchParams, users: ReturnType<typeof knownUsers>): HTMLFormElement {
  const assignee = query.get('assignee') ?? '';
  const assigneeOptions: Array<[string, string]> = [['', 'anyone'], ['me', 'me'], ['unassigned', 'unassigned'], ...users.map((u): [string, string] => [u.user_id, u.email])];
  if (assignee && !assigneeOptions.some(([v]) => v === assignee)) assigneeOptions.push([assignee, assignee]);
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'filter cases' },
    choice('status', 'Status', STATUSES, query.get('status')),
    choice('assignee', 'Assignee', assigneeOptions, assignee),
    h('label', null, 'Typology', h('input', { name: 'typology', value: query.get('typology') ?? '', maxlength: 128 })),
    choice('priority', 'Priority', PRIORITIES, query.get('priority')),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'overdue', value: 'true', checked: query.get('overdue') === 'true' }), 'Overdue only'),
    choice('sort', 'Sort', SORTS, query.get('sort') ?? 'age'),
    h('button', { type: 'submit' }, 'Apply'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v !== '' && !(k === 'sort' && v === 'age')) next.set(k, v);
    if (query.get('awaiting_approval')) next.set('awaiting_approval', query.get('awaiting_approval')!);
    navigate(`/console/cases${next.size ? `?${next}` : ''}`);
  });
  return form;
}

function subjectsCell(c: CaseSummary): HTMLElement {
  const shown = c.subjects.slice(0, SUBJECTS_SHOWN);
  const more = c.subject_count - shown.length;
  // An account opens in the network of the case's first party subject (usually its holder).
  const party = c.subjects.find((s) => s.kind === 'party')?.external_id ?? null;
  return h('td', null, shown.map((s, i) => [i > 0 ? ', ' : '', subjectLinkOf(s, party)]), more > 0 ? h('span', { class: 'muted' }, ` +${more} more`) : null);
}

export async function caseInboxView(_params: string[], query: URLSearchParams): Promise<Cleanup> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const me = currentSession()!.user;
  const supervisor = me.role === 'supervisor';
  const list = h('section', { 'aria-label': 'cases', class: 'queue' }, loading('Loading cases'));
  const said = h('p', { class: 'hint', role: 'status', 'data-testid': 'assign-status' }, flash ?? '');
  flash = null;
  replace(root, h('h1', null, 'Cases'), quickViews(query), filterForm(query, knownUsers([])), said, list, h('p', { class: 'hint' }, 'Keys: j/k or ↓/↑ move · Enter opens · x selects (supervisors) · n/p next/previous page · / filters'));

  const api = new URLSearchParams();
  for (const f of FILTERS) {
    const v = query.get(f);
    if (v) api.set(f, v);
  }
  const cursor = query.get('cursor');
  if (cursor) api.set('cursor', cursor);
  api.set('limit', query.get('limit') ?? '50');
  let nextHref: string | null = null;
  const keys = listKeys({
    rows: () => [...list.querySelectorAll<HTMLTableRowElement>('tbody tr[data-href]')],
    nextHref: () => nextHref,
    hasPrevious: cursor !== null,
    filters: () => root.querySelector('form.filters'),
  });

  try {
    const page = await get<CasePage>(`/cases?${api}`);
    if (!isCurrent(gen)) return keys.cleanup;
    const users = knownUsers(page.data.map((c) => c.assignee));
    // The assignee filter can offer the users this page names.
    root.querySelector('form.filters')!.replaceWith(filterForm(query, users));
    if (page.data.length === 0) {
      replace(list, empty(cursor ? 'No more cases.' : 'No case matches these filters.'));
    } else {
      replace(list, supervisor ? bulkAssign(users, list) : null, caseTable(page.data, supervisor, me.id));
      keys.choose(0);
    }
    const pager = h('nav', { class: 'pager', 'aria-label': 'pages' });
    if (cursor) {
      const first = new URLSearchParams(query);
      first.delete('cursor');
      pager.append(h('a', { href: `/console/cases${first.size ? `?${first}` : ''}` }, '⇤ First page'));
    }
    if (page.has_more && page.next_cursor) {
      const next = new URLSearchParams(query);
      next.set('cursor', page.next_cursor);
      nextHref = `/console/cases?${next}`;
      pager.append(h('a', { href: nextHref, rel: 'next' }, 'Next page →'));
    }
    list.append(pager);
  } catch (error) {
    if (isCurrent(gen)) replace(list, failure(error));
  }
  return keys.cleanup;
}

function caseTable(cases: CaseSummary[], supervisor: boolean, me: string): HTMLTableElement {
  const head = ['Case', 'Priority', 'Status', 'Assignee', 'Age', 'Due', 'Amount at stake', 'Typologies', 'Subjects', 'Alerts'];
  const selectAll = h('input', { type: 'checkbox', 'aria-label': 'select every case on this page', 'data-testid': 'select-all' });
  selectAll.addEventListener('change', () => {
    for (const box of selectAll.closest('table')!.querySelectorAll<HTMLInputElement>('tbody input[name=case]')) box.checked = selectAll.checked;
  });
  return h(
    'table',
    { class: 'grid cases', 'aria-label': 'cases' },
    h('thead', null, h('tr', null, supervisor ? h('th', { scope: 'col' }, selectAll) : null, head.map((c) => h('th', { scope: 'col' }, c)), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
    h(
      'tbody',
      null,
      cases.map((c) => {
        const href = caseHref(c.episode_id);
        const tr = h(
          'tr',
          { 'data-case-id': c.episode_id, 'data-href': href, tabindex: '-1', 'aria-selected': 'false', class: c.overdue ? 'overdue' : null },
          supervisor ? h('td', null, h('input', { type: 'checkbox', name: 'case', value: c.episode_id, 'aria-label': `select case ${shortCaseId(c.episode_id)}` })) : null,
          h('th', { scope: 'row' }, h('a', { href, title: c.episode_id }, shortCaseId(c.episode_id))),
          h('td', null, priorityBadge(c.priority)),
          h('td', { 'data-testid': 'status' }, statusText(c.case_status), c.awaiting_approval ? h('span', { class: 'badge approval' }, 'report awaiting approval') : null),
          h('td', { 'data-testid': 'assignee' }, assigneeText(c.assignee)),
          h('td', { class: 'num', title: `opened ${c.opened_at}` }, ageText(c.age_seconds)),
          h('td', { 'data-testid': 'due' }, dueCell(c)),
          h('td', { class: 'num', 'data-testid': 'amount' }, amountText(c.amount)),
          h('td', null, c.typologies.join(', ') || '—'),
          subjectsCell(c),
          h('td', { class: 'num' }, c.alert_count),
          h('td', null, c.assignee === null && c.case_status !== 'closed' ? takeButton(c.episode_id, me) : null),
        );
        tr.addEventListener('click', (event) => {
          if ((event.target as Element).closest('a, button, input, label')) return;
          navigate(href);
        });
        return tr;
      }),
    ),
  );
}

// Any user may take an unassigned case.
function takeButton(episodeId: string, me: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'small', 'data-testid': 'take' }, 'Take');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const response = await assignCases([episodeId], me);
      const outcome = response.results[0]?.outcome;
      if (outcome !== 'assigned' && outcome !== 'unchanged') throw new Error(`not taken: ${outcome ?? 'no answer'}`);
      await render();
    } catch (error) {
      button.disabled = false;
      button.replaceWith(button, h('span', { class: 'state error', role: 'alert' }, error instanceof Error ? error.message : String(error)));
    }
  });
  return button;
}

// A supervisor assigns (or reassigns, or unassigns) the selected cases in one call.
function bulkAssign(users: ReturnType<typeof knownUsers>, list: HTMLElement): HTMLFormElement {
  const status = h('span', { class: 'hint', role: 'alert' });
  const form = h(
    'form',
    { class: 'filters bulk-assign', 'aria-label': 'assign selected cases' },
    userPicker('user_id', 'Assign selected to', users, currentSession()!.user.id),
    h('button', { type: 'submit' }, 'Assign selected'),
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const ids = [...list.querySelectorAll<HTMLInputElement>('tbody input[name=case]:checked')].map((box) => box.value);
    if (ids.length === 0) {
      status.textContent = 'Select one or more cases first.';
      return;
    }
    const userId = String(new FormData(form).get('user_id') ?? '');
    form.querySelector('button')!.disabled = true;
    try {
      const response = await assignCases(ids, userId === '' ? null : userId);
      flash = outcomeText(response);
      await render();
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error);
      form.querySelector('button')!.disabled = false;
    }
  });
  return form;
}

import type { CaseDetail, CaseNote, CaseTimeline } from '../../../../schemas/console/cases.ts';
import { currentSession, enc, get } from '../api.ts';
import { facts, failure, h, loading, replace, when } from '../dom.ts';
import { accountLink, networkHref, partyLink } from '../format/links.ts';
import { currentGeneration, isCurrent, render } from '../router.ts';
import { assignCases, knownUsers, outcomeText, userPicker } from './case-assign.ts';
import { caseNotes, loadNotes } from './case-notes.ts';
import { ageText, amountText, dueCell, priorityBadge, shortCaseId, statusText } from './case-parts.ts';
import { caseReport } from './case-report.ts';
import { caseTimeline } from './case-timeline.ts';

// The case page (/console/cases/:id): its header, subjects, the four-eyes report, the exports,
// the timeline and the notes. Every action re-reads the page, so what is shown is what the API holds.

function assignControl(detail: CaseDetail): HTMLElement {
  const me = currentSession()!.user;
  const status = h('span', { class: 'hint', role: 'status' });
  const act = async (userId: string | null, button: HTMLButtonElement) => {
    button.disabled = true;
    try {
      const response = await assignCases([detail.episode_id], userId);
      const outcome = response.results[0]?.outcome;
      if (outcome !== 'assigned' && outcome !== 'unchanged') throw new Error(outcomeText(response));
      await render();
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error);
      button.disabled = false;
    }
  };
  const button = (label: string, userId: string | null, testid: string) => {
    const b = h('button', { type: 'button', class: 'small', 'data-testid': testid }, label);
    b.addEventListener('click', () => void act(userId, b));
    return b;
  };
  const mine = detail.assignee?.user_id === me.id;
  if (me.role === 'supervisor') {
    const form = h('form', { class: 'inline-assign', 'aria-label': 'assign this case' }, userPicker('user_id', 'Assign to', knownUsers([detail.assignee]), detail.assignee?.user_id ?? me.id), h('button', { type: 'submit', class: 'small' }, 'Assign'), status);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const userId = String(new FormData(form).get('user_id') ?? '');
      void act(userId === '' ? null : userId, form.querySelector('button')!);
    });
    return form;
  }
  if (detail.assignee === null) return h('span', null, button('Take this case', me.id, 'take'), status);
  if (mine) return h('span', null, button('Give it up', null, 'give-up'), status);
  return status;
}

// The time the alerts' cited movements span, to draw the network of that period only, and the
// account pairs they went between ("account:A>account:B"), which the network marks.
function citedWindow(timeline: CaseTimeline): { since: string; until: string; pairs: string[] } | null {
  const cited = new Set(timeline.movement_ids);
  const movements = timeline.entries.filter((e) => e.kind === 'movement' && cited.has(e.movement_id));
  const times = movements.map((e) => e.at).sort();
  const pairs = new Set<string>();
  for (const m of movements) if (m.kind === 'movement' && m.debit_account && m.credit_account) pairs.add(`account:${m.debit_account}>account:${m.credit_account}`);
  return times.length ? { since: times[0]!, until: times[times.length - 1]!, pairs: [...pairs] } : null;
}

function networkLinks(party: string, account: string | undefined, window: { since: string; until: string; pairs: string[] } | null): HTMLElement[] {
  const focus = account ? `account:${account}` : undefined;
  const links = [h('a', { href: networkHref(party, focus), 'data-testid': 'network-link' }, 'network')];
  if (window) {
    const q = new URLSearchParams({ since: window.since, until: window.until });
    if (focus) q.set('focus', focus);
    if (window.pairs.length) q.set('cited', window.pairs.join(','));
    links.push(h('a', { href: `/console/network/${enc(party)}?${q}`, 'data-testid': 'network-window-link', title: `${when(window.since)} to ${when(window.until)}` }, "network during the alerts' movements"));
  }
  return links;
}

function subjects(detail: CaseDetail, window: { since: string; until: string; pairs: string[] } | null): HTMLElement {
  const holderOf = (account: string) => detail.parties.find((p) => p.via_accounts.includes(account))?.external_id ?? null;
  return h(
    'section',
    { 'aria-label': 'subjects', 'data-testid': 'subjects' },
    h('h2', null, 'Subjects'),
    h(
      'ul',
      { class: 'subjects' },
      detail.parties.map((p) =>
        h(
          'li',
          null,
          'party ',
          partyLink(p.external_id),
          p.via_accounts.length ? h('span', { class: 'muted' }, ` (holds ${p.via_accounts.join(', ')})`) : null,
          // Focused on the alerted account when the party is here through one.
          networkLinks(p.external_id, p.via_accounts[0], window).map((a) => [' · ', a]),
        ),
      ),
      detail.subjects.filter((s) => s.kind === 'account' && !holderOf(s.external_id)).map((s) => h('li', null, 'account ', accountLink(s.external_id, null))),
    ),
    detail.related.length ? h('p', { class: 'muted' }, 'Counterparties the evidence names: ', detail.related.map((r, i) => [i > 0 ? ', ' : '', r.kind === 'party' ? partyLink(r.external_id) : accountLink(r.external_id, detail.parties[0]?.external_id ?? null)])) : null,
  );
}

// H2's exports: the goAML XML report and the printable case file, both straight from the API.
const exportsOf = (id: string) =>
  h(
    'nav',
    { class: 'actions exports', 'aria-label': 'exports' },
    h('a', { class: 'button secondary', href: `/console/v1/cases/${enc(id)}/goaml.xml`, download: `${id}-goaml.xml`, 'data-testid': 'goaml-link' }, 'goAML report (XML)'),
    h('a', { class: 'button secondary', href: `/console/v1/cases/${enc(id)}/file.html`, target: '_blank', rel: 'noopener', 'data-testid': 'case-file-link' }, 'Case file (print)'),
  );

export async function caseView([id]: string[]): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const back = h('p', null, h('a', { href: '/console/cases' }, '← Cases'));
  replace(root, back, loading('Loading the case'));
  try {
    const [detail, timeline, notes] = await Promise.all([get<CaseDetail>(`/cases/${enc(id!)}`), get<CaseTimeline>(`/cases/${enc(id!)}/timeline`), loadNotes(id!)] as const);
    if (!isCurrent(gen)) return;
    draw(root, back, detail, timeline, notes);
  } catch (error) {
    if (isCurrent(gen)) replace(root, back, failure(error));
  }
}

function draw(root: HTMLElement, back: HTMLElement, d: CaseDetail, timeline: CaseTimeline, notes: CaseNote[]): void {
  const after = () => render();
  replace(
    root,
    back,
    h('h1', null, 'Case ', h('code', { title: d.episode_id }, shortCaseId(d.episode_id)), ' ', priorityBadge(d.priority)),
    facts([
      ['Status', h('span', { 'data-testid': 'case-status' }, statusText(d.case_status), d.awaiting_approval ? h('span', { class: 'badge approval' }, 'report awaiting approval') : null)],
      ['Disposition', h('span', { 'data-testid': 'disposition' }, d.disposition ? d.disposition.replaceAll('_', ' ') : '—')],
      ['Assignee', h('span', { class: 'assignee-line' }, h('span', { 'data-testid': 'assignee' }, d.assignee ? d.assignee.email : 'unassigned'), ' ', d.case_status !== 'closed' ? assignControl(d) : null)],
      ['Priority', d.priority],
      ['Opened', `${when(d.opened_at)} (${ageText(d.age_seconds)} ago)`],
      ['Due', h('span', { 'data-testid': 'due' }, dueCell(d))],
      ['Amount at stake', h('span', { 'data-testid': 'amount' }, amountText(d.amount))],
      ['Typologies', d.typologies.join(', ') || '—'],
      ['Alerts', String(d.alert_count)],
      ['Case id', h('code', null, d.episode_id)],
    ]),
    h('p', { class: 'hint' }, 'Status changes and the other dispositions: ', h('a', { href: `/console/episodes/${enc(d.episode_id)}` }, 'the episode view'), '.'),
    subjects(d, citedWindow(timeline)),
    h('h2', null, 'Report'),
    caseReport(d, after),
    exportsOf(d.episode_id),
    h('h2', null, 'Timeline'),
    caseTimeline(d, timeline),
    h('h2', null, `Notes`),
    caseNotes(d.episode_id, notes),
  );
}

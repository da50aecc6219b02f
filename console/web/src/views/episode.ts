import { ApiError, currentSession, enc, get, post } from '../api.ts';
import { empty, facts, failure, h, json, loading, replace, when } from '../dom.ts';
import { accountLink, partyLink, subjectLinkOf } from '../format/links.ts';
import type { ConsoleEpisodeDetail } from '../payloads.ts';
import { currentGeneration, isCurrent, render } from '../router.ts';
import { evidenceView } from './evidence.ts';

const STATUSES = ['open', 'investigating', 'escalated'];
// Filing a report (suspicious_activity_reported) is proposed on the case page and takes effect
// when a second user approves it (four-eyes): the API refuses it here.
const DISPOSITIONS = ['no_further_action', 'false_positive', 'inconclusive'];

// Assigning oneself can be refused (a case assigned to someone else is a supervisor's to move):
// the refusal is shown beside the button, which can be tried again.
function assignButton(mine: boolean, assign: (mine: boolean) => Promise<void>) {
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  const button = h('button', { type: 'button' }, mine ? 'Unassign me' : 'Assign to me') as HTMLButtonElement;
  button.addEventListener('click', async () => {
    button.disabled = true;
    message.hidden = true;
    try {
      await assign(mine);
    } catch (error) {
      message.hidden = false;
      message.textContent = error instanceof Error ? error.message : String(error);
      button.disabled = false;
    }
  });
  return h('div', { class: 'assign' }, button, message);
}

// An action refused because the case changed since the page was drawn (409): the page is drawn
// again with the case as it is now, and the refusal shown on the form that was sent, where before
// the message sat beside a status the case no longer had.
let refusedAsShown: { label: string; text: string } | undefined;

function actionForm(
  label: string,
  field: 'status' | 'disposition',
  options: string[],
  submit: (value: string, reason: string) => Promise<void>,
  refresh: () => Promise<void>,
) {
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  if (refusedAsShown?.label === label) {
    message.hidden = false;
    message.textContent = refusedAsShown.text;
    refusedAsShown = undefined;
  }
  const form = h(
    'form',
    { class: 'case-action', 'aria-label': label, novalidate: true },
    h('h3', null, label),
    h('label', null, field === 'status' ? 'Status' : 'Disposition', h('select', { name: field, required: true }, h('option', { value: '' }, 'choose…'), options.map((o) => h('option', { value: o }, o.replaceAll('_', ' '))))),
    h('label', null, 'Reason (required)', h('textarea', { name: 'reason', required: true, minlength: 3, rows: 2 })),
    message,
    h('button', { type: 'submit' }, label),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const value = String(data.get(field) ?? '');
    const reason = String(data.get('reason') ?? '').trim();
    message.hidden = true;
    if (!value || reason.length === 0) {
      message.hidden = false;
      message.textContent = 'choose a value and give a reason';
      return;
    }
    form.querySelector('button')!.disabled = true;
    try {
      await submit(value, reason);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        refusedAsShown = { label, text: `${error.message} The page now shows the case as it is.` };
        await refresh();
        return;
      }
      message.hidden = false;
      message.textContent = error instanceof Error ? error.message : String(error);
      form.querySelector('button')!.disabled = false;
    }
  });
  return form;
}

// The parties behind the episode: its party members and the holders of its account members. The
// server names them in `parties`; an older server only lists members and each alert's party_id.
type EpisodeParty = ConsoleEpisodeDetail['parties'][number];
function partiesOf(e: ConsoleEpisodeDetail): EpisodeParty[] {
  if (Array.isArray(e.parties)) return e.parties;
  const byId = new Map<string, Set<string>>();
  const add = (party: string, account?: string) => {
    const via = byId.get(party) ?? new Set<string>();
    if (account) via.add(account);
    byId.set(party, via);
  };
  for (const m of e.members) if (m.kind === 'party') add(m.external_id);
  for (const a of e.alerts) if (a.party_id) add(a.party_id, a.subject.kind === 'account' ? a.subject.external_id : undefined);
  return [...byId].map(([external_id, via]) => ({ external_id, via_accounts: [...via].sort() }));
}

// The party an account of the episode is drawn with: the holder an alert names.
const holderOf = (e: ConsoleEpisodeDetail, parties: EpisodeParty[], account: string) =>
  parties.find((p) => p.via_accounts.includes(account))?.external_id ?? e.alerts.find((a) => a.subject.external_id === account && a.party_id)?.party_id ?? parties[0]?.external_id ?? null;

export async function episodeView([id]: string[]): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const back = h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue'));
  replace(root, back, loading('Loading the episode'));
  try {
    const e = await get<ConsoleEpisodeDetail>(`/episodes/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    const me = currentSession()?.user;
    const assignee = e.assignee;
    const after = async () => {
      await render();
    };
    const alerts = e.alerts;
    const history = e.case_history;
    const audit = e.audit;
    const parties = partiesOf(e);
    const link = (s: { kind: string; external_id: string }) => (s.kind === 'party' ? partyLink(s.external_id) : accountLink(s.external_id, holderOf(e, parties, s.external_id)));
    // "accounts a1, a2 · parties p1": the kinds once, the ids as links.
    const entities = (list: Array<{ kind: string; external_id: string }>) =>
      ['account', 'party']
        .map((kind) => list.filter((s) => s.kind === kind))
        .filter((group) => group.length > 0)
        .map((group, i) => [i > 0 ? ' · ' : '', group.length === 1 ? `${group[0]!.kind} ` : group[0]!.kind === 'party' ? 'parties ' : 'accounts ', group.map((s, j) => [j > 0 ? ', ' : '', link(s)])]);
    replace(
      root,
      back,
      h('h1', null, `Episode `, h('code', null, e.episode_id), ' ', h('span', { class: `badge sev-${e.severity}` }, e.severity)),
      facts([
        ['Status', e.status],
        ['Case', h('span', { 'data-testid': 'case-status' }, e.case_status)],
        ['Disposition', h('span', { 'data-testid': 'disposition' }, e.disposition ? e.disposition.replaceAll('_', ' ') : '—')],
        ['Assignee', h('span', { 'data-testid': 'assignee' }, assignee ? assignee.email : 'nobody')],
        // As the case page says it (when the case was opened), with the activity time beside it:
        // the first alert's activity may be a day or more earlier than the case.
        ['Opened', when(e.created_at)],
        ['First activity', when(e.first_alert_at)],
        ['Updated', when(e.updated_at)],
        [
          'Parties',
          h(
            'span',
            { 'data-testid': 'parties' },
            parties.length
              ? parties.map((p) => h('span', { class: 'party-ref' }, partyLink(p.external_id), p.via_accounts.length ? ` (holds ${p.via_accounts.join(', ')})` : '', ' · ', h('a', { href: `/console/network/${enc(p.external_id)}` }, 'network'), ' '))
              : '—',
          ),
        ],
        ['Subjects', e.members.length ? h('span', { 'data-testid': 'subjects' }, entities(e.members)) : '—'],
        ['Related', e.related.length ? h('span', { 'data-testid': 'related' }, entities(e.related)) : '—'],
      ]),
      h(
        'section',
        { class: 'case-actions', 'aria-label': 'case actions' },
        h('h2', null, 'Case'),
        me ? assignButton(assignee?.user_id === me.id, async (mine) => {
          await post(`/episodes/${enc(id!)}/assign`, { user_id: mine ? null : me.id });
          await after();
        }) : null,
        h(
          'div',
          { class: 'forms' },
          // Each action says what the page showed: a case another analyst changed meanwhile is
          // refused, not silently overridden.
          actionForm('Set status', 'status', STATUSES, async (status, reason) => {
            await post(`/episodes/${enc(id!)}/status`, { status, reason, expected: { case_status: e.case_status, disposition: e.disposition } });
            await after();
          }, after),
          actionForm('Disposition', 'disposition', DISPOSITIONS, async (disposition, reason) => {
            await post(`/episodes/${enc(id!)}/disposition`, { disposition, reason, expected: { case_status: e.case_status, disposition: e.disposition } });
            await after();
          }, after),
        ),
        h('p', { class: 'hint' }, 'To file a report, propose it for approval on the ', h('a', { href: `/console/cases/${enc(e.episode_id)}` }, 'case page'), '.'),
      ),
      h('h2', null, `Alerts (${alerts.length})`),
      alerts.length
        ? h(
            'table',
            { class: 'grid' },
            h('thead', null, h('tr', null, ['Severity', 'Detector', 'Subject', 'Status', 'Raised'].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              null,
              alerts.map((a) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('span', { class: `badge sev-${a.severity}` }, a.severity)),
                  h('td', null, h('a', { href: `/console/alerts/${enc(a.alert_id)}` }, a.detector)),
                  h('td', null, subjectLinkOf(a.subject, a.subject.kind === 'party' ? a.subject.external_id : a.party_id)),
                  h('td', null, a.status),
                  h('td', null, when(a.created_at)),
                ),
              ),
            ),
          )
        : empty('No alerts in this episode.'),
      alerts.length
        ? [
            h('h2', null, 'Evidence'),
            alerts.map((a, i) =>
              h('details', { class: 'evidence-of', open: i === 0 }, h('summary', null, `${a.detector} · ${a.alert_id}`), evidenceView(a.evidence, a.subject.kind === 'party' ? a.subject.external_id : a.party_id)),
            ),
          ]
        : null,
      h('h2', null, 'Case history'),
      history.length
        ? h(
            'ol',
            { class: 'history' },
            history.map((c) => h('li', null, when(c.at), ' — ', c.actor, ': ', c.case_status, c.disposition ? ` (${c.disposition.replaceAll('_', ' ')})` : '', c.note ? h('q', null, c.note) : null)),
          )
        : empty('No case actions yet.'),
      h('h2', null, 'Audit'),
      audit.length
        ? h(
            'table',
            { class: 'grid audit', 'data-testid': 'audit' },
            h('thead', null, h('tr', null, ['When', 'Who', 'Action', 'Details'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', null, audit.map((r) => h('tr', null, h('td', null, when(r.at)), h('td', null, r.actor_email ?? r.actor_kind), h('td', null, r.action), h('td', null, json(r.details))))),
          )
        : empty('No audit entries yet.'),
    );
  } catch (error) {
    if (isCurrent(gen)) replace(root, back, failure(error));
  }
}

import { currentSession, enc, get, post } from '../api.ts';
import { empty, facts, failure, h, json, loading, replace, when } from '../dom.ts';
import { currentGeneration, isCurrent, render } from '../router.ts';
import { subjectLink } from './alerts.ts';

const STATUSES = ['open', 'investigating', 'escalated'];
const DISPOSITIONS = ['suspicious_activity_reported', 'no_further_action', 'false_positive', 'inconclusive'];

function actionForm(label: string, field: 'status' | 'disposition', options: string[], submit: (value: string, reason: string) => Promise<void>) {
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
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
      message.hidden = false;
      message.textContent = error instanceof Error ? error.message : String(error);
      form.querySelector('button')!.disabled = false;
    }
  });
  return form;
}

export async function episodeView([id]: string[]): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const back = h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue'));
  replace(root, back, loading('Loading the episode'));
  try {
    const e = await get<any>(`/episodes/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    const me = currentSession()?.user;
    const assignee = e.assignee ?? null;
    const after = async () => {
      await render();
    };
    const alerts: any[] = Array.isArray(e.alerts) ? e.alerts : [];
    const history: any[] = Array.isArray(e.case_history) ? e.case_history : Array.isArray(e.history) ? e.history : [];
    const audit: any[] = Array.isArray(e.audit) ? e.audit : [];
    const members: any[] = Array.isArray(e.members) ? e.members : [];
    const parties = [...new Set([...alerts.map((a) => a.subject), ...members.map((m) => m.subject ?? { kind: m.subject_kind, external_id: m.subject_id })].filter((s) => s?.kind === 'party').map((s) => s.external_id as string))];
    replace(
      root,
      back,
      h('h1', null, `Episode `, h('code', null, e.episode_id ?? id), ' ', h('span', { class: `badge sev-${e.severity}` }, e.severity ?? '')),
      facts([
        ['Status', e.status],
        ['Case', h('span', { 'data-testid': 'case-status' }, e.case_status ?? '—')],
        ['Disposition', h('span', { 'data-testid': 'disposition' }, e.disposition ? String(e.disposition).replaceAll('_', ' ') : '—')],
        ['Assignee', h('span', { 'data-testid': 'assignee' }, assignee ? (assignee.email ?? assignee.user_id ?? String(assignee)) : 'nobody')],
        ['Opened', when(e.opened_at ?? e.created_at)],
        ['Updated', when(e.updated_at)],
        ['Parties', parties.length ? parties.map((p) => [h('a', { href: `/console/parties/${enc(p)}` }, p), ' (', h('a', { href: `/console/network/${enc(p)}` }, 'network'), ') ']) : '—'],
      ]),
      h(
        'section',
        { class: 'case-actions', 'aria-label': 'case actions' },
        h('h2', null, 'Case'),
        me
          ? h(
              'button',
              {
                type: 'button',
                onclick: async (event: MouseEvent) => {
                  (event.currentTarget as HTMLButtonElement).disabled = true;
                  const mine = assignee && (assignee.user_id ?? assignee.id) === me.id;
                  await post(`/episodes/${enc(id!)}/assign`, { user_id: mine ? null : me.id });
                  await after();
                },
              },
              assignee && (assignee.user_id ?? assignee.id) === me.id ? 'Unassign me' : 'Assign to me',
            )
          : null,
        h(
          'div',
          { class: 'forms' },
          actionForm('Set status', 'status', STATUSES, async (status, reason) => {
            await post(`/episodes/${enc(id!)}/status`, { status, reason });
            await after();
          }),
          actionForm('Disposition', 'disposition', DISPOSITIONS, async (disposition, reason) => {
            await post(`/episodes/${enc(id!)}/disposition`, { disposition, reason });
            await after();
          }),
        ),
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
                  h('td', null, a.subject ? subjectLink(a.subject) : '—'),
                  h('td', null, a.status),
                  h('td', null, when(a.created_at)),
                ),
              ),
            ),
          )
        : empty('No alerts in this episode.'),
      alerts.some((a) => a.evidence) ? [h('h2', null, 'Evidence'), alerts.filter((a) => a.evidence).map((a) => h('details', { class: 'evidence' }, h('summary', null, `${a.detector} · ${a.alert_id}`), json(a.evidence)))] : null,
      h('h2', null, 'Case history'),
      history.length ? h('ol', { class: 'history' }, history.map((c) => h('li', null, when(c.at ?? c.created_at), ' — ', json(c)))) : empty('No case actions yet.'),
      h('h2', null, 'Audit'),
      audit.length
        ? h(
            'table',
            { class: 'grid audit', 'data-testid': 'audit' },
            h('thead', null, h('tr', null, ['When', 'Who', 'Action', 'Details'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', null, audit.map((r) => h('tr', null, h('td', null, when(r.at)), h('td', null, r.actor_email ?? r.actor ?? '—'), h('td', null, r.action), h('td', null, json(r.details))))),
          )
        : empty('No audit entries yet.'),
    );
  } catch (error) {
    if (isCurrent(gen)) replace(root, back, failure(error));
  }
}

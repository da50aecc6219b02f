import type { CaseDetail, CaseTimeline, TimelineEntry } from '../../../../schemas/console/cases.ts';
import { empty, h, json, when, type Child } from '../dom.ts';
import { accountLink, movementLink, subjectLinkOf } from '../format/links.ts';
import { formatMinor } from '../format/money.ts';

// The case's timeline, oldest first: its alerts, the movements they cite (highlighted), case
// actions from every channel, notes and the console audit. An alert's "Show its movements" marks
// the movements that alert cites; views of the case are hidden unless asked for.

const KIND_LABEL: Record<TimelineEntry['kind'], string> = { alert: 'Alert', movement: 'Movement', case_action: 'Case action', audit: 'Action', note: 'Note' };

export function caseTimeline(detail: CaseDetail, timeline: CaseTimeline): HTMLElement {
  const cited = new Set([...timeline.movement_ids, ...detail.movement_ids]);
  // The party a movement or an account is shown with: the holder behind the citing alert's subject.
  const partyOfAlert = new Map(detail.alerts.map((a) => [a.alert_id, a.party_id]));
  const fallbackParty = detail.parties[0]?.external_id ?? null;
  const partyFor = (alertIds: string[]) => alertIds.map((id) => partyOfAlert.get(id)).find((p): p is string => Boolean(p)) ?? fallbackParty;

  const table = h('table', { class: 'grid timeline', 'aria-label': 'timeline', 'data-testid': 'timeline' });
  const row = (entry: TimelineEntry, what: Child, details: Child, attrs: Record<string, string | null> = {}) =>
    h('tr', { class: `tl-${entry.kind}`, ...attrs }, h('td', { class: 'when' }, when(entry.at)), h('td', null, KIND_LABEL[entry.kind]), h('td', null, what), h('td', null, details));

  const rows = timeline.entries.map((entry) => {
    switch (entry.kind) {
      case 'alert': {
        const toggle = h('button', { type: 'button', class: 'link', 'aria-pressed': 'false', 'data-alert': entry.alert_id, disabled: entry.movement_ids.length === 0 }, `Show its movements (${entry.movement_ids.length})`);
        toggle.addEventListener('click', () => focusAlert(table, toggle, entry.alert_id));
        return row(
          entry,
          [h('span', { class: `badge sev-${entry.severity}` }, entry.severity), ' ', h('a', { href: `/console/alerts/${encodeURIComponent(entry.alert_id)}` }, entry.detector), ` · ${entry.typology}`],
          [entry.summary, ' — ', subjectLinkOf(entry.subject, partyOfAlert.get(entry.alert_id) ?? fallbackParty), ' ', toggle],
          { 'data-alert-id': entry.alert_id },
        );
      }
      case 'movement': {
        const party = partyFor(entry.cited_by);
        return row(
          entry,
          [movementLink(entry.movement_id, party), ` ${entry.type} · ${entry.status}`],
          [
            h('span', { class: 'num' }, formatMinor(entry.amount.value, entry.amount.scale, entry.amount.asset)),
            ' ',
            entry.debit_account ? accountLink(entry.debit_account, party) : h('span', { class: 'muted' }, 'outside'),
            ' → ',
            entry.credit_account ? accountLink(entry.credit_account, party) : h('span', { class: 'muted' }, 'outside'),
            cited.has(entry.movement_id) ? h('span', { class: 'badge cited' }, `cited by ${entry.cited_by.length} alert${entry.cited_by.length === 1 ? '' : 's'}`) : null,
          ],
          { 'data-movement-id': entry.movement_id, 'data-cited-by': entry.cited_by.join(' '), 'data-cited': cited.has(entry.movement_id) ? 'true' : 'false' },
        );
      }
      case 'case_action':
        return row(entry, [entry.case_status, entry.disposition ? ` · ${entry.disposition.replaceAll('_', ' ')}` : ''], [entry.note ?? '', h('span', { class: 'muted' }, ` (${entry.actor})`)]);
      case 'note':
        return row(entry, entry.author.email, h('span', { class: 'note-body' }, entry.body));
      case 'audit':
        return row(entry, [entry.action.replaceAll('_', ' '), ' ', h('span', { class: 'muted' }, entry.actor_email ?? '')], Object.keys(entry.details).length ? json(entry.details) : null, {
          'data-action': entry.action,
          class: entry.action.endsWith('.viewed') ? 'tl-audit viewed' : 'tl-audit',
        });
    }
  });
  if (rows.length === 0) return empty('Nothing in this case yet.');
  table.append(h('thead', null, h('tr', null, ['When', 'Kind', 'What', 'Details'].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', null, rows));

  const views = h('input', { type: 'checkbox', name: 'show_views' });
  views.addEventListener('change', () => table.classList.toggle('with-views', views.checked));
  return h(
    'section',
    { 'aria-label': 'timeline' },
    h('div', { class: 'actions' }, h('label', { class: 'check' }, views, `Show views of the case (${viewsCounted(timeline.views)})`)),
    timeline.truncated ? h('p', { class: 'state warn' }, 'Some movements or actions are left out: the case has more than the timeline shows.') : null,
    table,
  );
}

// The views listed are capped apart from the story (the latest ones), so the count says how many there are.
function viewsCounted(views: CaseTimeline['views']): string {
  return views.shown < views.total ? `latest ${views.shown} of ${views.total.toLocaleString('en')}` : String(views.total);
}

// Marks the movements one alert cites; pressing it again (or another alert) clears the mark.
function focusAlert(table: HTMLTableElement, toggle: HTMLButtonElement, alertId: string): void {
  const on = toggle.getAttribute('aria-pressed') !== 'true';
  for (const b of table.querySelectorAll('button[aria-pressed]')) b.setAttribute('aria-pressed', 'false');
  for (const tr of table.querySelectorAll<HTMLTableRowElement>('tr[data-movement-id]')) {
    const mine = on && (tr.dataset.citedBy ?? '').split(' ').includes(alertId);
    tr.classList.toggle('focus', mine);
  }
  toggle.setAttribute('aria-pressed', String(on));
}

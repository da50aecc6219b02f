import { enc, get } from '../api.ts';
import { empty, facts, failure, h, loading, money, replace, when } from '../dom.ts';
import { accountLink, partyLink } from '../format/links.ts';
import type { MovementEntity, MovementPage, PartyDetail } from '../payloads.ts';
import { currentGeneration, isCurrent } from '../router.ts';

// One leg of a movement: its account (in this party's network) and its party, as links.
function side(leg: MovementEntity['debit'], party: string | null, viewed: string) {
  const parts = [leg.account_id ? accountLink(leg.account_id, viewed) : null, party ? (party === viewed ? h('span', null, party) : partyLink(party)) : null].filter(Boolean);
  if (parts.length === 0) return leg.counterparty?.name_as_given ?? leg.counterparty?.institution ?? '—';
  return parts.flatMap((p, i) => (i === 0 ? [p] : [' / ', p]));
}

// ?movement=… highlights that movement; ?from=…&to=… limits the timeline (an alert's window).
export async function partyView([id]: string[], query: URLSearchParams): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const back = h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue'));
  replace(root, back, loading('Loading the party'));
  const focus = query.get('movement');
  const from = query.get('from');
  const to = query.get('to');
  try {
    const body = await get<PartyDetail>(`/parties/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    const { party, accounts, posture } = body;
    const names = party.legal_names ?? [];
    const timeline = h('tbody');
    const more = h('div', { class: 'pager' });
    const movements = h('section', { 'aria-label': 'movements' }, loading('Loading movements'));
    replace(
      root,
      back,
      h('h1', null, `${names[0] ?? `Party ${party.external_id}`} `, h('span', { class: `badge band-${posture.band}`, 'data-testid': 'band' }, `${posture.band} risk`)),
      h('nav', { class: 'actions' }, h('a', { href: `/console/network/${enc(party.external_id)}`, class: 'button' }, 'Network view')),
      facts([
        ['Party', h('code', null, party.external_id)],
        ['Name', h('span', { 'data-testid': 'party-name' }, names.length ? names.join('; ') : '—')],
        ['Type', h('span', { 'data-testid': 'party-type' }, party.type.replaceAll('_', ' '))],
        ['Status', party.status],
        ['Segment', party.segment ?? '—'],
        ['Jurisdictions', party.jurisdictions ? Object.entries(party.jurisdictions).map(([k, v]) => `${k} ${v}`).join(', ') || '—' : '—'],
        ['Updated', when(party.occurred_at)],
      ]),
      h('h2', null, 'Posture'),
      facts([
        ['Band', posture.band],
        ['Computed', when(posture.computed_at)],
        ['Coverage', posture.coverage],
      ]),
      posture.reasons.length
        ? h(
            'ul',
            { class: 'reasons' },
            posture.reasons.map((r) => h('li', null, h('span', { class: `badge sev-${r.severity}` }, r.severity), ` ${r.typology} (${r.detector}): ${r.open_alerts} open alert${r.open_alerts === 1 ? '' : 's'}, latest ${when(r.latest_at)}`)),
          )
        : empty('No open alerts behind the posture.'),
      h('h2', null, `Accounts (${accounts.length}${body.accounts_truncated ? '+' : ''})`),
      accounts.length
        ? h(
            'table',
            { class: 'grid accounts', 'data-testid': 'accounts' },
            h('thead', null, h('tr', null, ['Account', 'Type', 'Asset', 'Status', 'Opened'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', null, accounts.map((a) => h('tr', null, h('td', null, accountLink(a.external_id, party.external_id)), h('td', null, a.type), h('td', null, a.asset), h('td', null, a.status), h('td', null, when(a.opened_at))))),
          )
        : empty('No accounts.'),
      h('h2', null, 'Timeline'),
      from || to ? h('p', { class: 'muted' }, `Movements between ${when(from)} and ${when(to)} `, h('a', { href: `/console/parties/${enc(party.external_id)}` }, 'show all')) : null,
      movements,
    );
    let first = true;
    const window = new URLSearchParams();
    if (from) window.set('from', from);
    if (to) window.set('to', to);
    const load = async (cursor?: string) => {
      const params = new URLSearchParams(window);
      if (cursor) params.set('cursor', cursor);
      const page = await get<MovementPage>(`/parties/${enc(id!)}/movements${params.size ? `?${params}` : ''}`);
      if (!isCurrent(gen)) return;
      if (first) {
        first = false;
        if (page.data.length === 0) {
          replace(movements, empty('No movements.'));
          return;
        }
        replace(
          movements,
          h('table', { class: 'grid', 'data-testid': 'timeline' }, h('thead', null, h('tr', null, ['When', 'Movement', 'Type', 'From', 'To', 'Amount', 'Status'].map((c) => h('th', { scope: 'col' }, c)))), timeline),
          more,
        );
      }
      for (const m of page.data) {
        const row = h(
          'tr',
          { 'data-movement': m.external_id, class: m.external_id === focus ? 'focused' : null, 'aria-current': m.external_id === focus ? 'true' : null },
          h('td', null, when(m.occurred_at)),
          h('td', null, h('code', null, m.external_id)),
          h('td', null, m.type.replaceAll('_', ' ')),
          h('td', null, side(m.debit, m.parties.debit, party.external_id)),
          h('td', null, side(m.credit, m.parties.credit, party.external_id)),
          h('td', { class: 'num' }, money(m.amount), m.normalized_amount ? h('span', { class: 'muted' }, ` (${money(m.normalized_amount)})`) : null),
          h('td', null, m.status),
        );
        timeline.append(row);
        if (m.external_id === focus) row.scrollIntoView({ block: 'center' });
      }
      replace(
        more,
        page.has_more && page.next_cursor
          ? h(
              'button',
              {
                type: 'button',
                onclick: async (event: MouseEvent) => {
                  (event.currentTarget as HTMLButtonElement).disabled = true;
                  await load(page.next_cursor);
                },
              },
              'Older movements',
            )
          : h('span', { class: 'muted' }, 'End of the timeline.'),
      );
    };
    load().catch((error) => isCurrent(gen) && replace(movements, failure(error)));
  } catch (error) {
    if (isCurrent(gen)) replace(root, back, failure(error));
  }
}

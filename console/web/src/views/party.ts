import { enc, get } from '../api.ts';
import { empty, facts, failure, h, json, loading, money, replace, when } from '../dom.ts';
import { currentGeneration, isCurrent } from '../router.ts';

const side = (s: any) => (s ? [s.account_id ?? s.account?.external_id, s.party_id ?? s.party?.external_id].filter(Boolean).join(' / ') || '—' : '—');

export async function partyView([id]: string[]): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  const back = h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue'));
  replace(root, back, loading('Loading the party'));
  try {
    const body = await get<any>(`/parties/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    const party = body.party ?? {};
    const accounts: any[] = Array.isArray(body.accounts) ? body.accounts : [];
    const posture = body.posture ?? null;
    const reasons: any[] = Array.isArray(posture?.reasons) ? posture.reasons : [];
    const timeline = h('tbody');
    const more = h('div', { class: 'pager' });
    const movements = h('section', { 'aria-label': 'movements' }, loading('Loading movements'));
    replace(
      root,
      back,
      h('h1', null, `Party ${party.external_id ?? id} `, posture ? h('span', { class: `badge band-${posture.band}`, 'data-testid': 'band' }, `${posture.band} risk`) : null),
      h('nav', { class: 'actions' }, h('a', { href: `/console/network/${enc(id!)}`, class: 'button' }, 'Network view')),
      facts([
        ['Party', party.external_id ?? id],
        ['Kind', party.data?.kind ?? party.kind ?? '—'],
        ['Name', party.data?.name ?? party.name ?? '—'],
        ['Updated', when(party.updated_at ?? party.occurred_at)],
      ]),
      h('h2', null, 'Posture'),
      posture
        ? [
            facts([
              ['Band', posture.band],
              ['Computed', when(posture.computed_at)],
              ['Coverage', json(posture.coverage)],
            ]),
            reasons.length ? h('ul', { class: 'reasons' }, reasons.map((r) => h('li', null, typeof r === 'string' ? r : (r.text ?? r.summary ?? json(r))))) : empty('No reasons recorded.'),
          ]
        : empty('No posture computed yet.'),
      h('h2', null, `Accounts (${accounts.length})`),
      accounts.length
        ? h('ul', { class: 'accounts' }, accounts.map((a) => h('li', null, h('code', null, a.external_id ?? a.account_id ?? '?'), ' ', a.data?.type ?? a.type ?? '', ' ', a.data?.currency ?? a.currency ?? '', a.status ? ` · ${a.status}` : '')))
        : empty('No accounts.'),
      h('h2', null, 'Timeline'),
      movements,
    );
    let first = true;
    const load = async (cursor?: string) => {
      const page = await get<{ data: any[]; has_more: boolean; next_cursor?: string }>(`/parties/${enc(id!)}/movements${cursor ? `?cursor=${enc(cursor)}` : ''}`);
      if (!isCurrent(gen)) return;
      if (first) {
        first = false;
        if (page.data.length === 0) {
          replace(movements, empty('No movements.'));
          return;
        }
        replace(
          movements,
          h('table', { class: 'grid' }, h('thead', null, h('tr', null, ['When', 'Movement', 'Type', 'From', 'To', 'Amount', 'Status'].map((c) => h('th', { scope: 'col' }, c)))), timeline),
          more,
        );
      }
      for (const m of page.data) {
        const d = m.data ?? m;
        timeline.append(
          h('tr', null, h('td', null, when(m.occurred_at)), h('td', null, h('code', null, m.external_id ?? m.movement_id ?? '')), h('td', null, d.type ?? ''), h('td', null, side(d.debit)), h('td', null, side(d.credit)), h('td', { class: 'num' }, money(d.amount)), h('td', null, d.status ?? '')),
        );
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

import { enc } from '../api.ts';
import { h } from '../dom.ts';

// Ids shown as links an analyst can follow. The console has no page per account or movement: an
// account opens in the network of a party it is drawn with (focused there), a movement in its
// party's timeline limited to the alert's window (highlighted there).

export const partyLink = (id: string) => h('a', { href: `/console/parties/${enc(id)}`, class: 'id-link', 'data-party': id }, id);

export const networkHref = (party: string, focus?: string) => `/console/network/${enc(party)}${focus ? `?focus=${enc(focus)}` : ''}`;

// An account, opened in `party`'s network with the account selected and centred; plain text
// when no party is known to draw it with.
export const accountLink = (id: string, party: string | null) =>
  party ? h('a', { href: networkHref(party, `account:${id}`), class: 'id-link', 'data-account': id, title: `account ${id} in the network of ${party}` }, id) : h('code', null, id);

// A movement in `party`'s timeline, within [from, to] when given.
export function movementLink(id: string, party: string | null, window?: { from?: string; to?: string }): HTMLElement {
  if (!party) return h('code', null, id);
  const query = new URLSearchParams({ movement: id });
  if (window?.from) query.set('from', window.from);
  if (window?.to) query.set('to', window.to);
  return h('a', { href: `/console/parties/${enc(party)}?${query}`, class: 'id-link', 'data-movement': id, title: `movement ${id} in the timeline of ${party}` }, id);
}

// A counterparty key of the evidence (`account:A1`, `party:P1`).
export function counterpartyLink(key: string, party: string | null): HTMLElement | string {
  const at = key.indexOf(':');
  const kind = at < 0 ? '' : key.slice(0, at);
  const id = key.slice(at + 1);
  if (kind === 'party') return h('span', null, 'party ', partyLink(id));
  if (kind === 'account') return h('span', null, 'account ', accountLink(id, party));
  return key;
}

// An alert or episode subject.
export const subjectLinkOf = (subject: { kind: string; external_id: string }, party: string | null) =>
  subject.kind === 'party' ? h('span', null, 'party ', partyLink(subject.external_id)) : h('span', null, `${subject.kind} `, accountLink(subject.external_id, party));

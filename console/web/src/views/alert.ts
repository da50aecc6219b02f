import { enc, get } from '../api.ts';
import { facts, failure, h, loading, replace, when } from '../dom.ts';
import { networkHref, subjectLinkOf } from '../format/links.ts';
import type { AlertDetail } from '../payloads.ts';
import { currentGeneration, isCurrent } from '../router.ts';
import { evidenceView } from './evidence.ts';

export async function alertView([id]: string[]): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  replace(root, h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue')), loading('Loading the alert'));
  try {
    const a = await get<AlertDetail>(`/alerts/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    // The subject's party: itself for a party, the account's holder otherwise (null when unknown).
    const party = a.subject.kind === 'party' ? a.subject.external_id : a.party_id;
    replace(
      root,
      h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue')),
      h('h1', null, `${a.detector} `, h('span', { class: `badge sev-${a.severity}` }, a.severity)),
      h(
        'nav',
        { class: 'actions', 'aria-label': 'related' },
        a.episode_id ? h('a', { href: `/console/episodes/${enc(a.episode_id)}`, class: 'button' }, 'Open the episode') : null,
        party ? h('a', { href: `/console/parties/${enc(party)}`, class: 'button' }, 'Open the party') : null,
        // The network is drawn around the party, with an account subject selected and centred.
        party ? h('a', { href: networkHref(party, a.subject.kind === 'account' ? `account:${a.subject.external_id}` : undefined), class: 'button' }, 'Network view') : null,
      ),
      facts([
        ['Alert', a.alert_id],
        ['Typology', a.typology],
        ['Subject', h('span', { 'data-testid': 'subject' }, subjectLinkOf(a.subject, party))],
        ['Score', a.score.toFixed(2)],
        ['Status', a.status],
        ['Detector', `${a.detector} v${a.detector_version} (ruleset ${a.ruleset_version})`],
        ['Window', `${when(a.window.from)} → ${when(a.window.to)}`],
        ['Raised', when(a.created_at)],
        ['Updated', when(a.updated_at)],
      ]),
      a.summary ? h('p', { class: 'summary' }, a.summary) : null,
      h('h2', null, 'Evidence'),
      evidenceView(a.evidence, party),
      h('h2', null, 'Explanation'),
      a.explanation ? h('pre', { class: 'explanation' }, a.explanation) : h('p', { class: 'muted' }, 'No explanation.'),
    );
  } catch (error) {
    if (isCurrent(gen)) replace(root, h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue')), failure(error));
  }
}

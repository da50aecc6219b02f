import { enc, get } from '../api.ts';
import { facts, failure, h, json, loading, replace, when } from '../dom.ts';
import { currentGeneration, isCurrent } from '../router.ts';
import { subjectLink } from './alerts.ts';

export async function alertView([id]: string[]): Promise<void> {
  const gen = currentGeneration();
  const root = document.getElementById('view')!;
  replace(root, h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue')), loading('Loading the alert'));
  try {
    const a = await get<any>(`/alerts/${enc(id!)}`);
    if (!isCurrent(gen)) return;
    const subject = a.subject ?? { kind: a.subject_kind, external_id: a.subject_id };
    const party = subject?.kind === 'party' ? subject.external_id : (a.party_external_id ?? a.party_id ?? a.party?.external_id ?? a.subject?.party_external_id ?? a.subject_party?.external_id ?? null);
    replace(
      root,
      h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue')),
      h('h1', null, `${a.detector ?? 'Alert'} `, h('span', { class: `badge sev-${a.severity}` }, a.severity ?? '')),
      h(
        'nav',
        { class: 'actions', 'aria-label': 'related' },
        a.episode_id ? h('a', { href: `/console/episodes/${enc(a.episode_id)}`, class: 'button' }, 'Open the episode') : null,
        party ? h('a', { href: `/console/parties/${enc(party)}`, class: 'button' }, 'Open the party') : null,
        party ? h('a', { href: `/console/network/${enc(party)}`, class: 'button' }, 'Network view') : null,
      ),
      facts([
        ['Alert', a.alert_id],
        ['Typology', a.typology],
        ['Subject', subject ? subjectLink(subject) : '—'],
        ['Score', typeof a.score === 'number' ? a.score.toFixed(2) : '—'],
        ['Status', a.status],
        ['Raised', when(a.created_at)],
        ['Updated', when(a.updated_at)],
      ]),
      a.summary ? h('p', { class: 'summary' }, a.summary) : null,
      h('h2', null, 'Explanation'),
      a.explanation ? h('pre', { class: 'explanation' }, typeof a.explanation === 'string' ? a.explanation : JSON.stringify(a.explanation, null, 2)) : h('p', { class: 'muted' }, 'No explanation.'),
      h('h2', null, 'Evidence'),
      h('div', { class: 'evidence', 'data-testid': 'evidence' }, json(a.evidence)),
    );
  } catch (error) {
    if (isCurrent(gen)) replace(root, h('p', null, h('a', { href: '/console/alerts' }, '← Alert queue')), failure(error));
  }
}

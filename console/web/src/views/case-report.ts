import type { CaseDetail, ReportDecisionRequest, ReportProposal, ReportProposalRequest } from '../../../../schemas/console/cases.ts';
import { currentSession, enc, post } from '../api.ts';
import { facts, h, when } from '../dom.ts';

// Four-eyes reporting: anyone working the case proposes a suspicious-activity report with a
// narrative; only a supervisor other than the proposer sees Approve and Reject (the API refuses
// the rest anyway). A rejected proposal can be proposed again; an approved one files the report.

const REASON_MAX = 2000;
const NARRATIVE_MAX = 20_000;

const errorLine = () => h('p', { class: 'state error', role: 'alert', hidden: true });
const showError = (line: HTMLElement, error: unknown) => {
  line.hidden = false;
  line.textContent = error instanceof Error ? error.message : String(error);
};

function proposalFacts(p: ReportProposal): HTMLElement {
  return facts([
    ['State', h('span', { 'data-testid': 'report-state' }, p.state)],
    ['Proposed by', `${p.proposed_by.email} · ${when(p.proposed_at)}`],
    ['Decided by', p.decided_by ? `${p.decided_by.email} · ${when(p.decided_at)}` : '—'],
    ['Decision reason', p.decision_reason ?? '—'],
    ['Narrative', h('p', { class: 'narrative', 'data-testid': 'narrative' }, p.narrative)],
  ]);
}

function proposeForm(episodeId: string, after: () => Promise<void>): HTMLFormElement {
  const message = errorLine();
  const narrative = h('textarea', { name: 'narrative', id: 'report-narrative', rows: 6, maxlength: NARRATIVE_MAX, required: true });
  const form = h(
    'form',
    { class: 'case-action', 'aria-label': 'propose a report', novalidate: true },
    h('label', { for: 'report-narrative' }, 'Narrative of the suspicious-activity report'),
    narrative,
    h('p', { class: 'hint' }, 'A supervisor other than you must approve it before the report is filed.'),
    message,
    h('button', { type: 'submit' }, 'Propose report'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.hidden = true;
    const text = narrative.value.trim();
    if (text === '') return showError(message, 'write the narrative first');
    form.querySelector('button')!.disabled = true;
    try {
      await post<ReportProposal>(`/cases/${enc(episodeId)}/report`, { narrative: text } satisfies ReportProposalRequest);
      await after();
    } catch (error) {
      showError(message, error);
      form.querySelector('button')!.disabled = false;
    }
  });
  return form;
}

function decisionForm(episodeId: string, after: () => Promise<void>): HTMLFormElement {
  const message = errorLine();
  const reason = h('textarea', { name: 'reason', id: 'report-reason', rows: 2, maxlength: REASON_MAX, required: true });
  const form = h(
    'form',
    { class: 'case-action', 'aria-label': 'decide the report', novalidate: true },
    h('label', { for: 'report-reason' }, 'Reason (required)'),
    reason,
    message,
    h('div', { class: 'actions' }, h('button', { type: 'submit', name: 'decision', value: 'approve' }, 'Approve and file'), h('button', { type: 'submit', name: 'decision', value: 'reject', class: 'secondary' }, 'Reject')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.hidden = true;
    const decision = ((event).submitter as HTMLButtonElement | null)?.value;
    const text = reason.value.trim();
    if (decision !== 'approve' && decision !== 'reject') return;
    if (text === '') return showError(message, 'give a reason');
    for (const b of form.querySelectorAll('button')) b.disabled = true;
    try {
      await post<ReportProposal>(`/cases/${enc(episodeId)}/report/decision`, { decision, reason: text } satisfies ReportDecisionRequest);
      await after();
    } catch (error) {
      showError(message, error);
      for (const b of form.querySelectorAll('button')) b.disabled = false;
    }
  });
  return form;
}

export function caseReport(detail: CaseDetail, after: () => Promise<void>): HTMLElement {
  const me = currentSession()!.user;
  const p = detail.report;
  const parts: Array<HTMLElement | null> = [];
  if (p) parts.push(proposalFacts(p));
  if (p?.state === 'pending') {
    if (p.proposed_by.user_id === me.id) parts.push(h('p', { class: 'hint', 'data-testid': 'report-waiting' }, 'You proposed this report: a supervisor other than you must approve it.'));
    else if (me.role === 'supervisor') parts.push(decisionForm(detail.episode_id, after));
    else parts.push(h('p', { class: 'hint', 'data-testid': 'report-waiting' }, 'Waiting for a supervisor to approve or reject it.'));
  } else if (p?.state !== 'approved' && detail.case_status !== 'closed') {
    parts.push(proposeForm(detail.episode_id, after));
  }
  if (!p && detail.case_status === 'closed') parts.push(h('p', { class: 'muted' }, 'The case is closed without a report.'));
  return h('section', { class: 'case-report', 'aria-label': 'report', 'data-testid': 'report' }, parts);
}

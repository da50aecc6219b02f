import { ID_PREFIXES } from '../../../platform/ids.ts';
import type { AssetRegistry } from '../../../schemas/assets/registry.ts';
import { CASE_PRIORITIES, type CaseNote, type CaseSummary, type ReportProposal } from '../../../schemas/console/cases.ts';
import type { CaseInboxRow } from '../queries/case-inbox.ts';
import type { CaseNoteRow } from '../queries/case-notes.ts';
import type { ReportProposalRow } from '../queries/case-reports.ts';

// The case views of /console/v1, typed from the contract (schemas/console/cases.ts).

// A keyset page of typed items (the list endpoints' {data, has_more, next_cursor}).
export function typedPage<R, V>(rows: R[], limit: number, view: (row: R) => V, cursorAfter: (last: R) => string): { data: V[]; has_more: boolean; next_cursor?: string } {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  const hasMore = rows.length > limit;
  return { data: data.map(view), has_more: hasMore, ...(hasMore && last ? { next_cursor: cursorAfter(last) } : {}) };
}

export function caseSummaryView(row: CaseInboxRow, now: Date, registry: AssetRegistry): CaseSummary {
  return {
    episode_id: ID_PREFIXES.episode + row.episode_id,
    case_status: row.case_status as CaseSummary['case_status'],
    episode_status: row.episode_status as CaseSummary['episode_status'],
    disposition: row.disposition as CaseSummary['disposition'],
    priority: CASE_PRIORITIES[row.priority - 1]!,
    assignee: row.assignee_user_id === null ? null : { user_id: row.assignee_user_id, email: row.assignee_email ?? '' },
    opened_at: row.opened_at.toISOString(),
    age_seconds: Math.max(0, Math.floor((now.getTime() - row.opened_at.getTime()) / 1000)),
    due_at: row.due_at?.toISOString() ?? null,
    overdue: row.due_at !== null && row.due_at.getTime() < now.getTime(),
    amount:
      row.amount_value === null || row.amount_asset === null
        ? null
        : { value: row.amount_value, asset: row.amount_asset, scale: registry.scaleOf(row.amount_asset) ?? 0 },
    typologies: row.typologies,
    subjects: row.subjects,
    subject_count: row.subject_count,
    alert_count: row.alert_count,
    last_alert_at: row.last_alert_at.toISOString(),
    awaiting_approval: row.awaiting_approval,
  };
}

export function caseNoteView(row: CaseNoteRow): CaseNote {
  return {
    note_id: row.note_id,
    episode_id: ID_PREFIXES.episode + row.episode_id,
    author: { user_id: row.author_user_id, email: row.author_email },
    body: row.body,
    created_at: row.created_at.toISOString(),
  };
}

export function reportProposalView(row: ReportProposalRow): ReportProposal {
  return {
    proposal_id: row.proposal_id,
    episode_id: ID_PREFIXES.episode + row.episode_id,
    state: row.state,
    narrative: row.narrative,
    proposed_by: { user_id: row.proposed_by, email: row.proposed_by_email },
    proposed_at: row.proposed_at.toISOString(),
    decided_by: row.decided_by === null ? null : { user_id: row.decided_by, email: row.decided_by_email ?? '' },
    decided_at: row.decided_at?.toISOString() ?? null,
    decision_reason: row.decision_reason,
  };
}

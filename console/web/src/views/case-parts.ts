import type { CaseSummary } from '../../../../schemas/console/cases.ts';
import { enc } from '../api.ts';
import { h, when } from '../dom.ts';
import { formatMinor } from '../format/money.ts';

// Pieces the inbox and the case page draw the same way.

export const caseHref = (id: string) => `/console/cases/${enc(id)}`;

// epsd_<uuid> is long for a table cell: its last 8 hex digits tell cases apart on a page. Not the
// first block: a UUIDv7 begins with its time, which moves about every 65 s, so cases opened
// together shared a label. The whole id is in the title and on the case page.
export const shortCaseId = (id: string) => id.replace(/^epsd_/, '').slice(-8);

// Seconds as the two largest units, as an analyst counts a case's age: "3d 4h", "5h 12m", "40m".
export function ageText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86_400);
  const hr = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  if (d > 0) return `${d}d ${hr}h`;
  if (hr > 0) return `${hr}h ${m}m`;
  return `${m}m`;
}

export const priorityBadge = (priority: CaseSummary['priority']) => h('span', { class: `badge sev-${priority}`, 'data-testid': 'priority' }, priority);

export const statusText = (s: CaseSummary['case_status']) => s.replaceAll('_', ' ');

// The due date, marked (text and class, not colour alone) once it has passed.
export function dueCell(c: Pick<CaseSummary, 'due_at' | 'overdue'>): HTMLElement {
  if (c.due_at === null) return h('span', { class: 'muted' }, '—');
  return h('span', { class: c.overdue ? 'due overdue' : 'due' }, when(c.due_at), c.overdue ? h('span', { class: 'badge overdue', 'data-testid': 'overdue' }, 'overdue') : null);
}

export const amountText = (amount: CaseSummary['amount']) => (amount ? formatMinor(amount.value, amount.scale, amount.asset) : '—');

export const assigneeText = (assignee: CaseSummary['assignee']) => (assignee ? assignee.email : 'unassigned');

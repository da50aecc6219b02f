import type { CaseAssignees, CaseAssignRequest, CaseAssignResponse, CaseSummary } from '../../../../schemas/console/cases.ts';
import { currentSession, get, post } from '../api.ts';
import { h } from '../dom.ts';

type UserRef = NonNullable<CaseSummary['assignee']>;

// Assigns cases (one or many) to a user, or to nobody with null; one call, one outcome per case.
export const assignCases = (episodeIds: string[], userId: string | null) =>
  post<CaseAssignResponse>('/cases/assign', { episode_ids: episodeIds, user_id: userId } satisfies CaseAssignRequest);

// "3 assigned · 1 unchanged": what a bulk assignment did, for the status line.
export function outcomeText(response: CaseAssignResponse): string {
  const counts = new Map<string, number>();
  for (const r of response.results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  return [...counts].map(([outcome, n]) => `${n} ${outcome.replaceAll('_', ' ')}`).join(' · ');
}

// The users known before the tenant's list arrives: the signed-in user and everyone already seen
// as an assignee, by email (the assignee filter offers these).
export function knownUsers(seen: Array<UserRef | null>): UserRef[] {
  const me = currentSession()?.user;
  const byId = new Map<string, UserRef>();
  if (me) byId.set(me.id, { user_id: me.id, email: me.email });
  for (const u of seen) if (u) byId.set(u.user_id, u);
  return [...byId.values()].sort((a, b) => a.email.localeCompare(b.email));
}

// A labelled select of users; the empty value is "nobody" (unassign). It starts with `users` and
// then offers every active user of the tenant, as the server lists them, so a supervisor can
// assign to someone who holds no case yet.
export function userPicker(name: string, label: string, users: UserRef[], selected?: string): HTMLLabelElement {
  const me = currentSession()?.user.id;
  const nobody = h('option', { value: '' }, 'nobody (unassign)');
  const select = h(
    'select',
    { name, 'data-testid': 'user-picker' },
    users.map((u) => h('option', { value: u.user_id, selected: u.user_id === selected }, u.user_id === me ? `${u.email} (me)` : u.email)),
    nobody,
  );
  void get<CaseAssignees>('/cases/assignees').then(
    ({ data }) => {
      const offered = new Set([...select.options].map((o) => o.value));
      for (const u of data) {
        if (offered.has(u.user_id)) continue;
        select.insertBefore(h('option', { value: u.user_id }, `${u.email}${u.user_id === me ? ' (me)' : ''} · ${u.role}`), nobody);
      }
    },
    // The picker keeps the users it started with; assigning to them still works.
    () => undefined,
  );
  return h('label', null, label, select);
}

import type { Pool } from '../../../platform/postgres/pool.ts';
import type { CASE_INBOX_SORTS } from '../../../schemas/console/cases.ts';

// The case inbox: the tenant's cases from case_inbox (services/cases/inbox.ts), filtered
// and in one of four orders, in keyset pages; each order walks its index of migration 0024.

type Db = Pick<Pool, 'query'>;

export interface CaseInboxFilters {
  // undefined: every case that is not closed (with awaitingApproval true: every case awaiting it).
  status?: string;
  // A user id, or null for unassigned.
  assignee?: string | null;
  typology?: string;
  priority?: number;
  overdue?: boolean;
  awaitingApproval?: boolean;
  sort: (typeof CASE_INBOX_SORTS)[number];
}

// Where the previous page ended: the sort key of its last row as text (full precision), and its id.
export interface InboxPosition {
  at: string;
  id: string;
}

export interface CaseInboxRow {
  episode_id: string;
  case_status: string;
  episode_status: string;
  disposition: string | null;
  priority: number;
  opened_at: Date;
  due_at: Date | null;
  amount_value: string | null;
  amount_asset: string | null;
  typologies: string[];
  assignee_user_id: string | null;
  assignee_email: string | null;
  awaiting_approval: boolean;
  alert_count: number;
  last_alert_at: Date;
  subjects: Array<{ kind: 'account' | 'party'; external_id: string }>;
  subject_count: number;
  // The sort key as the cursor keeps it.
  position: string;
}

// The sort key of a row as text and its ORDER BY. Due order is meaningless for closed cases
// (they have no due date): there it is age order.
function ordering(sort: CaseInboxFilters['sort'], closed: boolean): { key: string; order: string } {
  if (sort === 'due' && !closed) return { key: `i.due_at::text`, order: 'i.due_at, i.episode_id' };
  if (sort === 'amount') return { key: `coalesce(i.amount_value::text, '')`, order: 'i.amount_value DESC NULLS LAST, i.episode_id DESC' };
  if (sort === 'priority') return { key: `i.priority || ' ' || i.opened_at::text`, order: 'i.priority DESC, i.opened_at, i.episode_id' };
  return { key: 'i.opened_at::text', order: 'i.opened_at, i.episode_id' };
}

export async function caseInbox(db: Db, tenantId: string, filters: CaseInboxFilters, now: Date, after: InboxPosition | undefined, limit: number): Promise<CaseInboxRow[]> {
  const values: unknown[] = [tenantId];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const closed = filters.status === 'closed';
  // Cases awaiting approval, of any status: a case closed through /v1 or the CLI while a report
  // proposal waits still has the proposal for a supervisor to decide.
  const anyStatus = filters.awaitingApproval === true && filters.status === undefined;
  const where = ['i.tenant_id = $1'];
  if (!anyStatus) where.push(`i.open = ${closed ? 'false' : 'true'}`);
  if (filters.status !== undefined && !closed) where.push(`i.case_status = ${param(filters.status)}`);
  if (filters.assignee === null) where.push('i.assignee_user_id IS NULL');
  else if (filters.assignee !== undefined) where.push(`i.assignee_user_id = ${param(filters.assignee)}::uuid`);
  if (filters.typology !== undefined) where.push(`i.typologies @> ARRAY[${param(filters.typology)}::text]`);
  if (filters.priority !== undefined) where.push(`i.priority = ${param(filters.priority)}`);
  if (filters.overdue !== undefined) where.push(filters.overdue ? `i.due_at < ${param(now)}` : `(i.due_at IS NULL OR i.due_at >= ${param(now)})`);
  if (filters.awaitingApproval !== undefined) where.push(`i.awaiting_approval = ${param(filters.awaitingApproval)}`);
  // Closed cases have no due date: a list that may hold them is in age order for `due`.
  const { key, order } = ordering(filters.sort, closed || anyStatus);
  if (after) where.push(afterPosition(filters.sort, closed || anyStatus, after, param));
  const { rows } = await db.query<CaseInboxRow>(
    withDetails(`SELECT i.*, ${key} AS position FROM case_inbox i WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${param(limit)}`, order),
    values,
  );
  return rows;
}

// One case as the inbox shows it; undefined when the tenant has none with this id.
export async function findInboxCase(db: Db, tenantId: string, episodeId: string): Promise<CaseInboxRow | undefined> {
  const { rows } = await db.query<CaseInboxRow>(withDetails(`SELECT i.*, '' AS position FROM case_inbox i WHERE i.tenant_id = $1 AND i.episode_id = $2`, 'i.episode_id'), [
    tenantId,
    episodeId,
  ]);
  return rows[0];
}

// The inbox rows `page` selects (from case_inbox i, with a position column) with their assignee's
// email, in the given order.
const withDetails = (page: string, order: string) => `WITH page AS MATERIALIZED (${page})
     SELECT i.episode_id, i.case_status, i.episode_status, i.disposition, i.priority, i.opened_at, i.due_at,
            i.amount_value::text AS amount_value, i.amount_asset, i.typologies, i.assignee_user_id,
            (SELECT u.email FROM console_users u WHERE u.user_id = i.assignee_user_id) AS assignee_email,
            i.awaiting_approval, i.alert_count, i.last_alert_at, i.position, i.subjects, i.subject_count
       FROM page i
      ORDER BY ${order}`;

// The rows after the previous page's last, in the list's order.
function afterPosition(sort: CaseInboxFilters['sort'], closed: boolean, after: InboxPosition, param: (v: unknown) => string): string {
  const id = `${param(after.id)}::uuid`;
  if (sort === 'due' && !closed) return `(i.due_at, i.episode_id) > (${param(after.at)}::timestamptz, ${id})`;
  if (sort === 'amount') {
    // Largest first, cases without an amount last; ties by id, descending.
    if (after.at === '') return `(i.amount_value IS NULL AND i.episode_id < ${id})`;
    const amount = `${param(after.at)}::numeric`;
    return `((i.amount_value, i.episode_id) < (${amount}, ${id}) OR i.amount_value IS NULL)`;
  }
  if (sort === 'priority') {
    const [rank, ...rest] = after.at.split(' ');
    const p = `${param(Number(rank))}::smallint`;
    return `(i.priority < ${p} OR (i.priority = ${p} AND (i.opened_at, i.episode_id) > (${param(rest.join(' '))}::timestamptz, ${id})))`;
  }
  return `(i.opened_at, i.episode_id) > (${param(after.at)}::timestamptz, ${id})`;
}

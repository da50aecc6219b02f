import type { Pool } from '../../../platform/postgres/pool.ts';
import { SEVERITY_RANK } from './alert-queue.ts';

// Case assignment and the audit log as a case shows it (infra/postgres/0013_console_cases).

type Db = Pick<Pool, 'query'>;

export interface Assignee {
  user_id: string;
  email: string;
}

// The case's holder as the inbox names it (services/cases/inbox.ts): a disabled holder is nobody
// once the case is open again (a Take treats it so: lockAssignment); a closed case shows who worked it.
export async function findAssignee(db: Db, tenantId: string, episodeId: string): Promise<Assignee | null> {
  const { rows } = await db.query<Assignee>(
    `SELECT u.user_id, u.email FROM console_assignments a
       JOIN console_users u ON u.user_id = a.user_id
       JOIN episodes e ON e.tenant_id = a.tenant_id AND e.episode_id = a.episode_id
      WHERE a.tenant_id = $1 AND a.episode_id = $2 AND (e.case_status = 'closed' OR NOT u.disabled)`,
    [tenantId, episodeId],
  );
  return rows[0] ?? null;
}

// Sets (or, with null, clears) the assignee; call after lockAssignment, in its transaction. The
// case inbox's copy changes with it.
export async function setAssignee(db: Db, tenantId: string, episodeId: string, userId: string | null, by: string, at: Date): Promise<void> {
  await db.query('UPDATE case_inbox SET assignee_user_id = $3 WHERE tenant_id = $1 AND episode_id = $2', [tenantId, episodeId, userId]);
  if (userId === null) {
    await db.query('DELETE FROM console_assignments WHERE tenant_id = $1 AND episode_id = $2', [tenantId, episodeId]);
    return;
  }
  await db.query(
    `INSERT INTO console_assignments (tenant_id, episode_id, user_id, assigned_by, assigned_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, episode_id) DO UPDATE SET user_id = excluded.user_id, assigned_by = excluded.assigned_by, assigned_at = excluded.assigned_at`,
    [tenantId, episodeId, userId, by, at],
  );
}

// Locks the episode's assignment (two concurrent assignments apply one after the other) and
// returns the current assignee's id. A disabled holder counts as nobody: a closed case they held,
// reopened since, can be taken like an unassigned one.
export async function lockAssignment(db: Db, tenantId: string, episodeId: string): Promise<string | null> {
  // The episode row is the lock: an assignment row may not exist yet.
  await db.query('SELECT 1 FROM episodes WHERE tenant_id = $1 AND episode_id = $2 FOR UPDATE', [tenantId, episodeId]);
  const { rows } = await db.query<{ user_id: string }>(
    `SELECT a.user_id FROM console_assignments a JOIN console_users u ON u.user_id = a.user_id
      WHERE a.tenant_id = $1 AND a.episode_id = $2 AND NOT u.disabled`,
    [tenantId, episodeId],
  );
  return rows[0]?.user_id ?? null;
}

// Unassigns the user's cases that are not closed (a closed case keeps who worked it), in the
// inbox too; the episodes' ids, in order. The caller holds the tenant's detection lock.
export async function releaseOpenCases(db: Db, tenantId: string, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ episode_id: string }>(
    `WITH released AS (
       DELETE FROM console_assignments a USING episodes e
        WHERE a.tenant_id = $1 AND a.user_id = $2 AND e.tenant_id = a.tenant_id AND e.episode_id = a.episode_id AND e.case_status <> 'closed'
       RETURNING a.episode_id
     ), inbox AS (
       UPDATE case_inbox c SET assignee_user_id = NULL FROM released r WHERE c.tenant_id = $1 AND c.episode_id = r.episode_id
     )
     SELECT episode_id FROM released ORDER BY episode_id`,
    [tenantId, userId],
  );
  return rows.map((r) => r.episode_id);
}

// An active user of the tenant, or undefined.
export async function activeUserOfTenant(db: Db, tenantId: string, userId: string): Promise<Assignee | undefined> {
  const { rows } = await db.query<Assignee>('SELECT user_id, email FROM console_users WHERE tenant_id = $1 AND user_id = $2 AND NOT disabled', [tenantId, userId]);
  return rows[0];
}

// The tenant's users a case may be assigned to: every one not disabled, by email.
export async function assignableUsers(db: Db, tenantId: string): Promise<Array<Assignee & { role: 'analyst' | 'supervisor' }>> {
  const { rows } = await db.query<Assignee & { role: 'analyst' | 'supervisor' }>(
    'SELECT user_id, email, role FROM console_users WHERE tenant_id = $1 AND NOT disabled ORDER BY lower(email), user_id',
    [tenantId],
  );
  return rows;
}

export interface AuditRow {
  audit_id: string;
  at: Date;
  actor_kind: string;
  actor_email: string | null;
  action: string;
  subject: string | null;
  details: Record<string, unknown>;
  cursor_at: string;
}

// Which of a case's audit entries a read takes: views (`*.viewed`) are most of the audit and none
// of the story (decision 0035), so a capped list reads the story apart, lest page loads push early
// assignments, report proposals and exports out of it.
export type CaseAuditPart = 'all' | 'story' | 'views';

// The audit rows naming a case ($1 tenant, $2 episode ref).
const CASE_AUDIT_ROWS = `SELECT * FROM console_audit WHERE tenant_id = $1 AND subject = $2
             UNION
             SELECT * FROM console_audit WHERE tenant_id = $1 AND details ? 'episode_id' AND details ->> 'episode_id' = $2`;

// The entries of one case, newest first: those whose subject is the episode (case actions,
// assignments, views of the episode) and those whose details name it (views of its alerts).
export async function caseAudit(
  db: Db,
  tenantId: string,
  episode: string,
  after: { at: string; id: string } | undefined,
  limit: number,
  part: CaseAuditPart = 'all',
): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditRow>(
    `SELECT c.audit_id::text AS audit_id, c.at, c.actor_kind, u.email AS actor_email, c.action, c.subject, c.details, c.at::text AS cursor_at
       FROM (${CASE_AUDIT_ROWS}) c
       LEFT JOIN console_users u ON u.user_id = c.actor_user_id
      WHERE ($3::timestamptz IS NULL OR (c.at, c.audit_id) < ($3::timestamptz, $4::bigint))
        AND ($6::text = 'all' OR (c.action LIKE '%.viewed') = ($6::text = 'views'))
      ORDER BY c.at DESC, c.audit_id DESC
      LIMIT $5`,
    [tenantId, episode, after?.at ?? null, after?.id ?? null, limit, part],
  );
  return rows;
}

export interface CaseViewCount {
  views: number;
  viewers: number;
  first_at: Date | null;
  last_at: Date | null;
}

// How often the case was viewed and by how many users: what a capped list of its views leaves out.
export async function caseViewCount(db: Db, tenantId: string, episode: string): Promise<CaseViewCount> {
  const { rows } = await db.query<CaseViewCount>(
    `SELECT count(*)::int AS views, count(DISTINCT c.actor_user_id)::int AS viewers, min(c.at) AS first_at, max(c.at) AS last_at
       FROM (${CASE_AUDIT_ROWS}) c
      WHERE c.action LIKE '%.viewed'`,
    [tenantId, episode],
  );
  return rows[0]!;
}

export function auditView(row: AuditRow): Record<string, unknown> {
  return {
    at: row.at.toISOString(),
    actor_kind: row.actor_kind,
    actor_email: row.actor_email,
    action: row.action,
    subject: row.subject,
    details: row.details,
  };
}

export interface PostureReason {
  detector: string;
  typology: string;
  severity: string;
  open_alerts: number;
  latest_at: string;
}

// What drives a party's band, as an analyst may see it (the /v1 posture shows the band only):
// its open live alerts, on the party or on accounts it holds, by detector, typology and severity,
// the most severe first.
export async function postureReasons(db: Db, tenantId: string, partyId: string): Promise<PostureReason[]> {
  const { rows } = await db.query<{ detector_id: string; typology: string; severity: string; n: number; latest: Date }>(
    `SELECT detector_id, typology, severity, count(*)::int AS n, max(created_at) AS latest
       FROM alerts WHERE tenant_id = $1 AND party_id = $2 AND mode = 'live' AND status = 'open'
      GROUP BY detector_id, typology, severity
      ORDER BY max(${SEVERITY_RANK}) DESC, count(*) DESC, detector_id`,
    [tenantId, partyId],
  );
  return rows.map((r) => ({ detector: r.detector_id, typology: r.typology, severity: r.severity, open_alerts: r.n, latest_at: r.latest.toISOString() }));
}

// Open live alerts per subject, for the given party and account external ids.
export async function openAlertCounts(db: Db, tenantId: string, subjects: Array<{ kind: string; id: string }>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (subjects.length === 0) return counts;
  const { rows } = await db.query<{ subject_kind: string; subject_id: string; n: number }>(
    `SELECT a.subject_kind, a.subject_id, count(*)::int AS n
       FROM alerts a JOIN unnest($2::text[], $3::text[]) s(kind, id) ON a.subject_kind = s.kind AND a.subject_id = s.id
      WHERE a.tenant_id = $1 AND a.mode = 'live' AND a.status = 'open'
      GROUP BY a.subject_kind, a.subject_id`,
    [tenantId, subjects.map((s) => s.kind), subjects.map((s) => s.id)],
  );
  for (const r of rows) counts.set(`${r.subject_kind}:${r.subject_id}`, r.n);
  return counts;
}

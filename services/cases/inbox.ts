// The case inbox (infra/postgres/0024_case_management): one row per episode with what the console's
// inbox filters and sorts on, so a page of 50,000 cases is an index walk, not a sort. Rewritten
// from the episode, its alerts, its assignment and its report proposals whenever one of them
// changes: detection (pipelines/detect/episodes.ts), case actions (actions.ts), the console's assignment, proposals
// and SLA. Runs in the caller's transaction, so the row commits with the change it reflects.
// Decisions: docs/decisions/0030-case-inbox.md.
import type { Pool } from '../../platform/postgres/pool.ts';
import { HEADLINE_EVIDENCE_ORDER } from './store.ts';

type Db = Pick<Pool, 'query'>;

// Hours from a case's opening to its due date, by priority (the episode's severity), until a
// supervisor sets the tenant's own: a critical case is looked at within two days, a low one
// within thirty (the usual outer bound for reviewing an alert).
export const DEFAULT_CASE_SLA_HOURS = { critical: 48, high: 168, medium: 336, low: 720 } as const;
export type CaseSlaHours = { critical: number; high: number; medium: number; low: number };

// The priority rank as stored (1 low … 4 critical), the same order as severities.
const PRIORITY_RANK = `(CASE e.severity WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END)`;

// The amount at stake: the largest total one of the episode's live alerts states in its headline
// evidence (the hit whose words the alert carries), in the tenant's base asset. Detection
// already converts every amount to the base asset with the tenant's fx rates; alerts overlap
// (two detectors on the same movements), so their totals are not added.
// A largest total of nothing (a sanctions hit no movement followed) is no amount at stake: null.
const AMOUNT = `
  SELECT NULLIF(max((h.evidence -> 'amounts' ->> 'total')::numeric), 0) AS value
    FROM alerts a
    CROSS JOIN LATERAL (SELECT x.evidence FROM alert_evidence x WHERE x.tenant_id = a.tenant_id AND x.alert_id = a.alert_id
                         ORDER BY ${HEADLINE_EVIDENCE_ORDER('x', 'a')} LIMIT 1) h
   WHERE a.tenant_id = e.tenant_id AND a.episode_id = e.episode_id AND a.mode = 'live'
     AND h.evidence -> 'amounts' ->> 'asset' = t.base_asset
     AND h.evidence -> 'amounts' ->> 'total' ~ '^[0-9]{1,38}$'`;

// Subjects kept per row (subject_count says how many there are).
const INBOX_SUBJECTS = 20;
const SUBJECTS = `
  SELECT count(*)::int AS n,
         coalesce(jsonb_agg(jsonb_build_object('kind', m.subject_kind, 'external_id', m.subject_id) ORDER BY m.subject_kind, m.subject_id)
                    FILTER (WHERE m.rank <= ${INBOX_SUBJECTS}), '[]'::jsonb) AS list
    FROM (SELECT subject_kind, subject_id, row_number() OVER (ORDER BY subject_kind, subject_id) AS rank
            FROM episode_members WHERE tenant_id = e.tenant_id AND episode_id = e.episode_id AND role = 'subject') m`;

export async function refreshCaseInbox(db: Db, tenantId: string, episodeIds: readonly string[]): Promise<void> {
  if (episodeIds.length === 0) return;
  const d = DEFAULT_CASE_SLA_HOURS;
  await db.query({
    name: 'case-inbox-refresh',
    text: `WITH sla AS (
             SELECT coalesce(s.critical_h, $3) AS c, coalesce(s.high_h, $4) AS h, coalesce(s.medium_h, $5) AS m, coalesce(s.low_h, $6) AS l
               FROM (SELECT 1) one LEFT JOIN case_sla s ON s.tenant_id = $1)
           INSERT INTO case_inbox (tenant_id, episode_id, open, case_status, episode_status, disposition, priority, opened_at, due_at, amount_value,
                                   amount_asset, typologies, assignee_user_id, awaiting_approval, alert_count, last_alert_at, subjects, subject_count)
           SELECT e.tenant_id, e.episode_id, e.case_status <> 'closed', e.case_status, e.status, e.disposition, ${PRIORITY_RANK}, e.created_at,
                  CASE WHEN e.case_status = 'closed' THEN NULL
                       ELSE e.created_at + make_interval(hours => CASE e.severity WHEN 'critical' THEN sla.c WHEN 'high' THEN sla.h WHEN 'medium' THEN sla.m ELSE sla.l END) END,
                  amount.value, CASE WHEN amount.value IS NULL THEN NULL ELSE t.base_asset END,
                  coalesce((SELECT array_agg(DISTINCT a.typology ORDER BY a.typology) FROM alerts a
                             WHERE a.tenant_id = e.tenant_id AND a.episode_id = e.episode_id AND a.mode = 'live'), '{}'),
                  -- A disabled holder is nobody once the case is open again (as lockAssignment
                  -- judges a Take); a closed case shows who worked it.
                  (SELECT c.user_id FROM console_assignments c JOIN console_users u ON u.user_id = c.user_id
                    WHERE c.tenant_id = e.tenant_id AND c.episode_id = e.episode_id AND (e.case_status = 'closed' OR NOT u.disabled)),
                  EXISTS (SELECT 1 FROM case_report_proposals p WHERE p.tenant_id = e.tenant_id AND p.episode_id = e.episode_id AND p.state = 'pending'),
                  e.alert_count, e.last_alert_at, subjects.list, subjects.n
             FROM episodes e
             JOIN tenants t ON t.tenant_id = e.tenant_id
             CROSS JOIN sla
             CROSS JOIN LATERAL (${AMOUNT}) amount
             CROSS JOIN LATERAL (${SUBJECTS}) subjects
            WHERE e.tenant_id = $1 AND e.episode_id = ANY($2::uuid[])
           ON CONFLICT (tenant_id, episode_id) DO UPDATE SET
             open = excluded.open, case_status = excluded.case_status, episode_status = excluded.episode_status, disposition = excluded.disposition,
             priority = excluded.priority, opened_at = excluded.opened_at, alert_count = excluded.alert_count, last_alert_at = excluded.last_alert_at,
             subjects = excluded.subjects, subject_count = excluded.subject_count,
             due_at = excluded.due_at, amount_value = excluded.amount_value, amount_asset = excluded.amount_asset,
             typologies = excluded.typologies, assignee_user_id = excluded.assignee_user_id, awaiting_approval = excluded.awaiting_approval`,
    values: [tenantId, [...new Set(episodeIds)], d.critical, d.high, d.medium, d.low],
  });
}

// The due dates of the tenant's cases that are not closed, after its SLA changed (closed cases
// have none).
export async function redateOpenCases(db: Db, tenantId: string, hours: CaseSlaHours): Promise<void> {
  await db.query(
    `UPDATE case_inbox SET due_at = opened_at + make_interval(hours => CASE priority WHEN 4 THEN $2::int WHEN 3 THEN $3::int WHEN 2 THEN $4::int ELSE $5::int END)
      WHERE tenant_id = $1 AND open`,
    [tenantId, hours.critical, hours.high, hours.medium, hours.low],
  );
}

-- The analysts' console API (services/console/routes, docs/decisions/0018-console-api.md): who
-- works which case, the per-case view of the audit log, and the alert queue's orderings.

-- At most one assignee per episode (case); no row means unassigned. Each change is also appended
-- to console_audit (case.assigned), which keeps the history; this table holds only the current
-- state.
CREATE TABLE console_assignments (
  tenant_id   text NOT NULL,
  episode_id  uuid NOT NULL,
  user_id     uuid NOT NULL REFERENCES console_users (user_id),
  assigned_by uuid NOT NULL REFERENCES console_users (user_id),
  assigned_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, episode_id)
);
CREATE INDEX console_assignments_user ON console_assignments (tenant_id, user_id);

-- The audit log shown per case: entries whose subject is the episode, and alert views that name
-- the alert's episode in details.
CREATE INDEX console_audit_subject ON console_audit (tenant_id, subject, at DESC, audit_id DESC);
CREATE INDEX console_audit_episode ON console_audit (tenant_id, (details ->> 'episode_id'), at DESC, audit_id DESC)
  WHERE details ? 'episode_id';

-- The alert queue: live alerts by status, newest or oldest first, and by severity rank then
-- newest. The rank expression is the one services/console/queries/alert-queue.ts orders by.
CREATE INDEX alerts_queue_status ON alerts (tenant_id, status, created_at DESC, alert_id DESC) WHERE mode = 'live';
CREATE INDEX alerts_queue_severity ON alerts (
  tenant_id,
  (CASE severity WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END) DESC,
  created_at DESC,
  alert_id DESC
) WHERE mode = 'live';

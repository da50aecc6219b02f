DROP INDEX IF EXISTS alerts_queue_severity;
DROP INDEX IF EXISTS alerts_queue_status;
DROP INDEX IF EXISTS console_audit_episode;
DROP INDEX IF EXISTS console_audit_subject;
DROP TABLE IF EXISTS console_assignments;

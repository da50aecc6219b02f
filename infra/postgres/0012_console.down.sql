DROP TABLE IF EXISTS console_audit;
DROP FUNCTION IF EXISTS console_audit_refuse_change();
DROP TABLE IF EXISTS console_sessions;
DROP TABLE IF EXISTS console_users;

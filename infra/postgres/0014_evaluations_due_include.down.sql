DROP INDEX IF EXISTS subject_evaluations_due;
CREATE INDEX subject_evaluations_due ON subject_evaluations (event_at, tenant_id) WHERE mode = 'live';

-- Scheduled evaluation (pipelines/detect/schedule.ts): a subject is evaluated again, with no new
-- fact, once event time has moved a day past its last evaluation, for as long as one of its
-- windows still holds a fact. fact_at is the event time of the latest fact that triggered an
-- evaluation of the subject (event_at, the instant of its latest evaluation, moves on with
-- scheduled evaluations; fact_at does not).
ALTER TABLE subject_evaluations ADD COLUMN fact_at timestamptz;
UPDATE subject_evaluations SET fact_at = event_at;
ALTER TABLE subject_evaluations ALTER COLUMN fact_at SET NOT NULL;

-- The tenant's event-time watermark (its latest live evaluation) and its evaluations in an
-- event-time range. event_at leads on purpose: an index led by tenant_id would also match the
-- lookups of one subject's row (tenant, kind, id, mode), and a planner without fresh statistics
-- (a table filling up fast) picked it over the primary key, scanning a tenant per lookup.
CREATE INDEX subject_evaluations_due ON subject_evaluations (event_at, tenant_id) WHERE mode = 'live';

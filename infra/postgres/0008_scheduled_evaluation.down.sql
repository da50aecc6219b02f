DROP INDEX IF EXISTS subject_evaluations_due;
ALTER TABLE subject_evaluations DROP COLUMN IF EXISTS fact_at;

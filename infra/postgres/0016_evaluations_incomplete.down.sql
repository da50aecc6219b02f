ALTER TABLE subject_evaluations DROP COLUMN IF EXISTS incomplete;

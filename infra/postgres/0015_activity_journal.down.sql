DROP INDEX IF EXISTS agg_activity_recorded;
ALTER TABLE agg_activity DROP COLUMN IF EXISTS recorded_xid;

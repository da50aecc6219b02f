-- Which transaction recorded each activity. Detection keeps its subjects' recent activities in
-- memory from one batch to the next, and each batch reads only the activities recorded since its
-- previous read: those whose transaction that read's snapshot did not see
-- (platform/aggregates/snapshot-cache.ts). Rows already here stay NULL: they were committed before
-- any such read could start, so none asks for them (a volatile default on ADD COLUMN would rewrite
-- the table). The index leads with the tenant: every read names its tenants.
ALTER TABLE agg_activity ADD COLUMN recorded_xid xid8;
ALTER TABLE agg_activity ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX agg_activity_recorded ON agg_activity (tenant_id, recorded_xid);

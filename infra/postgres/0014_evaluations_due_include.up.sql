-- subject_evaluations_due (0008) led with event_at so that lookups of one subject's row
-- (tenant, kind, id, mode) could not use it: an index with tenant_id as a key column matched them
-- too, and a planner without fresh statistics (a table filling up fast) picked it over the
-- primary key. PostgreSQL 18's skip scan reaches a later key column all the same: it read the
-- whole index once per looked-up row (detection's evaluations write of 220 rows took 26 ms on a
-- table of 1,100 rows and 50 ms at 2,200, against 8 ms by the primary key). tenant_id becomes a
-- non-key column: the schedule's range scans still test it from the index, and no plan can
-- search the index by it.
DROP INDEX IF EXISTS subject_evaluations_due;
CREATE INDEX subject_evaluations_due ON subject_evaluations (event_at) INCLUDE (tenant_id) WHERE mode = 'live';

DROP INDEX IF EXISTS inbox_events_occurred;
DROP INDEX IF EXISTS canonical_movements_occurred;
DROP TABLE IF EXISTS reconciliation_results;
DROP TABLE IF EXISTS reconciliations;

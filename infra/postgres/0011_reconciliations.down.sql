DROP INDEX IF EXISTS inbox_events_occurred;
DROP INDEX IF EXISTS canonical_movements_credit_account;
DROP INDEX IF EXISTS canonical_movements_debit_account;
DROP INDEX IF EXISTS canonical_movements_occurred;
DROP TABLE IF EXISTS reconciliation_results;
DROP TABLE IF EXISTS reconciliations;

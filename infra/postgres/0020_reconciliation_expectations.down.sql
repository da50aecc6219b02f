DROP TABLE IF EXISTS reconciliation_expectation_misses;
DROP TABLE IF EXISTS reconciliation_expectations;

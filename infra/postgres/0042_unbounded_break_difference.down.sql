ALTER TABLE reconciliation_breaks ALTER COLUMN opened_sum_difference TYPE numeric(38, 0);

-- A difference of sums is not an amount either (0018): a declared sum of 38 digits, negative, and
-- one counted movement differ by 39 digits, which numeric(38, 0) refused ("numeric field
-- overflow"), so the declaration answered 500 and its recheck failed on every pass.
ALTER TABLE reconciliation_breaks ALTER COLUMN opened_sum_difference TYPE numeric;

DROP TABLE IF EXISTS reconciliation_break_comments;
ALTER TABLE reconciliation_results DROP COLUMN IF EXISTS observed_detail;
DROP TABLE IF EXISTS reconciliation_breaks;
DROP INDEX IF EXISTS canonical_movements_received;
DROP INDEX IF EXISTS reconciliations_scope;
DROP INDEX IF EXISTS reconciliations_reference;
ALTER TABLE reconciliations
  DROP COLUMN IF EXISTS counted_statuses,
  DROP COLUMN IF EXISTS basis,
  DROP COLUMN IF EXISTS movement_types,
  DROP COLUMN IF EXISTS rails,
  DROP COLUMN IF EXISTS counterparty,
  DROP COLUMN IF EXISTS import_id,
  DROP COLUMN IF EXISTS tolerance_minor,
  DROP COLUMN IF EXISTS tolerance_bps,
  DROP COLUMN IF EXISTS tolerance_count,
  DROP COLUMN IF EXISTS customer_reference,
  DROP COLUMN IF EXISTS request_hash;

-- A recheck claims its reconciliation in a committed statement before comparing: while the claim
-- stands, a movement's stale mark is written even on a reconciliation already stale (waiting for
-- the comparison to commit), instead of being skipped by a mark that the comparison then clears.
-- The claim expires, so a recheck that died with it does not hold the reconciliation for good.
ALTER TABLE reconciliations ADD COLUMN checking_until timestamptz;

-- Finds the declaration that corrects another: a re-comparison skips a declaration a correction
-- replaced, and the marking of stale declarations leaves such ones alone.
CREATE INDEX reconciliations_corrected_by ON reconciliations (tenant_id, corrects) WHERE corrects IS NOT NULL;

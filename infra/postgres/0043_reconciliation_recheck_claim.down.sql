ALTER TABLE reconciliations DROP COLUMN checking_until;

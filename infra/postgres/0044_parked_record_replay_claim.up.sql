-- A replay claims its parked record in a committed statement and runs the handler outside any
-- transaction: a row lock held while the handler ran kept a write transaction open for that long,
-- and the embedded log publishes nothing newer than its oldest running transaction, so every group
-- waited for the replay. The claim expires, so a member that died holding it delays the record
-- only until then.
ALTER TABLE parked_records ADD COLUMN replay_claimed_until timestamptz;

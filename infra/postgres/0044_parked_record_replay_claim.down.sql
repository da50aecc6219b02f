ALTER TABLE parked_records DROP COLUMN replay_claimed_until;

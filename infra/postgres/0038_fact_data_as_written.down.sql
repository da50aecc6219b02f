ALTER TABLE canonical_control_events ALTER COLUMN data TYPE jsonb USING data::jsonb;
ALTER TABLE canonical_movements ALTER COLUMN data TYPE jsonb USING data::jsonb;

ALTER TABLE agg_activity ALTER COLUMN movement_id TYPE text COLLATE "default";

DROP INDEX agg_activity_movement;
DROP TABLE agg_retraction;

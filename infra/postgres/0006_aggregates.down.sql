DROP TABLE IF EXISTS agg_activity;

ALTER TABLE reconciliation_results ALTER COLUMN observed_sum TYPE numeric(38, 0);
ALTER TABLE agg_activity ALTER COLUMN base_value TYPE numeric(38, 0);
ALTER TABLE graph_edges ALTER COLUMN sum TYPE numeric(38, 0);

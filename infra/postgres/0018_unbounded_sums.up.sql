-- Sums of amounts are not amounts: two movements of 38 digits each (the most an amount may have)
-- add up to 39, and a conversion into the base asset can carry one past 38 digits too. These
-- columns were numeric(38, 0), so such an accepted movement failed the graph and aggregates
-- pipelines ("numeric field overflow") instead of being counted. Unconstrained numeric holds any
-- integer; dropping the precision rewrites nothing.
ALTER TABLE graph_edges ALTER COLUMN sum TYPE numeric;
ALTER TABLE agg_activity ALTER COLUMN base_value TYPE numeric;
ALTER TABLE reconciliation_results ALTER COLUMN observed_sum TYPE numeric;

-- A transfer's base-asset amount is a conversion, not an amount as sent: a 38-digit EUR amount
-- (the most decision 0002 accepts) is 39 digits of USD at 1.20, 40 of JPY from USD. 0018 widened
-- the sums for that reason but left graph_transfers.amount at numeric(38, 0), so such a movement
-- was parked by the graph pipeline ("numeric field overflow") and missing from the network.
-- Unconstrained numeric holds any integer; dropping the precision rewrites nothing.
ALTER TABLE graph_transfers ALTER COLUMN amount TYPE numeric;

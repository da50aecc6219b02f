ALTER TABLE graph_transfers ALTER COLUMN amount TYPE numeric(38, 0);

DROP INDEX graph_transfers_movement;
DROP TABLE graph_retracted;

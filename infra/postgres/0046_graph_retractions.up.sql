-- Movements that a correction supersedes (links.correction_of), for the graph: their transfers
-- leave graph_transfers (and their pairs' transfer edges), and one that arrives after its
-- correction is never recorded (platform/graph/postgres/writes.ts, decision 0064).
CREATE TABLE graph_retracted (
  tenant_id    text NOT NULL,
  movement_id  text NOT NULL,
  PRIMARY KEY (tenant_id, movement_id)
);

-- A retraction finds the original's transfers by its movement id alone.
CREATE INDEX graph_transfers_movement ON graph_transfers (tenant_id, movement_id);

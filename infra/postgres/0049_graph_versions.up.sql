-- The version of each entity the graph holds (origin: `account:A1`), so that a lower current
-- version the log hands over after a higher one changes nothing (platform/graph/shared/apply.ts).
-- Entities applied before this table start with no row: their next version is taken whatever its
-- sequence, as before.
CREATE TABLE graph_versions (
  tenant_id  text NOT NULL,
  origin     text NOT NULL,
  sequence   bigint,
  PRIMARY KEY (tenant_id, origin)
);

-- Movements that a correction supersedes (links.correction_of): every read of agg_activity leaves
-- their activities out (platform/aggregates/clickhouse-sql.ts, decision 0064). Nothing is deleted
-- from agg_activity: ClickHouse 18.16 deletes only by an asynchronous mutation that rewrites
-- whole parts. A row is written whichever of the two movements arrives first; a redelivered one
-- is merged away, and reads use the set of ids, which a duplicate does not change.
CREATE TABLE IF NOT EXISTS {database}.agg_retraction (
  tenant_id     String,
  movement_id   String,
  retracted_by  String
) ENGINE = ReplacingMergeTree()
ORDER BY (tenant_id, movement_id);

-- The database of the ClickHouse aggregate store (platform/aggregates/clickhouse.ts) and the
-- record of the migrations applied to it. {database} is the configured database name
-- (CLICKHOUSE_DATABASE, a plain identifier); migrate() substitutes it and applies the files of
-- this directory in order, one statement at a time (statements end with a semicolon at the end of
-- a line). Written for ClickHouse 18.16 (Debian's package) and current releases alike: no
-- DateTime64, no TTL, no Nullable keys, no settings a version does not know. The record is a
-- MergeTree (not a TinyLog, which concurrent writers corrupt): every process migrates at start.
CREATE DATABASE IF NOT EXISTS {database};

CREATE TABLE IF NOT EXISTS {database}.schema_migrations (
  version UInt32,
  name String,
  applied_at DateTime DEFAULT now()
) ENGINE = MergeTree ORDER BY version;

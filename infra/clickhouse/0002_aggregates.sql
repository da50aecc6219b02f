-- The behavioural aggregates: one row per activity, that is one side of one movement as one
-- account or party sees it (the ClickHouse twin of infra/postgres/0006_aggregates.up.sql). Window
-- stats, baselines and counterparty history are computed at read time from these rows.
--
-- Identity and dedup: the sorting key is the activity's identity, (tenant, subject kind, subject,
-- movement, direction), so ReplacingMergeTree collapses a redelivered activity into one row when
-- parts merge; until they do, every read that counts, sums or lists keeps one row per identity
-- (LIMIT 1 BY the sorting key: the collapse FINAL applies, much cheaper on 18.16), so no
-- statistic counts a redelivery twice. (The adapter also skips rows already present
-- before it inserts, so redelivery normally writes nothing at all.) The key starts with the
-- subject, so every read of one subject is one range of the primary index.
--
-- Event time is occurred_ms, milliseconds since 1970 (18.16 has no DateTime64). Money is
-- Decimal(38, 0) integer minor units, as numeric(38, 0) in PostgreSQL: amount_value as the
-- customer sent it, base_value in the tenant's base asset; priced = 0 when no FX rate was
-- available, with base_value 0 (counted, never summed). Kind and direction are enums, so anything
-- else is refused at insert.
CREATE TABLE IF NOT EXISTS {database}.agg_activity (
  tenant_id            String,
  subject_kind         Enum8('account' = 1, 'party' = 2),
  subject_id           String,
  movement_id          String,
  direction            Enum8('in' = 1, 'out' = 2),
  occurred_ms          Int64,
  event_id             String,
  amount_value         Decimal(38, 0),
  amount_scale         UInt8,
  amount_asset         String,
  priced               UInt8,
  base_value           Decimal(38, 0),
  cash                 UInt8,
  counterparty         Nullable(String),
  counterparty_country Nullable(String),
  corridor             Nullable(String)
) ENGINE = ReplacingMergeTree()
ORDER BY (tenant_id, subject_kind, subject_id, movement_id, direction);

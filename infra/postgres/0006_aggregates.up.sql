-- The behavioural aggregates (platform/aggregates): one row per activity, that is one side of one
-- movement as one account or party sees it. Window stats, baselines and counterparty history are
-- computed at read time from these rows, so a late or redelivered movement needs no rework of
-- any precomputed bucket: writes stay one cheap insert per activity.

-- The key starts with the subject and its event time, so every window of one subject is an index
-- range scan; it ends with (movement, direction), so a redelivered activity conflicts and is
-- skipped (ON CONFLICT DO NOTHING). Amounts are integer minor units (numeric(38,0)), never
-- floats: amount_* as the customer sent it (roundness is judged on it), base_value in the
-- tenant's base asset, NULL when no FX rate was available (counted, never summed).
CREATE TABLE agg_activity (
  tenant_id             text NOT NULL,
  subject_kind          text NOT NULL CHECK (subject_kind IN ('account', 'party')),
  subject_id            text NOT NULL,
  occurred_at           timestamptz NOT NULL,
  movement_id           text NOT NULL,
  direction             text NOT NULL CHECK (direction IN ('in', 'out')),
  event_id              uuid NOT NULL,
  amount_value          numeric(38, 0) NOT NULL,
  amount_scale          smallint NOT NULL,
  amount_asset          text NOT NULL,
  base_value            numeric(38, 0),
  cash                  boolean NOT NULL,
  counterparty          text,
  counterparty_country  text,
  corridor              text,
  PRIMARY KEY (tenant_id, subject_kind, subject_id, occurred_at, movement_id, direction)
);

-- A subject's history with one counterparty: when it was first seen (first-seen counterparties of
-- a window look up each counterparty's earliest row here), last seen, how often and how much.
CREATE INDEX agg_activity_counterparty ON agg_activity (tenant_id, subject_kind, subject_id, counterparty, occurred_at)
  WHERE counterparty IS NOT NULL;

-- Records a consumer group could not process: each failed alone, after a bounded number of
-- attempts, with an error that was not transient. The group moved on past it, so one poison record
-- never stalls its partition (nor the other tenants' records behind it); an operator lists,
-- replays (after a fix) or discards them with `svc deadletters`. The record is kept as the handler
-- saw it (key, value bytes, headers), on either bus.
CREATE TABLE parked_records (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id     text NOT NULL,
  group_name    text NOT NULL,
  topic         text NOT NULL,
  partition     integer NOT NULL,
  record_offset text NOT NULL,
  event_id      uuid,
  record_key    text NOT NULL,
  value         bytea NOT NULL,
  headers       jsonb NOT NULL,
  error         text NOT NULL,
  attempts      integer NOT NULL CHECK (attempts > 0),
  status        text NOT NULL DEFAULT 'parked' CHECK (status IN ('parked', 'replay_requested', 'replayed', 'discarded')),
  parked_at     timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  UNIQUE (group_name, topic, partition, record_offset)
);
-- What is still open, per group: the replay loops' and the counts' reads.
CREATE INDEX parked_records_open ON parked_records (group_name, status, id) WHERE status IN ('parked', 'replay_requested');

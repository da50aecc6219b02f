-- Canonical change records ride on the same log as accepted events. An inbox record's value is
-- its event's raw bytes (read from inbox_events); a change record carries its own payload. The
-- stream (the topic's first segment) keeps each consumer group's scan to its own records.
ALTER TABLE outbox
  ADD COLUMN payload text,
  ADD COLUMN stream text GENERATED ALWAYS AS (split_part(topic, '.', 1)) STORED;
DROP INDEX outbox_log;
CREATE INDEX outbox_log ON outbox (stream, partition, writer_xid, position);
